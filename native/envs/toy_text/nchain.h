// NChain-v0: EnvPool's n-chain (Strens 2000, gym's old toy_text/nchain.py with its defaults): a
// chain of 5 states; "forward" moves up the chain, paying 10 at its end; "backward" pays 2 and
// returns to the start; with probability 0.2 the other action happens.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"

namespace pp::toy_text {

// EnvPool's NChain has no kwargs but its 1,000-step time limit: the chain is fixed.
struct NChain {
  static constexpr int kNumStates = 5;
  static constexpr double kSlip = 0.2;
  static constexpr double kSmallReward = 2.0;   // for "backward"
  static constexpr double kLargeReward = 10.0;  // for "forward" at the chain's end
  static constexpr int64_t kMaxEpisodeSteps = 1000;
};

inline Config NChainDefaults() { return Config{{"max_episode_steps", NChain::kMaxEpisodeSteps}}; }

// Observation: the state, Discrete(5). Action: 0 forward, 1 backward.
inline EnvSpec NChainSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  EnvSpec spec;
  spec.state = {Discrete("obs", NChain::kNumStates)};
  spec.action = {Discrete("action", 2)};
  return spec;
}

class NChainEnv final : public Env {
 public:
  NChainEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id), obs_index_(spec.StateIndex("obs")), action_index_(spec.ActionIndex("action")) {}

  void Reset() override {
    state_ = 0;
    Write();
  }

  // The episode never ends but at the time limit (truncated).
  StepResult Step(const Action& action) override {
    int64_t a = action.Get<int64_t>(action_index_)[0];
    // One uniform draw per step (np_random().random()); below kSlip the action is swapped.
    if (np_random().Random() < NChain::kSlip) a = 1 - a;
    double reward = 0.0;
    if (a == 1) {
      reward = NChain::kSmallReward;
      state_ = 0;
    } else if (state_ < NChain::kNumStates - 1) {
      ++state_;
    } else {
      reward = NChain::kLargeReward;
    }
    Write();
    return StepResult{reward, false, TimeLimitReached()};
  }

 private:
  void Write() {
    Slot out = Allocate();
    *out.Get<int64_t>(obs_index_) = state_;
  }

  const int obs_index_;
  const int action_index_;
  int64_t state_ = 0;
};

}  // namespace pp::toy_text
