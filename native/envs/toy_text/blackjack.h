// Blackjack-v1: Gymnasium's blackjack (Sutton & Barto, example 5.1) with natural and sab, drawing
// cards from an infinite deck in the same order as gymnasium's blackjack.py.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pygame_raster.h"
#include "envs/common/pygame_text.h"
#include "envs/toy_text/sprites.h"
#include "envs/toy_text/toy_text_env.h"

namespace pp::toy_text {

inline Config BlackjackDefaults() {
  // Gymnasium registers Blackjack-v1 with sab=True, natural=False and no time limit.
  return Config{{"max_episode_steps", int64_t{0}}, {"natural", false}, {"sab", true}};
}

// Observation: Tuple(Discrete(32), Discrete(11), Discrete(2)) = (player sum, dealer's card, usable
// ace), declared as the fields obs:0, obs:1, obs:2.
inline EnvSpec BlackjackSpec(const std::string& /*task_id*/, const Config& /*config*/, Art art) {
  EnvSpec spec;
  spec.state = {Discrete("obs:0", 32), Discrete("obs:1", 11), Discrete("obs:2", 2)};
  spec.action = {Discrete("action", 2)};  // 0: stick, 1: hit
  // BlackjackEnv.render's screen: 600 x 500 in Gymnasium 1.1-1.3, SCREEN_SIZE 384 x 376 in 1.4.
  spec.render_shape = art == Art::kGymnasium1_4 ? std::vector<int>{376, 384, 3} : std::vector<int>{500, 600, 3};
  spec.render_fps = 4;
  return spec;
}

class BlackjackEnv final : public ArtEnv {
 public:
  BlackjackEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet)
      : ArtEnv(spec, env_id, std::move(sheet)),
        sum_index_(spec.StateIndex("obs:0")),
        dealer_index_(spec.StateIndex("obs:1")),
        ace_index_(spec.StateIndex("obs:2")),
        action_index_(spec.ActionIndex("action")),
        natural_(spec.config.GetBool("natural")),
        sab_(spec.config.GetBool("sab")) {}

