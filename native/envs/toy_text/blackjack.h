// Blackjack-v1: Gymnasium's blackjack (Sutton & Barto, example 5.1) with natural and sab, drawing
// cards from an infinite deck in the same order as gymnasium's blackjack.py.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"

namespace pp::toy_text {

inline Config BlackjackDefaults() {
  // Gymnasium registers Blackjack-v1 with sab=True, natural=False and no time limit.
  return Config{{"max_episode_steps", int64_t{0}}, {"natural", false}, {"sab", true}};
}

// Observation: Tuple(Discrete(32), Discrete(11), Discrete(2)) = (player sum, dealer's card, usable
// ace), declared as the fields obs:0, obs:1, obs:2.
inline EnvSpec BlackjackSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  EnvSpec spec;
  spec.state = {Discrete("obs:0", 32), Discrete("obs:1", 11), Discrete("obs:2", 2)};
  spec.action = {Discrete("action", 2)};  // 0: stick, 1: hit
  return spec;
}

class BlackjackEnv final : public Env {
 public:
  BlackjackEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        sum_index_(spec.StateIndex("obs:0")),
        dealer_index_(spec.StateIndex("obs:1")),
        ace_index_(spec.StateIndex("obs:2")),
        action_index_(spec.ActionIndex("action")),
        natural_(spec.config.GetBool("natural")),
        sab_(spec.config.GetBool("sab")) {}

  void Reset() override {
    dealer_ = {DrawCard(), DrawCard()};
    player_ = {DrawCard(), DrawCard()};
    // Gymnasium then draws the dealer's card's suit (for render) and, for a 10, its face: draws
    // that move the stream, so they are made here too.
    np_random().Choice(4);
    if (dealer_[0] == 10) np_random().Choice(3);
    WriteObs();
  }

  StepResult Step(const Action& action) override {
    const int64_t a = action.Get<int64_t>(action_index_)[0];
    double reward = 0.0;
    bool terminated = false;
    if (a != 0) {  // hit
      player_.push_back(DrawCard());
      if (SumHand(player_) > 21) {
        terminated = true;
        reward = -1.0;
      }
    } else {  // stick: the dealer plays out the hand, then the scores compare
      terminated = true;
      while (SumHand(dealer_) < 17) dealer_.push_back(DrawCard());
      const int player = Score(player_), dealer = Score(dealer_);
      reward = static_cast<double>(player > dealer) - static_cast<double>(player < dealer);
      if (sab_ && IsNatural(player_) && !IsNatural(dealer_)) {
        reward = 1.0;
      } else if (!sab_ && natural_ && IsNatural(player_) && reward == 1.0) {
        reward = 1.5;
      }
    }
    WriteObs();
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 private:
  // np_random.choice(deck) of deck = [1..9, 10, 10, 10, 10].
  int DrawCard() {
    static constexpr int kDeck[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10};
    return kDeck[np_random().Choice(13)];
  }
  static bool UsableAce(const std::vector<int>& hand) {
    const int sum = std::accumulate(hand.begin(), hand.end(), 0);
    return std::find(hand.begin(), hand.end(), 1) != hand.end() && sum + 10 <= 21;
  }
  static int SumHand(const std::vector<int>& hand) {
    return std::accumulate(hand.begin(), hand.end(), 0) + (UsableAce(hand) ? 10 : 0);
  }
  static int Score(const std::vector<int>& hand) { return SumHand(hand) > 21 ? 0 : SumHand(hand); }
  static bool IsNatural(const std::vector<int>& hand) {
    return hand.size() == 2 && std::min(hand[0], hand[1]) == 1 && std::max(hand[0], hand[1]) == 10;
  }

  void WriteObs() {
    Slot out = Allocate();
    out.Get<int64_t>(sum_index_)[0] = SumHand(player_);
    out.Get<int64_t>(dealer_index_)[0] = dealer_[0];
    out.Get<int64_t>(ace_index_)[0] = UsableAce(player_) ? 1 : 0;
  }

  const int sum_index_;
  const int dealer_index_;
  const int ace_index_;
  const int action_index_;
  const bool natural_;
  const bool sab_;
  std::vector<int> dealer_;
  std::vector<int> player_;
};

}  // namespace pp::toy_text
