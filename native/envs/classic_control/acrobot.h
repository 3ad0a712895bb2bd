// Acrobot-v1: Gymnasium's two-link underactuated pendulum (Sutton & Barto "book" dynamics).
// Same spaces, RK4 integration (one 0.2 s step), reward, termination, reset draws and rgb_array frames as
// gymnasium/envs/classic_control/acrobot.py.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/numpy_trig.h"
#include "envs/common/pygame_raster.h"

namespace pp::classic_control {

struct AcrobotParams {
  static constexpr double kPi = 3.14159265358979323846;  // numpy.pi
  static constexpr double kDt = 0.2;
  static constexpr double kLinkLength1 = 1.0;
  static constexpr double kLinkMass1 = 1.0;
  static constexpr double kLinkMass2 = 1.0;
  static constexpr double kLinkComPos1 = 0.5;
  static constexpr double kLinkComPos2 = 0.5;
  static constexpr double kLinkMoi = 1.0;
  static constexpr double kGravity = 9.8;
  static constexpr double kMaxVel1 = 4 * kPi;
  static constexpr double kMaxVel2 = 9 * kPi;
  static constexpr double kAvailTorque[3] = {-1.0, 0.0, 1.0};
  static constexpr double kResetBound = 0.1;  // each state variable ~ U(-0.1, 0.1), then float32
  static constexpr double kLinkLength2 = 1.0;
  static constexpr int kScreenDim = 500;
};

// Config: max_episode_steps only, set per task id by the registration.
inline Config AcrobotDefaults(int64_t max_episode_steps) { return Config{{"max_episode_steps", max_episode_steps}}; }

inline EnvSpec AcrobotSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  using P = AcrobotParams;
  const double vel1 = static_cast<float>(P::kMaxVel1);  // Gymnasium's bounds are a float32 array
  const double vel2 = static_cast<float>(P::kMaxVel2);
  EnvSpec spec;
  spec.state = {
      Box("obs", Dtype::kFloat32, {6}, {-1.0, -1.0, -1.0, -1.0, -vel1, -vel2}, {1.0, 1.0, 1.0, 1.0, vel1, vel2}),
      // EnvPool's info: the two joint angles, which the observation gives as cos/sin only.
      WithPresence(Box("info:state", Dtype::kFloat32, {2}), InfoPresence::kExtra)};
  spec.action = {Discrete("action", 3)};  // torque -1, 0, +1 on the joint between the links
  spec.render_shape = {P::kScreenDim, P::kScreenDim, 3};
  spec.render_fps = 15;  // AcrobotEnv.metadata
  return spec;
}

class AcrobotEnv final : public Env {
 public:
  AcrobotEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        state_index_(spec.StateIndex("info:state")),
        action_index_(spec.ActionIndex("action")) {}

  void Reset() override {
    using P = AcrobotParams;
    // self.np_random.uniform(low=-0.1, high=0.1, size=(4,)).astype(np.float32)
    np_random().Uniform(-P::kResetBound, P::kResetBound, state_.data(), 4);
    for (double& v : state_) v = static_cast<float>(v);
    state_is_float32_ = true;
    WriteObs();
  }

  StepResult Step(const Action& action) override {
    using P = AcrobotParams;
    const int64_t a = action.Get<int64_t>(action_index_)[0];  // in [0, 2]: the core checks it against the spec
    const double torque = P::kAvailTorque[a];

    // Gymnasium's rk4(derivs, y0, [0, dt]): one classical Runge-Kutta step, elementwise in float64.
    // The torque rides along as a fifth state with derivative 0, so it stays constant.
    const State& y0 = state_;
    const double dt = P::kDt - 0.0;  // t[1] - t[0] with t = [0, dt]
    const double dt2 = dt / 2.0;
    const State k1 = Derivs(y0, torque);
    const State k2 = Derivs(Axpy(y0, dt2, k1), torque);
    const State k3 = Derivs(Axpy(y0, dt2, k2), torque);
    const State k4 = Derivs(Axpy(y0, dt, k3), torque);
    State ns;
    for (int i = 0; i < 4; ++i) ns[i] = y0[i] + dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);

    ns[0] = Wrap(ns[0], -P::kPi, P::kPi);
    ns[1] = Wrap(ns[1], -P::kPi, P::kPi);
    ns[2] = std::min(std::max(ns[2], -P::kMaxVel1), P::kMaxVel1);
    ns[3] = std::min(std::max(ns[3], -P::kMaxVel2), P::kMaxVel2);
    state_ = ns;
    state_is_float32_ = false;  // rk4's float64 result

