// CliffWalking-v1 (and CliffWalkingSlippery-v1): Gymnasium's 4x12 cliff walk (Sutton & Barto,
// example 6.6), with is_slippery, the same transition table and draws as cliffwalking.py.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/toy_text/tabular.h"

namespace pp::toy_text {

struct CliffMap {
  static constexpr int kRows = 4, kCols = 12, kNumStates = kRows * kCols;
  static constexpr int64_t kStart = 3 * kCols;  // (3, 0)
  // Actions UP, RIGHT, DOWN, LEFT as (drow, dcol).
  static constexpr int kMoves[4][2] = {{-1, 0}, {0, 1}, {1, 0}, {0, -1}};
  static bool Cliff(int row, int col) { return row == 3 && col >= 1 && col <= kCols - 2; }
};

// CliffWalkingEnv._calculate_transition_prob for every state and action; slippery: the two
// perpendicular moves too, each of the three with probability 1/3.
inline TransitionTable CliffWalkingTable(bool slippery) {
  using M = CliffMap;
  TransitionTable table(M::kNumStates, 4);
  for (int s = 0; s < M::kNumStates; ++s) {
    const int row = s / M::kCols, col = s % M::kCols;
    for (int a = 0; a < 4; ++a) {
      const int moves[3] = {(a + 3) % 4, a, (a + 1) % 4};
      const int count = slippery ? 3 : 1;
      for (int k = 0; k < count; ++k) {
        const int m = slippery ? moves[k] : a;
        const int r = std::clamp(row + M::kMoves[m][0], 0, M::kRows - 1);
        const int c = std::clamp(col + M::kMoves[m][1], 0, M::kCols - 1);
        const double prob = 1.0 / count;
        if (M::Cliff(r, c)) {
          table.Add(s, a, {prob, M::kStart, -100.0, false});
        } else {
          table.Add(s, a, {prob, int64_t{r} * M::kCols + c, -1.0, r == M::kRows - 1 && c == M::kCols - 1});
        }
      }
    }
  }
  return table;
}

inline Config CliffWalkingDefaults(bool slippery) {
  // Gymnasium registers no time limit for either id.
  return Config{{"max_episode_steps", int64_t{0}}, {"is_slippery", slippery}};
}

inline EnvSpec CliffWalkingSpec(const std::string& /*task_id*/, const Config& config) {
  EnvSpec spec;
  spec.state = {Discrete("obs", CliffMap::kNumStates), Box("info:prob", Dtype::kFloat64, {})};
  spec.action = {Discrete("action", 4)};
  spec.tables["P"] = CliffWalkingTable(config.GetBool("is_slippery")).Flatten();
  return spec;
}

class CliffWalkingEnv final : public Env {
 public:
  CliffWalkingEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        prob_index_(spec.StateIndex("info:prob")),
        action_index_(spec.ActionIndex("action")),
        table_(TableFromFlat(spec.tables.at("P"), CliffMap::kNumStates, 4)),
        initial_(StartOnly()) {}

  void Reset() override {
    state_ = initial_.Sample(np_random());  // always the start, but it draws as Gymnasium does
    Write(1.0);
  }

  StepResult Step(const Action& action) override {
    const int64_t a = action.Get<int64_t>(action_index_)[0];
    const std::vector<Transition>& options = table_.Get(state_, a);
    const Transition& t = options[static_cast<std::size_t>(CategoricalSample(options, np_random()))];
    state_ = t.next_state;
    Write(t.prob);
    return StepResult{t.reward, t.terminated, TimeLimitReached()};
  }

 private:
  static std::vector<double> StartOnly() {
    std::vector<double> weights(CliffMap::kNumStates, 0.0);
    weights[CliffMap::kStart] = 1.0;
    return weights;
  }

  void Write(double prob) {
    Slot out = Allocate();
    out.Get<int64_t>(obs_index_)[0] = state_;
    out.Get<double>(prob_index_)[0] = prob;
  }

  const int obs_index_;
  const int prob_index_;
  const int action_index_;
  const TransitionTable table_;
  const InitialStates initial_;
  int64_t state_ = 0;
};

}  // namespace pp::toy_text
