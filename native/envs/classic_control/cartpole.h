// CartPole-v0/v1: Gymnasium's cart-pole balancing task (Barto, Sutton & Anderson 1983).
// Same spaces, float64 Euler dynamics, reward, termination, reset draws and rgb_array frames as
// gymnasium/envs/classic_control/cartpole.py.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pygame_raster.h"

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
  static constexpr int kScreenWidth = 600;
  static constexpr int kScreenHeight = 400;
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
  spec.render_shape = {P::kScreenHeight, P::kScreenWidth, 3};
  spec.render_fps = 50;  // CartPoleEnv.metadata
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

  // CartPoleEnv.render() in rgb_array mode: the same pygame calls on the same float64 values.
  void Render(uint8_t* rgb) override {
    using P = CartPoleParams;
    const double scale = P::kScreenWidth / (P::kXThreshold * 2);
    constexpr double kPoleWidth = 10.0, kCartWidth = 50.0, kCartHeight = 30.0;
    const double polelen = scale * (2 * P::kLength);
    raster::Surface surf(P::kScreenWidth, P::kScreenHeight);
    surf.Fill({255, 255, 255});
    const double l = -kCartWidth / 2, r = kCartWidth / 2, t = kCartHeight / 2, b = -kCartHeight / 2;
    const double axleoffset = kCartHeight / 4.0;
    const double cartx = state_[0] * scale + P::kScreenWidth / 2.0;  // middle of the cart
    constexpr int kCartY = 100;                                      // top of the cart
    raster::GfxAaFilledPolygon(
        surf, {0, 0, 0},
        {{l + cartx, b + kCartY}, {l + cartx, t + kCartY}, {r + cartx, t + kCartY}, {r + cartx, b + kCartY}});
    const double pl = -kPoleWidth / 2, pr = kPoleWidth / 2, pt = polelen - kPoleWidth / 2, pb = -kPoleWidth / 2;
    const raster::Rotation rotate(-state_[2]);
    std::vector<raster::Point> pole;
    for (const raster::Point corner : {raster::Point{pl, pb}, {pl, pt}, {pr, pt}, {pr, pb}}) {
      const raster::Point c = rotate(corner);
      pole.push_back({c.x + cartx, c.y + kCartY + axleoffset});
    }
    raster::GfxAaFilledPolygon(surf, {202, 152, 101}, pole);
    // int() of Python floats: truncation toward zero.
    const auto axle_x = static_cast<int16_t>(static_cast<int>(cartx));
    const auto axle_y = static_cast<int16_t>(static_cast<int>(kCartY + axleoffset));
    const auto axle_r = static_cast<int16_t>(static_cast<int>(kPoleWidth / 2));
    raster::GfxAaCircle(surf, {129, 132, 203}, axle_x, axle_y, axle_r);
    raster::GfxFilledCircle(surf, {129, 132, 203}, axle_x, axle_y, axle_r);
    raster::GfxHorizontalLine(surf, {0, 0, 0}, 0, P::kScreenWidth, kCartY);
    surf.WriteRgb(rgb, /*flip_y=*/true, 0, P::kScreenWidth);
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
