// What the grid toy-text envs (FrozenLake, Taxi, CliffWalking) share: Gymnasium's transition
// table P[s][a] = [(prob, next_state, reward, terminated), ...] and its categorical_sample.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/numpy_random.h"

namespace pp::toy_text {

struct Transition {
  double prob;
  int64_t next_state;
  double reward;
  bool terminated;
};

// P as Gymnasium builds it, entries in its order (the order decides which one a draw picks).
class TransitionTable {
 public:
  TransitionTable(int num_states, int num_actions)
      : num_actions_(num_actions), entries_(static_cast<std::size_t>(num_states) * num_actions) {}

  void Add(int64_t state, int action, Transition t) { At(state, action).push_back(t); }
  const std::vector<Transition>& Get(int64_t state, int64_t action) const {
    return entries_[static_cast<std::size_t>(state * num_actions_ + action)];
  }
  int num_states() const { return static_cast<int>(entries_.size()) / num_actions_; }
  int num_actions() const { return num_actions_; }

  // Rows of (state, action, prob, next_state, reward, terminated): the spec's "P" table, from
  // which Python rebuilds Gymnasium's dict (parallel_pool.spec.EnvSpec.transition_table).
  std::vector<double> Flatten() const {
    std::vector<double> out;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      for (const Transition& t : entries_[i]) {
        out.insert(out.end(), {static_cast<double>(i / num_actions_), static_cast<double>(i % num_actions_), t.prob,
                               static_cast<double>(t.next_state), t.reward, t.terminated ? 1.0 : 0.0});
      }
    }
    return out;
  }

 private:
  std::vector<Transition>& At(int64_t state, int action) {
    return entries_[static_cast<std::size_t>(state * num_actions_ + action)];
  }
  int num_actions_;
  std::vector<std::vector<Transition>> entries_;
};

// gymnasium.envs.toy_text.utils.categorical_sample: np.argmax(np.cumsum(p) > random()), one draw;
// the cumulative sum adds left to right, and when no entry exceeds the draw argmax gives 0.
inline int CategoricalSample(const std::vector<Transition>& transitions, NumpyGenerator& rng) {
  const double u = rng.Random();
  double cumulative = 0.0;
  for (std::size_t i = 0; i < transitions.size(); ++i) {
    cumulative += transitions[i].prob;
    if (cumulative > u) return static_cast<int>(i);
  }
  return 0;
}

// The same over a fixed distribution (the initial states), its cumulative sum computed once.
class InitialStates {
 public:
  explicit InitialStates(const std::vector<double>& weights) {
    double total = 0.0;  // the weights are counts: their sum is exact in any order
    for (double w : weights) total += w;
    double cumulative = 0.0;
    for (double w : weights) {
      cumulative += w / total;  // initial_state_distrib /= sum, then np.cumsum
      cumulative_.push_back(cumulative);
    }
  }
  int64_t Sample(NumpyGenerator& rng) const {
    const double u = rng.Random();
    for (std::size_t i = 0; i < cumulative_.size(); ++i) {
      if (cumulative_[i] > u) return static_cast<int64_t>(i);
    }
    return 0;
  }

 private:
  std::vector<double> cumulative_;
};

// The spec's copy of a table, read back by every env of the pool (built once per spec).
inline TransitionTable TableFromFlat(const std::vector<double>& flat, int num_states, int num_actions) {
  TransitionTable table(num_states, num_actions);
  for (std::size_t i = 0; i + 6 <= flat.size(); i += 6) {
    table.Add(static_cast<int64_t>(flat[i]), static_cast<int>(flat[i + 1]),
              Transition{flat[i + 2], static_cast<int64_t>(flat[i + 3]), flat[i + 4], flat[i + 5] != 0.0});
  }
  return table;
}

}  // namespace pp::toy_text
