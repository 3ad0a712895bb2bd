// CartPole-v0/v1: Gymnasium's cart-pole balancing task (Barto, Sutton & Anderson 1983).
// Same spaces, float64 Euler dynamics, reward and termination as gymnasium/envs/classic_control/cartpole.py.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"

namespace pp::classic_control {

// Physical constants of Gymnasium's CartPoleEnv; derived ones computed the same way it does, so the
// float64 values are identical.
struct CartPoleParams {
  static constexpr double kPi = 3.14159265358979323846;  // math.pi
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassPole + kMassCart;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;  // seconds between state updates
  static constexpr double kThetaThreshold = 12 * 2 * kPi / 360;
  static constexpr double kXThreshold = 2.4;
  static constexpr double kResetBound = 0.05;  // each state variable ~ U(-0.05, 0.05)
};

// Config: sutton_barto_reward (bool); max_episode_steps is set per task id by the registration.
inline Config CartPoleDefaults(int64_t max_episode_steps) {
  return Config{{"max_episode_steps", max_episode_steps}, {"sutton_barto_reward", false}};
}

inline EnvSpec CartPoleSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  using P = CartPoleParams;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Gymnasium builds `high` as a float32 array; these are its stored values.
  const double x_high = static_cast<float>(P::kXThreshold * 2);
  const double theta_high = static_cast<float>(P::kThetaThreshold * 2);
  EnvSpec spec;
  spec.state = {
      Box("obs", Dtype::kFloat32, {4}, {-x_high, -kInf, -theta_high, -kInf}, {x_high, kInf, theta_high, kInf})};
  spec.action = {Discrete("action", 2)};
  return spec;
}

class CartPoleEnv final : public Env {
 public:
  CartPoleEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        sutton_barto_reward_(spec.config.GetBool("sutton_barto_reward")) {}

  void Reset() override {
    using P = CartPoleParams;
    // self.np_random.uniform(low=-0.05, high=0.05, size=(4,))
    np_random().Uniform(-P::kResetBound, P::kResetBound, state_, 4);
    WriteObs();
  }

  StepResult Step(const Action& action) override {
    using P = CartPoleParams;
    const int64_t a = action.Get<int64_t>(action_index_)[0];
    double& x = state_[0];
    double& x_dot = state_[1];
    double& theta = state_[2];
    double& theta_dot = state_[3];

    // Same expressions, same association order as Gymnasium (all float64).
    const double force = a == 1 ? P::kForceMag : -P::kForceMag;
    const double costheta = std::cos(theta);
    const double sintheta = std::sin(theta);
    const double temp = (force + P::kPoleMassLength * (theta_dot * theta_dot) * sintheta) / P::kTotalMass;
    const double thetaacc = (P::kGravity * sintheta - costheta * temp) /
                            (P::kLength * (4.0 / 3.0 - P::kMassPole * (costheta * costheta) / P::kTotalMass));
    const double xacc = temp - P::kPoleMassLength * thetaacc * costheta / P::kTotalMass;
    // Gymnasium's default "euler" integrator: positions advance with the old velocities.
    x = x + P::kTau * x_dot;
    x_dot = x_dot + P::kTau * xacc;
    theta = theta + P::kTau * theta_dot;
    theta_dot = theta_dot + P::kTau * thetaacc;

    const bool terminated =
        x < -P::kXThreshold || x > P::kXThreshold || theta < -P::kThetaThreshold || theta > P::kThetaThreshold;
    double reward;
    if (sutton_barto_reward_) {
      reward = terminated ? -1.0 : 0.0;
    } else {
      reward = 1.0;
    }
    WriteObs();
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 private:
  void WriteObs() {
    Slot out = Allocate();
    float* obs = out.Get<float>(obs_index_);
    for (int i = 0; i < 4; ++i) obs[i] = static_cast<float>(state_[i]);
  }

  const int obs_index_;
  const int action_index_;
  const bool sutton_barto_reward_;
  double state_[4] = {0.0, 0.0, 0.0, 0.0};  // x, x_dot, theta, theta_dot
};

}  // namespace pp::classic_control
