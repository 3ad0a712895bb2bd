// Pendulum-v1: Gymnasium's torque-limited inverted pendulum swing-up, observed as (cos, sin, velocity).
// Same spaces, dynamics and cost as gymnasium/envs/classic_control/pendulum.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"

namespace pp::classic_control {

struct PendulumParams {
  static constexpr double kPi = 3.14159265358979323846;  // np.pi
  static constexpr double kMaxSpeed = 8;
  static constexpr double kMaxTorque = 2.0;
  static constexpr double kDt = 0.05;
  static constexpr double kMass = 1.0;
  static constexpr double kLength = 1.0;
  // Initial angle ~ U(-pi, pi), angular velocity ~ U(-1, 1).
  static constexpr double kResetAngle = kPi;
  static constexpr double kResetVelocity = 1.0;
};

// Config: g (float, gravity); max_episode_steps is set per task id by the registration.
inline Config PendulumDefaults(int64_t max_episode_steps) {
  return Config{{"max_episode_steps", max_episode_steps}, {"g", 10.0}};
}

inline EnvSpec PendulumSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  using P = PendulumParams;
  EnvSpec spec;
  spec.state = {Box("obs", Dtype::kFloat32, {3}, {-1.0, -1.0, -P::kMaxSpeed}, {1.0, 1.0, P::kMaxSpeed})};
  spec.action = {Box("action", Dtype::kFloat32, {1}, {-P::kMaxTorque}, {P::kMaxTorque})};
  return spec;
}

class PendulumEnv final : public Env {
 public:
  PendulumEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        g_(spec.config.GetFloat("g")) {}

  void Reset() override {
    using P = PendulumParams;
    // self.np_random.uniform(low=-high, high=high) with high = [pi, 1]: one draw per element, in order.
    th_ = np_random().Uniform(-P::kResetAngle, P::kResetAngle);
    thdot_ = np_random().Uniform(-P::kResetVelocity, P::kResetVelocity);
    WriteObs();
  }

  StepResult Step(const Action& action) override {
    using P = PendulumParams;
    // u = np.clip(u, -max_torque, max_torque)[0] stays float32; under NumPy 2 (NEP 50) a Python
    // float times it is float32 arithmetic too, hence the float terms below.
    const float u = std::clamp(action.Get<float>(action_index_)[0], static_cast<float>(-P::kMaxTorque),
                               static_cast<float>(P::kMaxTorque));
    const float torque_cost = 0.001f * NumpySquare(u);  // 0.001 * (u**2)
    const double costs =
        NumpySquare(AngleNormalize(th_)) + 0.1 * NumpySquare(thdot_) + static_cast<double>(torque_cost);

    const float torque_acc = static_cast<float>(3.0 / (P::kMass * (P::kLength * P::kLength))) * u;
    double newthdot = thdot_ + (3 * g_ / (2 * P::kLength) * std::sin(th_) + static_cast<double>(torque_acc)) * P::kDt;
    newthdot = std::clamp(newthdot, -P::kMaxSpeed, P::kMaxSpeed);
    th_ = th_ + newthdot * P::kDt;
    thdot_ = newthdot;
    WriteObs();
    return StepResult{-costs, false, TimeLimitReached()};
  }

 private:
  // NumPy evaluates a scalar `x**2` with libm's pow()/powf(), which is not always correctly rounded
  // (one ulp off x*x in about 0.1% of cases). The exponent is volatile so the compiler cannot fold
  // pow(x, 2) into x*x and the cost matches Gymnasium's to the bit.
  template <typename T>
  static T NumpySquare(T x) {
    volatile T exponent = 2;
    return std::pow(x, static_cast<T>(exponent));
  }

  // ((x + pi) % (2 * pi)) - pi with NumPy's float64 `%` (the result takes the divisor's sign).
  static double AngleNormalize(double x) {
    using P = PendulumParams;
    const double divisor = 2 * P::kPi;
    double mod = std::fmod(x + P::kPi, divisor);
    if (mod != 0.0) {
      if ((divisor < 0) != (mod < 0)) mod += divisor;
    } else {
      mod = std::copysign(0.0, divisor);
    }
    return mod - P::kPi;
  }

  void WriteObs() {
    Slot out = Allocate();
    float* obs = out.Get<float>(obs_index_);
    obs[0] = static_cast<float>(std::cos(th_));
    obs[1] = static_cast<float>(std::sin(th_));
    obs[2] = static_cast<float>(thdot_);
  }

  const int obs_index_;
  const int action_index_;
  const double g_;
  double th_ = 0.0;     // angle, radians, 0 = upright; not wrapped (as in Gymnasium)
  double thdot_ = 0.0;  // angular velocity
};

}  // namespace pp::classic_control
