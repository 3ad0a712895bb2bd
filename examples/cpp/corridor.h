// The example's own env: a corridor of `length` cells; the agent starts in a random cell, moves
// left (0) or right (1), and the episode ends with reward 1 when it reaches the right end.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/env.h"
#include "core/registry.h"
#include "core/task_maker.h"

namespace corridor {

class Corridor final : public pp::Env {
 public:
  static pp::EnvSpec MakeSpec(const std::string& /*task_id*/, const pp::Config& config) {
    const auto length = static_cast<double>(config.GetInt("length"));
    pp::EnvSpec spec;
    spec.state.push_back(pp::Box("obs", pp::Dtype::kFloat32, {1}, {0.0}, {length - 1}));
    spec.action.push_back(pp::Discrete("action", 2));
    return spec;
  }

  Corridor(const pp::EnvSpec& spec, int env_id)
      : pp::Env(spec, env_id),
        obs_(spec.StateIndex("obs")),
        action_(spec.ActionIndex("action")),
        length_(spec.config.GetInt("length")) {}

  void Reset() override {
    position_ = rng().UniformInt(0, length_ - 2);
    Write();
  }

  pp::StepResult Step(const pp::Action& action) override {
    position_ += action.Get<int64_t>(action_)[0] == 1 ? 1 : -1;
    if (position_ < 0) position_ = 0;
    Write();
    const bool arrived = position_ == length_ - 1;
    return {arrived ? 1.0 : 0.0, arrived, !arrived && TimeLimitReached()};
  }

 private:
  void Write() { *Allocate().Get<float>(obs_) = static_cast<float>(position_); }

  const int obs_, action_;
  const int64_t length_;
  int64_t position_ = 0;
};

inline void RegisterCorridor(pp::Registry& registry) {
  registry.Add(pp::MakeTask<Corridor>("Corridor-v0", "example",
                                      pp::Config{{"max_episode_steps", int64_t{50}}, {"length", int64_t{8}}},
                                      Corridor::MakeSpec));
}

}  // namespace corridor
