// MountainCarContinuous-v0: Gymnasium's mountain car with a continuous force in [-1, 1].
// Same spaces, dynamics, reward, termination, reset draws and rgb_array frames as
// gymnasium/envs/classic_control/continuous_mountain_car.py.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/classic_control/mountain_car.h"

namespace pp::classic_control {

// The discrete car's track, speed limit, gravity, reset range and screen; its own goal, force and
// reward, as Continuous_MountainCarEnv.
struct MountainCarContinuousParams : MountainCarParams {
  static constexpr double kMinAction = -1.0;
  static constexpr double kMaxAction = 1.0;
  static constexpr double kGoalPosition = 0.45;
  static constexpr double kPower = 0.0015;
  static constexpr double kGoalReward = 100.0;
  static constexpr double kActionCost = 0.1;  // reward -= action^2 * 0.1
};

// Config: goal_velocity (float); max_episode_steps is set per task id by the registration.
inline Config MountainCarContinuousDefaults(int64_t max_episode_steps) {
  return Config{{"max_episode_steps", max_episode_steps}, {"goal_velocity", 0.0}};
}

inline EnvSpec MountainCarContinuousSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  using P = MountainCarContinuousParams;
  return MountainCarSpecWith<P>(Box("action", Dtype::kFloat32, {1}, {P::kMinAction}, {P::kMaxAction}));
}

// Gymnasium's step mixes NumPy float32 scalars with Python floats. Under NumPy 2's promotion rules
// (NEP 50) a Python float meeting a float32 is cast to float32 and the operation runs in float32,
// while float64 state (right after reset) keeps float64. This env tracks which of the three a value
// is -- float32, float64, or a Python float (a clip bound) -- and does each operation at that
// precision, so it agrees with Gymnasium to the bit rather than to a float32 rounding.
class MountainCarContinuousEnv final : public MountainCarBase {
 public:
  MountainCarContinuousEnv(const EnvSpec& spec, int env_id) : MountainCarBase(spec, env_id) {}

  void Reset() override {
    ResetState();
    state_is_float32_ = false;  // Gymnasium's reset state is a float64 array
    WriteObs();
  }

  StepResult Step(const Action& action) override {
    using P = MountainCarContinuousParams;
    const float a = action.Get<float>(action_index_)[0];

    // force = min(max(action, -1.0), 1.0): the float32 action, or the Python-float bound it hit.
    // velocity += force * power - 0.0025 * cos(3 * position)
    const double cos_arg =
        state_is_float32_ ? static_cast<double>(3.0f * static_cast<float>(position_)) : 3 * position_;
    const double gravity_term = P::kGravity * std::cos(cos_arg);  // a Python float
    double increment;
    if (a >= static_cast<float>(P::kMinAction) && a <= static_cast<float>(P::kMaxAction)) {
      const float force_term = a * static_cast<float>(P::kPower);
      increment = force_term - static_cast<float>(gravity_term);  // float32 arithmetic
    } else {
      const double force = a < static_cast<float>(P::kMinAction) ? P::kMinAction : P::kMaxAction;
      increment = force * P::kPower - gravity_term;  // Python floats: float64 arithmetic
    }
    Value velocity = state_is_float32_ ? Value{Add32(velocity_, increment), Kind::kFloat32}
                                       : Value{velocity_ + increment, Kind::kFloat64};
    if (Greater(velocity, P::kMaxSpeed)) velocity = {P::kMaxSpeed, Kind::kPython};
    if (Less(velocity, -P::kMaxSpeed)) velocity = {-P::kMaxSpeed, Kind::kPython};

    Value position = state_is_float32_ ? Value{Add32(position_, velocity.v), Kind::kFloat32}
                                       : Value{position_ + velocity.v, Kind::kFloat64};
    if (Greater(position, P::kMaxPosition)) position = {P::kMaxPosition, Kind::kPython};
    if (Less(position, P::kMinPosition)) position = {P::kMinPosition, Kind::kPython};
    if (Equal(position, P::kMinPosition) && velocity.v < 0) velocity = {0.0, Kind::kPython};

    const bool terminated = GreaterEqual(position, P::kGoalPosition) && GreaterEqual(velocity, goal_velocity_);
    double reward = terminated ? P::kGoalReward : 0.0;
    // Gymnasium charges the unclipped action: math.pow(action[0], 2) * 0.1, in float64.
    reward -= static_cast<double>(a) * static_cast<double>(a) * P::kActionCost;

    // self.state = np.array([position, velocity], dtype=np.float32)
    position_ = static_cast<float>(position.v);
    velocity_ = static_cast<float>(velocity.v);
    state_is_float32_ = true;
    WriteObs();
    return StepResult{reward, terminated, TimeLimitReached()};
  }

  // The same frame as MountainCar's, with this task's goal; float32 coordinates once a step has made
  // the state a float32 array.
  void Render(uint8_t* rgb) override {
    RenderMountainCar(rgb, position_, state_is_float32_, MountainCarContinuousParams::kGoalPosition);
  }

 private:
  enum class Kind { kFloat32, kFloat64, kPython };
  struct Value {
    double v;
    Kind kind;
  };
  // float32 + (float32 or Python float): the other operand is cast to float32 first.
  static double Add32(double a, double b) { return static_cast<float>(a) + static_cast<float>(b); }
  // A float32 compared with a Python float compares in float32; anything else in float64.
  static bool Greater(const Value& x, double y) {
    return x.kind == Kind::kFloat32 ? static_cast<float>(x.v) > static_cast<float>(y) : x.v > y;
  }
  static bool Less(const Value& x, double y) {
    return x.kind == Kind::kFloat32 ? static_cast<float>(x.v) < static_cast<float>(y) : x.v < y;
  }
  static bool Equal(const Value& x, double y) {
    return x.kind == Kind::kFloat32 ? static_cast<float>(x.v) == static_cast<float>(y) : x.v == y;
  }
  static bool GreaterEqual(const Value& x, double y) {
    return x.kind == Kind::kFloat32 ? static_cast<float>(x.v) >= static_cast<float>(y) : x.v >= y;
  }

  bool state_is_float32_ = false;
};

}  // namespace pp::classic_control