    // Terminal when the free end is more than one link length above the pivot.
    const bool terminated = -std::cos(state_[0]) - std::cos(state_[1] + state_[0]) > 1.0;
    WriteObs();
    return StepResult{terminated ? 0.0 : -1.0, terminated, TimeLimitReached()};
  }

  // AcrobotEnv.render() in rgb_array mode: the line at height 1, then per link its bar and its joint.
  // The reset state is a float32 array, and its frame float32 arithmetic (NumPy's float32 cos and
  // sin; a Python float meeting a float32 is float32 under NumPy 2); after a step it is float64.
  void Render(uint8_t* rgb) override {
    using P = AcrobotParams;
    const double bound = P::kLinkLength1 + P::kLinkLength2 + 0.2;
    const double scale = P::kScreenDim / (bound * 2);
    const double offset = P::kScreenDim / 2.0;
    // Gymnasium also computes p2, the free end, but zip() with the two thetas never draws it.
    double p1[2], thetas[2];
    if (state_is_float32_) {
      const float s0 = static_cast<float>(state_[0]), s1 = static_cast<float>(state_[1]);
      const float scale32 = static_cast<float>(scale), s01 = s0 + s1;
      p1[0] = -numpy_trig::Cos(s0) * scale32;
      p1[1] = numpy_trig::Sin(s0) * scale32;
      thetas[0] = s0 - static_cast<float>(P::kPi / 2);
      thetas[1] = s01 - static_cast<float>(P::kPi / 2);
    } else {
      const double s0 = state_[0], s1 = state_[1];
      p1[0] = -P::kLinkLength1 * std::cos(s0) * scale;
      p1[1] = P::kLinkLength1 * std::sin(s0) * scale;
      thetas[0] = s0 - P::kPi / 2;
      thetas[1] = s0 + s1 - P::kPi / 2;
    }
    raster::Surface surf(P::kScreenDim, P::kScreenDim);
    surf.Fill({255, 255, 255});
    raster::Line(surf, {0, 0, 0}, {-2.2 * scale + offset, 1 * scale + offset},
                 {2.2 * scale + offset, 1 * scale + offset});
    // xys = np.array([[0, 0], p1, p2])[:, ::-1] (float64): link k starts at row k, (y, x) swapped.
    const raster::Point starts[2] = {{0.0, 0.0}, {p1[1], p1[0]}};
    const double link_lengths[2] = {P::kLinkLength1 * scale, P::kLinkLength2 * scale};
    for (int k = 0; k < 2; ++k) {
      const double x = starts[k].x + offset, y = starts[k].y + offset;
      const double l = 0, r = link_lengths[k], t = 0.1 * scale, b = -0.1 * scale;
      const raster::Rotation rotate(thetas[k]);
      std::vector<raster::Point> bar;
      for (const raster::Point corner : {raster::Point{l, b}, {l, t}, {r, t}, {r, b}}) {
        const raster::Point c = rotate(corner);
        bar.push_back({c.x + x, c.y + y});
      }
      raster::GfxAaFilledPolygon(surf, {0, 204, 204}, bar);
      const auto jx = static_cast<int16_t>(static_cast<int>(x)), jy = static_cast<int16_t>(static_cast<int>(y));
      const auto radius = static_cast<int16_t>(static_cast<int>(0.1 * scale));
      raster::GfxAaCircle(surf, {204, 204, 0}, jx, jy, radius);
      raster::GfxFilledCircle(surf, {204, 204, 0}, jx, jy, radius);
    }
    surf.WriteRgb(rgb, /*flip_y=*/true, 0, P::kScreenDim);
  }

 private:
  using State = std::array<double, 4>;  // theta1, theta2, dtheta1, dtheta2

  static State Axpy(const State& y, double h, const State& k) {
    State out;
    for (int i = 0; i < 4; ++i) out[i] = y[i] + h * k[i];
    return out;
  }

  // AcrobotEnv._dsdt, "book" variant, with its exact association order. NumPy squares float64
  // scalars with libm's pow(), not always equal to x*x; Square() does the same (Python's own
  // float**2 on the constants is pow() as well, and exact for them).
  static State Derivs(const State& s, double a) {
    using P = AcrobotParams;
    constexpr double m1 = P::kLinkMass1, m2 = P::kLinkMass2, l1 = P::kLinkLength1;
    constexpr double lc1 = P::kLinkComPos1, lc2 = P::kLinkComPos2;
    constexpr double I1 = P::kLinkMoi, I2 = P::kLinkMoi, g = P::kGravity;
    const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
    const double d1 = m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
    const double d2 = m2 * ((lc2 * lc2) + l1 * lc2 * std::cos(theta2)) + I2;
    const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - P::kPi / 2.0);
    const double phi1 = -m2 * l1 * lc2 * Square(dtheta2) * std::sin(theta2) -
                        2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                        (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - P::kPi / 2) + phi2;
    const double ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * Square(dtheta1) * std::sin(theta2) - phi2) /
                            (m2 * (lc2 * lc2) + I2 - Square(d2) / d1);
    const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    return State{dtheta1, dtheta2, ddtheta1, ddtheta2};
  }

  // pow(x, 2) through libm, as NumPy computes x**2; the volatile exponent stops the compiler
  // from folding it into x*x.
  static double Square(double x) {
    volatile double exponent = 2.0;
    return std::pow(x, static_cast<double>(exponent));
  }

  // Gymnasium's wrap(): shift by whole periods into [m, M].
  static double Wrap(double x, double m, double M) {
    const double diff = M - m;
    while (x > M) x = x - diff;
    while (x < m) x = x + diff;
    return x;
  }

  void WriteObs() {
    Slot out = Allocate();
    float* obs = out.Get<float>(obs_index_);
    obs[0] = static_cast<float>(std::cos(state_[0]));
    obs[1] = static_cast<float>(std::sin(state_[0]));
    obs[2] = static_cast<float>(std::cos(state_[1]));
    obs[3] = static_cast<float>(std::sin(state_[1]));
    obs[4] = static_cast<float>(state_[2]);
    obs[5] = static_cast<float>(state_[3]);
    float* angles = out.Get<float>(state_index_);
    angles[0] = static_cast<float>(state_[0]);
    angles[1] = static_cast<float>(state_[1]);
  }

  const int obs_index_;
  const int state_index_;
  const int action_index_;
  State state_{};
  bool state_is_float32_ = false;  // Gymnasium's state is a float32 array (after a reset)
};

}  // namespace pp::classic_control
