// MountainCar-v0: Gymnasium's under-powered car in a valley (Moore 1990), 3 discrete pushes.
// Same spaces, float64 dynamics, reward and termination as gymnasium/envs/classic_control/mountain_car.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"

namespace pp::classic_control {

struct MountainCarParams {
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;
  static constexpr double kGoalPosition = 0.5;
  static constexpr double kForce = 0.001;
  static constexpr double kGravity = 0.0025;
  // Initial position ~ U(-0.6, -0.4), velocity 0.
  static constexpr double kResetLow = -0.6;
  static constexpr double kResetHigh = -0.4;
};

// Config: goal_velocity (float); max_episode_steps is set per task id by the registration.
inline Config MountainCarDefaults(int64_t max_episode_steps) {
  return Config{{"max_episode_steps", max_episode_steps}, {"goal_velocity", 0.0}};
}

inline EnvSpec MountainCarSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  using P = MountainCarParams;
  EnvSpec spec;
  // Gymnasium stores the bounds as float32.
  spec.state = {Box("obs", Dtype::kFloat32, {2},
                    {static_cast<float>(P::kMinPosition), static_cast<float>(-P::kMaxSpeed)},
                    {static_cast<float>(P::kMaxPosition), static_cast<float>(P::kMaxSpeed)})};
  spec.action = {Discrete("action", 3)};  // 0: push left, 1: no push, 2: push right
  return spec;
}

class MountainCarEnv final : public Env {
 public:
  MountainCarEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        goal_velocity_(spec.config.GetFloat("goal_velocity")) {}

  void Reset() override {
    using P = MountainCarParams;
    position_ = np_random().Uniform(P::kResetLow, P::kResetHigh);  // self.np_random.uniform(low=-0.6, high=-0.4)
    velocity_ = 0.0;
    WriteObs();
  }

  StepResult Step(const Action& action) override {
    using P = MountainCarParams;
    const int64_t a = action.Get<int64_t>(action_index_)[0];

    // velocity += (action - 1) * force + cos(3 * position) * (-gravity), in float64.
    velocity_ += static_cast<double>(a - 1) * P::kForce + std::cos(3 * position_) * (-P::kGravity);
    velocity_ = std::clamp(velocity_, -P::kMaxSpeed, P::kMaxSpeed);
    position_ += velocity_;
    position_ = std::clamp(position_, P::kMinPosition, P::kMaxPosition);
    if (position_ == P::kMinPosition && velocity_ < 0) velocity_ = 0.0;  // inelastic left wall

    const bool terminated = position_ >= P::kGoalPosition && velocity_ >= goal_velocity_;
    WriteObs();
    return StepResult{-1.0, terminated, TimeLimitReached()};
  }

 private:
  void WriteObs() {
    Slot out = Allocate();
    float* obs = out.Get<float>(obs_index_);
    obs[0] = static_cast<float>(position_);
    obs[1] = static_cast<float>(velocity_);
  }

  const int obs_index_;
  const int action_index_;
  const double goal_velocity_;
  double position_ = 0.0;
  double velocity_ = 0.0;
};

}  // namespace pp::classic_control
