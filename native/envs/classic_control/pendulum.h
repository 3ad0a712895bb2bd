// Pendulum-v1: Gymnasium's torque-limited inverted pendulum swing-up, observed as (cos, sin, velocity).
// Same spaces, dynamics, cost, reset draws and rgb_array frames as gymnasium/envs/classic_control/pendulum.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pygame_raster.h"
#include "envs/common/pygame_smoothscale.h"
#if defined(PP_CLASSIC_CONTROL_PNG)
#include "envs/common/png.h"  // needs zlib (CMakeLists.txt)
#endif

namespace pp::classic_control {

// Gymnasium's assets/clockwise.png, the arrow Pendulum's frames show the last torque with: read from
// the installed gymnasium (never copied here) at the first render() that draws it, decoded once and
// then shared read-only by the envs of every pool (which render on several threads at once).
class ClockwiseArrow {
 public:
  explicit ClockwiseArrow(std::string path) : path_(std::move(path)) {}

  // pygame.image.load(path) as a surface of a << 24 | r << 16 | g << 8 | b pixels: smoothscale
  // filters the four bytes alike, alpha included. Throws (each call, until it succeeds) if the file
  // cannot be read or decoded.
  // (A mutex, not std::call_once: libstdc++'s call_once can hang after a throw, GCC bug 66146.)
  const raster::Surface& Image() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!image_) {
#if defined(PP_CLASSIC_CONTROL_PNG)
      if (path_.empty()) throw std::runtime_error("Pendulum-v1 render(): no gymnasium assets folder was given");
      png::Image png = png::Load(path_);
      raster::Surface image(png.width, png.height);
      std::copy(png.argb.begin(), png.argb.end(), image.data());
      image_.emplace(std::move(image));
#else
      throw std::runtime_error("Pendulum-v1 render(): this build has no zlib to read " + path_ +
                               " with (Debian: apt-get install zlib1g-dev, then reinstall parallel_pool)");
#endif
    }
    return *image_;
  }

 private:
  const std::string path_;
  std::mutex mu_;
  std::optional<raster::Surface> image_;  // set once, never changed after
};

using ClockwiseArrowPtr = std::shared_ptr<ClockwiseArrow>;

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
  static constexpr int kScreenDim = 500;
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
  spec.render_shape = {P::kScreenDim, P::kScreenDim, 3};
  spec.render_fps = 30;  // PendulumEnv.metadata
  return spec;
}

class PendulumEnv final : public Env {
 public:
  // `v0`: gym 0.21's Pendulum-v0 (EnvPool's too), whose angle moves by the speed before it is
  // clipped to max_speed; Pendulum-v1 clips first.
  PendulumEnv(const EnvSpec& spec, int env_id, ClockwiseArrowPtr arrow, bool v0 = false)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        g_(spec.config.GetFloat("g")),
        v0_(v0),
        arrow_(std::move(arrow)) {}

  void Reset() override {
    using P = PendulumParams;
    // self.np_random.uniform(low=-high, high=high) with high = [pi, 1]: one draw per element, in order.
    th_ = np_random().Uniform(-P::kResetAngle, P::kResetAngle);
    thdot_ = np_random().Uniform(-P::kResetVelocity, P::kResetVelocity);
    last_u_.reset();  // self.last_u = None
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
    if (v0_) th_ = th_ + newthdot * P::kDt;
    newthdot = std::clamp(newthdot, -P::kMaxSpeed, P::kMaxSpeed);
    if (!v0_) th_ = th_ + newthdot * P::kDt;
    thdot_ = newthdot;
    last_u_ = u;  // for rendering
    WriteObs();
    return StepResult{-costs, false, TimeLimitReached()};
  }

  // PendulumEnv.render() in rgb_array mode: the rod, its ends, the arrow of the last torque (none
  // after a reset), the axle; the same pygame calls on the same values.
  void Render(uint8_t* rgb) override {
    using P = PendulumParams;
    constexpr double kBound = 2.2;
    const double scale = P::kScreenDim / (kBound * 2);
    constexpr int kOffset = P::kScreenDim / 2;
    const double rod_length = 1 * scale, rod_width = 0.2 * scale;
    raster::Surface surf(P::kScreenDim, P::kScreenDim);
    surf.Fill({255, 255, 255});
    const raster::Rotation rotate(th_ + P::kPi / 2);
    const double l = 0, r = rod_length, t = rod_width / 2, b = -rod_width / 2;
    std::vector<raster::Point> rod;
    for (const raster::Point corner : {raster::Point{l, b}, {l, t}, {r, t}, {r, b}}) {
      const raster::Point c = rotate(corner);
      rod.push_back({c.x + kOffset, c.y + kOffset});
    }
    constexpr raster::Rgb kRodColor{204, 77, 77};
    raster::GfxAaFilledPolygon(surf, kRodColor, rod);
    const auto end_radius = static_cast<int16_t>(static_cast<int>(rod_width / 2));
    raster::GfxAaCircle(surf, kRodColor, kOffset, kOffset, end_radius);
    raster::GfxFilledCircle(surf, kRodColor, kOffset, kOffset, end_radius);
    const raster::Point rod_end = rotate({rod_length, 0});
    const auto end_x = static_cast<int16_t>(static_cast<int>(rod_end.x + kOffset));
    const auto end_y = static_cast<int16_t>(static_cast<int>(rod_end.y + kOffset));
    raster::GfxAaCircle(surf, kRodColor, end_x, end_y, end_radius);
    raster::GfxFilledCircle(surf, kRodColor, end_x, end_y, end_radius);
    if (last_u_) DrawArrow(surf, scale, kOffset);
    const auto axle_radius = static_cast<int16_t>(static_cast<int>(0.05 * scale));
    raster::GfxAaCircle(surf, {0, 0, 0}, kOffset, kOffset, axle_radius);
    raster::GfxFilledCircle(surf, {0, 0, 0}, kOffset, kOffset, axle_radius);
    surf.WriteRgb(rgb, /*flip_y=*/true, 0, P::kScreenDim);
  }

 private:
  // The arrow: clockwise.png smoothscaled to scale * |last_u| / 2 pixels a side (float32 arithmetic,
  // last_u being a float32; the size truncated to an int as pygame takes it), mirrored when
  // last_u > 0, flipped upside down, and blended in centred on the axle.
  void DrawArrow(raster::Surface& surf, double scale, int offset) {
    const float side = static_cast<float>(scale) * std::fabs(*last_u_) / 2;
    const int size = static_cast<int>(side);
    if (size <= 0) return;  // pygame scales to an empty surface: nothing to blit
    raster::Surface scaled(size, size);
    raster::SmoothScale(arrow_->Image(), scaled, scale_tmp_);
    raster::Sprite sprite{size, size, true, std::vector<uint32_t>(scaled.data(), scaled.data() + size * size)};
    sprite = raster::Flip(sprite, *last_u_ > 0, true);
    raster::Blit(surf, sprite, offset - size / 2, offset - size / 2);  // offset - rect.center
  }

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
  const bool v0_;
  const ClockwiseArrowPtr arrow_;
  double th_ = 0.0;                  // angle, radians, 0 = upright; not wrapped (as in Gymnasium)
  double thdot_ = 0.0;               // angular velocity
  std::optional<float> last_u_;      // the last clipped torque, none after a reset (Gymnasium's last_u)
  std::vector<uint32_t> scale_tmp_;  // smoothscale's scratch rows
};

}  // namespace pp::classic_control
