// MountainCar-v0: Gymnasium's under-powered car in a valley (Moore 1990), 3 discrete pushes.
// Same spaces, float64 dynamics, reward, termination, reset draws and rgb_array frames as
// gymnasium/envs/classic_control/mountain_car.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/numpy_trig.h"
#include "envs/common/pygame_raster.h"

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
  static constexpr int kScreenWidth = 600;
  static constexpr int kScreenHeight = 400;
};

// MountainCarEnv.render() and Continuous_MountainCarEnv.render() (the same code, with their goal
// positions) in rgb_array mode. `position_is_float32`: the position is a NumPy float32 (the
// continuous car's state after a step); the car's coordinates are then float32 arithmetic, as NumPy 2
// computes a Python float with a float32 (NEP 50), with NumPy's own float32 np.sin.
inline void RenderMountainCar(uint8_t* rgb, double position, bool position_is_float32, double goal_position) {
  using P = MountainCarParams;
  const double scale = P::kScreenWidth / (P::kMaxPosition - P::kMinPosition);
  constexpr double kCarWidth = 40, kCarHeight = 20, kClearance = 10;
  auto height = [](double xs) { return std::sin(3 * xs) * .45 + .55; };  // _height, float64
  raster::Surface surf(P::kScreenWidth, P::kScreenHeight);
  surf.Fill({255, 255, 255});

  // xs = np.linspace(min_position, max_position, 100): i * step + start, the last one exactly stop.
  constexpr int kTrackPoints = 100;
  const double step = (P::kMaxPosition - P::kMinPosition) / (kTrackPoints - 1);
  std::vector<raster::Point> track;
  for (int i = 0; i < kTrackPoints; ++i) {
    const double xs = i == kTrackPoints - 1 ? P::kMaxPosition : i * step + P::kMinPosition;
    track.push_back({(xs - P::kMinPosition) * scale, height(xs) * scale});
  }
  raster::AaLines(surf, {0, 0, 0}, false, track);

  const float pos32 = static_cast<float>(position);
  const raster::Rotation rotate(position_is_float32 ? std::cos(static_cast<double>(3 * pos32))
                                                    : std::cos(3 * position));
  // c[0] + (pos - min_position) * scale and c[1] + clearance + _height(pos) * scale for a rotated c.
  auto place = [&](raster::Point c) -> raster::Point {
    if (!position_is_float32)
      return {c.x + (position - P::kMinPosition) * scale, c.y + kClearance + height(position) * scale};
    const float scale32 = static_cast<float>(scale);
    const float along = (pos32 - static_cast<float>(P::kMinPosition)) * scale32;
    const float h = numpy_trig::Sin(3 * pos32) * 0.45f + 0.55f;
    return {static_cast<float>(c.x) + along, static_cast<float>(c.y + kClearance) + h * scale32};
  };
  const double l = -kCarWidth / 2, r = kCarWidth / 2, t = kCarHeight, b = 0;
  std::vector<raster::Point> car;
  for (const raster::Point c : {raster::Point{l, b}, {l, t}, {r, t}, {r, b}}) car.push_back(place(rotate(c)));
  raster::GfxAaFilledPolygon(surf, {0, 0, 0}, car);
  for (const raster::Point c : {raster::Point{kCarWidth / 4, 0}, {-kCarWidth / 4, 0}}) {
    const raster::Point wheel = place(rotate(c));
    const auto x = static_cast<int16_t>(static_cast<int>(wheel.x)), y = static_cast<int16_t>(static_cast<int>(wheel.y));
    const auto radius = static_cast<int16_t>(static_cast<int>(kCarHeight / 2.5));
    raster::GfxAaCircle(surf, {128, 128, 128}, x, y, radius);
    raster::GfxFilledCircle(surf, {128, 128, 128}, x, y, radius);
  }

  const int flagx = static_cast<int>((goal_position - P::kMinPosition) * scale);
  const int flagy1 = static_cast<int>(height(goal_position) * scale);
  const int flagy2 = flagy1 + 50;
  raster::GfxVerticalLine(surf, {0, 0, 0}, static_cast<int16_t>(flagx), static_cast<int16_t>(flagy1),
                          static_cast<int16_t>(flagy2));
  raster::GfxAaFilledPolygon(surf, {204, 204, 0},
                             {{static_cast<double>(flagx), static_cast<double>(flagy2)},
                              {static_cast<double>(flagx), static_cast<double>(flagy2 - 10)},
                              {static_cast<double>(flagx + 25), static_cast<double>(flagy2 - 5)}});
  surf.WriteRgb(rgb, /*flip_y=*/true, 0, P::kScreenWidth);
}

// Config: goal_velocity (float); max_episode_steps is set per task id by the registration.
inline Config MountainCarDefaults(int64_t max_episode_steps) {
  return Config{{"max_episode_steps", max_episode_steps}, {"goal_velocity", 0.0}};
}

// What both MountainCar tasks' specs hold: (position, velocity) observations within Gymnasium's
// bounds (stored as float32) from Params, `action`, and the frame (render_fps 30: their metadata).
// The bounds stay compile-time constants: GCC 12.2's -O2 vectorizer drops the float rounding of
// run-time doubles in such a pair of lists (native/envs/classic_control/classic_control_test.cc
// checks the bounds are float32 values).
template <typename Params>
EnvSpec MountainCarSpecWith(FieldSpec action) {
  using P = Params;
  EnvSpec spec;
  spec.state = {Box("obs", Dtype::kFloat32, {2},
                    {static_cast<float>(P::kMinPosition), static_cast<float>(-P::kMaxSpeed)},
                    {static_cast<float>(P::kMaxPosition), static_cast<float>(P::kMaxSpeed)})};
  spec.action = {std::move(action)};
  spec.render_shape = {MountainCarParams::kScreenHeight, MountainCarParams::kScreenWidth, 3};
  spec.render_fps = 30;
  return spec;
}

inline EnvSpec MountainCarSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  // 0: push left, 1: no push, 2: push right
  return MountainCarSpecWith<MountainCarParams>(Discrete("action", 3));
}

// Both MountainCar envs' state, reset and observation.
class MountainCarBase : public Env {
 protected:
  MountainCarBase(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        goal_velocity_(spec.config.GetFloat("goal_velocity")) {}

  // Gymnasium's reset state (without writing it).
  void ResetState() {
    using P = MountainCarParams;
    position_ = np_random().Uniform(P::kResetLow, P::kResetHigh);  // self.np_random.uniform(low=-0.6, high=-0.4)
    velocity_ = 0.0;
  }

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

class MountainCarEnv final : public MountainCarBase {
 public:
  MountainCarEnv(const EnvSpec& spec, int env_id) : MountainCarBase(spec, env_id) {}

  void Reset() override {
    ResetState();
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

  void Render(uint8_t* rgb) override { RenderMountainCar(rgb, position_, false, MountainCarParams::kGoalPosition); }
};

}  // namespace pp::classic_control