  void Reset() override {
    dealer_ = {DrawCard(), DrawCard()};
    player_ = {DrawCard(), DrawCard()};
    // Gymnasium then draws the dealer's card's suit (C, D, H, S) and, for a 10, its face (J, Q, K):
    // render() shows that card.
    dealer_suit_ = static_cast<int>(np_random().Choice(4));
    dealer_face_ = dealer_[0] == 1    ? 0
                   : dealer_[0] == 10 ? 10 + static_cast<int>(np_random().Choice(3))
                                      : dealer_[0] - 1;
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
  // BlackjackEnv.render's rgb_array frame (ArtEnv::Render picks the art):
  // Gymnasium 1.1-1.3: the green table, "Dealer: <card>", the dealer's card and the face-down one,
  // "Player", the player's sum in the large font and "usable ace" if there is one. pygame's blit
  // returns the drawn rect (clipped to the screen): the layout follows its bottoms.
  void Render11(uint8_t* rgb) override {
    // A new (black) surface per frame, as LunarLander and BipedalWalker draw: no env holds a
    // window-sized surface between frames.
    raster::Surface surface(kScreenW, kScreenH);
    static constexpr raster::Rgb kWhite{255, 255, 255};
    // The fonts and cards come from the registration's sheet at this env's first frame (made once
    // per process there: 53 card PNGs and two fonts, ~0.3 s), so pools that never render skip them.
    if (!small_font_) {
      small_font_ = sheet_->Font("Minecraft.ttf", kScreenH / 15);
      large_font_ = sheet_->Font("Minecraft.ttf", kScreenH / 6);
      hidden_card_ = sheet_->Scaled("Card.png", kCardW, kCardH);
    }
    SpritePtr& card = cards_[static_cast<std::size_t>(dealer_suit_ * 13 + dealer_face_)];
    if (!card)
      card = sheet_->Scaled(std::string(1, kSuits[dealer_suit_]) + kValues[dealer_face_] + ".png", kCardW, kCardH);
    surface.Fill({7, 99, 36});
    auto bottom = [](int y, int height) { return std::min(y + height, kScreenH); };
    auto centered = [](const text::TextSurface& t) { return kScreenW / 2 - t.width / 2; };
    const text::TextSurface dealer_text = small_font_->Render("Dealer: " + std::to_string(dealer_[0]), kWhite);
    text::Blit(surface, dealer_text, kSpacing, kSpacing);
    const int card_y = bottom(kSpacing, dealer_text.height) + kSpacing;
    raster::Blit(surface, *card, kScreenW / 2 - kCardW - kSpacing / 2, card_y);
    raster::Blit(surface, *hidden_card_, kScreenW / 2 + kSpacing / 2, card_y);
    // (spacing, bottom + 1.5 * spacing): blit truncates the float 37.5 offset's sum.
    const int player_y = bottom(card_y, kCardH) + kSpacing * 3 / 2;
    const text::TextSurface player_text = small_font_->Render("Player", kWhite);
    text::Blit(surface, player_text, kSpacing, player_y);
    const text::TextSurface sum_text = large_font_->Render(std::to_string(SumHand(player_)), kWhite);
    const int sum_y = bottom(player_y, player_text.height) + kSpacing;
    text::Blit(surface, sum_text, centered(sum_text), sum_y);
    if (UsableAce(player_)) {
      const text::TextSurface ace_text = small_font_->Render("usable ace", kWhite);
      text::Blit(surface, ace_text, centered(ace_text), bottom(sum_y, sum_text.height) + kSpacing / 2);
    }
    surface.WriteRgb(rgb, false, 0, kScreenW);
  }

  // Gymnasium 1.4's draw_table: the felt, the "DEALER" label and the dealer's card value in small
  // digits, the dealer's card and the face-down one, the "PLAYER" label, the player's sum in big
  // digits and the "USABLE ACE" label, both centred on the 4-pixel art grid. Every sprite at its own
  // size (the art is drawn at 4x).
  void Render14(uint8_t* rgb) override {
    // blackjack.py's layout constants (SCREEN_SIZE, *_POS, *_TOP, *_GAP), in pixels.
    static constexpr int kW = 384, kH = 376, kArtPixel = 4;
    static constexpr int kDealerLabelX = 40, kDealerLabelY = 32, kDealerCardX = 96, kHiddenCardX = 208, kCardY = 72;
    static constexpr int kPlayerLabelX = 40, kPlayerLabelY = 208, kPlayerSumTop = 248, kUsableAceTop = 328;
    static constexpr int kLabelDigitGap = 12, kSmallDigitGap = 4, kBigDigitGap = 12;
    static constexpr raster::Rgb kFelt{196, 216, 158};
    raster::Surface surface(kW, kH);
    auto load = [&](const std::string& name) { return sheet_->Image("blackjack/" + name + ".png"); };
    // blit_digits: the digits of `number` left to right, each followed by `gap` pixels.
    auto digits = [&](int number, const std::string& size, int gap, int x, int y) {
      for (char digit : std::to_string(number)) {
        const SpritePtr img = load("digit_" + size + "_" + digit);
        raster::Blit(surface, *img, x, y);
        x += img->width + gap;
      }
    };
    // centred_x, on the art's 4-pixel grid (every width here is below kW: no negative floor division).
    auto centred_x = [](int width) { return (kW - width) / 2 / kArtPixel * kArtPixel; };
    surface.Fill(kFelt);
    const SpritePtr dealer_label = load("label_dealer");
    raster::Blit(surface, *dealer_label, kDealerLabelX, kDealerLabelY);
    digits(dealer_[0], "small", kSmallDigitGap, kDealerLabelX + dealer_label->width + kLabelDigitGap, kDealerLabelY);
    const std::string card = std::string("card_") + kValues[dealer_face_] + kSuits[dealer_suit_];  // e.g. card_KS
    raster::Blit(surface, *load(card), kDealerCardX, kCardY);
    raster::Blit(surface, *load("card_back"), kHiddenCardX, kCardY);
    raster::Blit(surface, *load("label_player"), kPlayerLabelX, kPlayerLabelY);
    const int sum = SumHand(player_);
    const int num_digits = static_cast<int>(std::to_string(sum).size());
    const int sum_width = num_digits * load("digit_big_0")->width + (num_digits - 1) * kBigDigitGap;
    digits(sum, "big", kBigDigitGap, centred_x(sum_width), kPlayerSumTop);
    if (UsableAce(player_)) {
      const SpritePtr label = load("label_usable_ace");
      raster::Blit(surface, *label, centred_x(label->width), kUsableAceTop);
    }
    surface.WriteRgb(rgb, false, 0, kW);
  }

  // The screen (600 x 500) and its layout: cards a third of its height, 142:197 wide; spacing 25.
  static constexpr int kScreenW = 600, kScreenH = 500, kCardH = kScreenH / 3, kCardW = kCardH * 142 / 197,
                       kSpacing = kScreenH / 20;
  static constexpr char kSuits[4] = {'C', 'D', 'H', 'S'};
  // Card faces by index: A, 2..9, T (never drawn: a 10 is shown as J, Q or K), J, Q, K.
  static constexpr const char* kValues[13] = {"A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K"};

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
  int dealer_suit_ = 0;  // dealer_top_card_suit, an index into kSuits
  int dealer_face_ = 0;  // dealer_top_card_value_str, an index into kValues
  // Rendering only (Render runs while no step of this env does): the screen and what it is drawn
  // from, fetched from the shared, read-only sheet on first use.
  FontPtr small_font_, large_font_;
  SpritePtr hidden_card_;
  std::array<SpritePtr, 52> cards_;  // suit * 13 + face
};

}  // namespace pp::toy_text
