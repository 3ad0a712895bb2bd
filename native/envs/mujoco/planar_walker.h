// Hopper and Walker2d, v4 and v5: Gymnasium's 2-D legged robots that learn to move forward (+x),
// one leg (hopper) or two (walker2d). Same spaces, kwargs, reward, termination and info as
// gymnasium/envs/mujoco/{hopper,walker2d}_v{4,5}.py, which differ only in their model, camera,
// default ranges and health check: PlanarWalkerEnv is the rest, the task classes those.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/model.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/numpy_math.h"

namespace pp::mujoco {

class PlanarWalkerEnv : public MujocoEnv {
 public:
  static constexpr int64_t kV4FrameSkip = 4;
  // _get_obs: np.clip(qvel, -10, 10).
  static constexpr double kVelocityClip = 10.0;

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kUniform);
    Slot out = Allocate();
    WriteObs(out);
    // v5's reset info: x_position and z_distance_from_origin (v4 has none; it gets the same
    // x_position). The per-step terms are 0.
    WritePositions(out);
    info_.Zero(out, {kXVelocity, kRewardForward, kRewardCtrl, kRewardSurvive});
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    const double x_before = d_->qpos[0];
    DoSimulation(action);
    const double x_velocity = (d_->qpos[0] - x_before) / dt();

    const bool healthy = IsHealthy();
    const double forward_reward = forward_reward_weight_ * x_velocity;
    // v4: float(is_healthy or terminate_when_unhealthy) * healthy_reward; v5: is_healthy * healthy_reward.
    const double healthy_reward = ((healthy || (!v5_ && terminate_when_unhealthy_)) ? 1.0 : 0.0) * healthy_reward_;
    const float ctrl_cost = ControlCost(ctrl_cost_weight_, Actions(action), m_->nu);
    const double reward = (forward_reward + healthy_reward) - static_cast<double>(ctrl_cost);
    const bool terminated = terminate_when_unhealthy_ && !healthy;

    Slot out = Allocate();
    WriteObs(out);
    WritePositions(out);
    Set(out, info_[kXVelocity], x_velocity);
    Set(out, info_[kRewardForward], forward_reward);
    Set(out, info_[kRewardCtrl], -static_cast<double>(ctrl_cost));
    Set(out, info_[kRewardSurvive], healthy_reward);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 protected:
  // Gymnasium's kwargs and defaults shared by both tasks, per version (v4 takes no xml_file);
  // the task adds its health ranges.
  static Config CommonPlanarDefaults(Version version, const char* v5_xml_file) {
    Config c = CommonDefaults();
    if (version == Version::kV5) {
      SetModelKwargs(c, v5_xml_file, 4);
    }
    c.Set("forward_reward_weight", 1.0);
    c.Set("ctrl_cost_weight", 1e-3);
    c.Set("healthy_reward", 1.0);
    c.Set("terminate_when_unhealthy", true);
    c.Set("reset_noise_scale", 5e-3);
    c.Set("exclude_current_positions_from_observation", true);
    return c;
  }

