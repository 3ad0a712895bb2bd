// What the toy-text envs share as envs. ArtEnv: render() in the installed Gymnasium's art (its
// sprites differ between 1.1-1.3 and 1.4; sprites.h). GridTableEnv (FrozenLake, CliffWalking,
// Taxi): the state as obs with info:prob, each step drawn from Gymnasium's transition table, and
// the last action, which the sprites face.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/env.h"
#include "core/spec.h"
#include "envs/toy_text/sprites.h"
#include "envs/toy_text/tabular.h"

namespace pp::toy_text {

class ArtEnv : public Env {
 public:
  // The env's rgb_array frame, in the installed Gymnasium's art.
  void Render(uint8_t* rgb) override {
    if (sheet_->art() == Art::kGymnasium1_4) {
      Render14(rgb);
    } else {
      Render11(rgb);
    }
  }

 protected:
  ArtEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet) : Env(spec, env_id), sheet_(std::move(sheet)) {}
  virtual void Render11(uint8_t* rgb) = 0;  // Gymnasium 1.1-1.3's art
  virtual void Render14(uint8_t* rgb) = 0;  // Gymnasium 1.4's

  const SpriteSheetPtr sheet_;
};

class GridTableEnv : public ArtEnv {
 protected:
  GridTableEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet)
      : ArtEnv(spec, env_id, std::move(sheet)),
        obs_index_(spec.StateIndex("obs")),
        prob_index_(spec.StateIndex("info:prob")),
        action_index_(spec.ActionIndex("action")) {}

  // The action's transition from state_, drawn as Gymnasium's categorical_sample; the action
  // becomes last_action_. The caller moves state_.
  const Transition& Draw(const TransitionTable& table, const Action& action) {
    const int64_t a = action.Get<int64_t>(action_index_)[0];
    const std::vector<Transition>& options = table.Get(state_, a);
    last_action_ = static_cast<int>(a);
    return options[static_cast<std::size_t>(CategoricalSample(options, np_random()))];
  }

  // A step of `table`: to the drawn transition's state, with its reward and termination.
  StepResult TableStep(const TransitionTable& table, const Action& action) {
    const Transition& t = Draw(table, action);
    state_ = t.next_state;
    Write(t.prob);
    return StepResult{t.reward, t.terminated, TimeLimitReached()};
  }

  // Writes obs (state_) and info:prob; returns the row, for a task's further fields.
  Slot Write(double prob) {
    Slot out = Allocate();
    out.Get<int64_t>(obs_index_)[0] = state_;
    out.Get<double>(prob_index_)[0] = prob;
    return out;
  }

  const int obs_index_;
  const int prob_index_;
  const int action_index_;
  int64_t state_ = 0;
  int last_action_ = -1;  // Gymnasium's lastaction, -1 for None
};

}  // namespace pp::toy_text