  // `v4_xml_file`: the model v4 always loads, and v5 when its config names none.
  static EnvSpec MakePlanarSpec(Version version, const Config& config, const char* v4_xml_file) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, v4_xml_file));
    const int64_t skipped = config.GetBool("exclude_current_positions_from_observation") ? 1 : 0;
    EnvSpec spec = BeginSpec(*model, model->nq - skipped + model->nv);
    for (const char* key : InfoKeys(version)) AddInfo(spec, key, version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  // `checks_state`: Hopper's health also needs qpos[2:] and qvel inside healthy_state_range.
  PlanarWalkerEnv(const EnvSpec& spec, int env_id, Version version, const char* v4_xml_file,
                  const FreeCameraConfig& camera, bool checks_state)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, v4_xml_file), FrameSkip(spec.config, kV4FrameSkip),
                  camera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        forward_reward_weight_(spec.config.GetFloat("forward_reward_weight")),
        ctrl_cost_weight_(spec.config.GetFloat("ctrl_cost_weight")),
        healthy_reward_(spec.config.GetFloat("healthy_reward")),
        terminate_when_unhealthy_(spec.config.GetBool("terminate_when_unhealthy")),
        healthy_state_range_(checks_state ? std::optional(Range(spec.config, "healthy_state_range")) : std::nullopt),
        healthy_z_range_(Range(spec.config, "healthy_z_range")),
        healthy_angle_range_(Range(spec.config, "healthy_angle_range")),
        reset_noise_scale_(spec.config.GetFloat("reset_noise_scale")),
        exclude_positions_(spec.config.GetBool("exclude_current_positions_from_observation")),
        info_(spec, kInfoNames) {
    SkipContactForces();  // reads no cfrc_ext
  }

 private:
  // Every info key either version has; InfoKeys() lists each version's, in Gymnasium's order.
  enum InfoKey { kXPosition, kZDistanceFromOrigin, kXVelocity, kRewardForward, kRewardCtrl, kRewardSurvive, kNumInfo };
  static constexpr const char* kInfoNames[kNumInfo] = {
      "x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl", "reward_survive"};

  static std::vector<const char*> InfoKeys(Version version) {
    if (version == Version::kV4) return {"x_position", "x_velocity"};
    return {"x_position", "z_distance_from_origin", "x_velocity", "reward_forward", "reward_ctrl", "reward_survive"};
  }

  // low < x < high, strictly (NaN fails), as Gymnasium's range checks.
  static bool Inside(double x, const std::pair<double, double>& range) { return range.first < x && x < range.second; }

  // The height qpos[1] inside healthy_z_range and the angle qpos[2] inside healthy_angle_range;
  // for Hopper, all of state_vector()[2:] (qpos[2:] and qvel) strictly inside healthy_state_range.
  bool IsHealthy() const {
    if (healthy_state_range_) {
      for (int64_t i = 2; i < m_->nq; ++i) {
        if (!Inside(d_->qpos[i], *healthy_state_range_)) return false;
      }
      for (int64_t i = 0; i < m_->nv; ++i) {
        if (!Inside(d_->qvel[i], *healthy_state_range_)) return false;
      }
    }
    return Inside(d_->qpos[1], healthy_z_range_) && Inside(d_->qpos[2], healthy_angle_range_);
  }

  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = exclude_positions_ ? 1 : 0; i < m_->nq; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) *obs++ = std::min(std::max(d_->qvel[i], -kVelocityClip), kVelocityClip);
  }

  // x_position = qpos[0]; v5's z_distance_from_origin = qpos[1] - init_qpos[1] (init_qpos is
  // the model's qpos0).
  void WritePositions(const Slot& out) const {
    Set(out, info_[kXPosition], d_->qpos[0]);
    Set(out, info_[kZDistanceFromOrigin], d_->qpos[1] - m_->qpos0[1]);
  }

  const bool v5_;
  const int obs_;
  const double forward_reward_weight_, ctrl_cost_weight_, healthy_reward_;
  const bool terminate_when_unhealthy_;
  const std::optional<std::pair<double, double>> healthy_state_range_;
  const std::pair<double, double> healthy_z_range_, healthy_angle_range_;
  const double reset_noise_scale_;
  const bool exclude_positions_;
  const InfoFields<kNumInfo> info_;
};

class HopperEnv final : public PlanarWalkerEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{
      .trackbodyid = 2, .distance = 3.0, .elevation = -20.0, .lookat = std::array<double, 3>{0.0, 0.0, 1.15}};
  static constexpr const char* kXmlFile = "hopper.xml";

  static Config Defaults(Version version) {
    Config c = CommonPlanarDefaults(version, kXmlFile);
    c.Set("healthy_state_range", std::vector<double>{-100.0, 100.0});
    c.Set("healthy_z_range", std::vector<double>{0.7, std::numeric_limits<double>::infinity()});
    c.Set("healthy_angle_range", std::vector<double>{-0.2, 0.2});
    return c;
  }
  static EnvSpec MakeSpec(Version version, const Config& config) { return MakePlanarSpec(version, config, kXmlFile); }

  HopperEnv(const EnvSpec& spec, int env_id, Version version)
      : PlanarWalkerEnv(spec, env_id, version, kXmlFile, kDefaultCamera, /*checks_state=*/true) {}
};

class Walker2dEnv final : public PlanarWalkerEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{
      .trackbodyid = 2, .distance = 4.0, .elevation = -20.0, .lookat = std::array<double, 3>{0.0, 0.0, 1.15}};
  // v4's fixed model file; v5's default xml_file is the v5 model (both feet with friction 1.9).
  static constexpr const char* kV4XmlFile = "walker2d.xml";
  static constexpr const char* kV5XmlFile = "walker2d_v5.xml";

  static Config Defaults(Version version) {
    Config c = CommonPlanarDefaults(version, kV5XmlFile);
    c.Set("healthy_z_range", std::vector<double>{0.8, 2.0});
    c.Set("healthy_angle_range", std::vector<double>{-1.0, 1.0});
    return c;
  }
  static EnvSpec MakeSpec(Version version, const Config& config) { return MakePlanarSpec(version, config, kV4XmlFile); }

  Walker2dEnv(const EnvSpec& spec, int env_id, Version version)
      : PlanarWalkerEnv(spec, env_id, version, kV4XmlFile, kDefaultCamera, /*checks_state=*/false) {}
};

}  // namespace pp::mujoco
