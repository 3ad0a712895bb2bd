// HalfCheetah-v4 and HalfCheetah-v5: Gymnasium's 2-D cheetah that learns to run forward (+x).
// Same spaces, kwargs, reward and info as gymnasium/envs/mujoco/half_cheetah_v4.py and half_cheetah_v5.py.
#pragma once

#include <cstdint>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/model.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/numpy_math.h"

namespace pp::mujoco {

class HalfCheetahEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{.distance = 4.0};
  static constexpr const char* kXmlFile = "half_cheetah.xml";
  static constexpr int64_t kV4FrameSkip = 5;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes no xml_file).
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    c.Set("forward_reward_weight", 1.0);
    c.Set("ctrl_cost_weight", 0.1);
    c.Set("reset_noise_scale", 0.1);
    c.Set("exclude_current_positions_from_observation", true);
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, 5);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    const int64_t skipped = config.GetBool("exclude_current_positions_from_observation") ? 1 : 0;
    EnvSpec spec = BeginSpec(*model, model->nq - skipped + model->nv);
    for (const char* key : {"x_position", "x_velocity"}) AddInfo(spec, key, version);
    AddInfo(spec, version == Version::kV4 ? "reward_run" : "reward_forward", version);
    AddInfo(spec, "reward_ctrl", version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  HalfCheetahEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        obs_(spec.StateIndex("obs")),
        x_position_(spec.StateIndex("info:x_position")),
        x_velocity_(spec.StateIndex("info:x_velocity")),
        reward_forward_(spec.StateIndex(version == Version::kV4 ? "info:reward_run" : "info:reward_forward")),
        reward_ctrl_(spec.StateIndex("info:reward_ctrl")),
        forward_reward_weight_(spec.config.GetFloat("forward_reward_weight")),
        ctrl_cost_weight_(spec.config.GetFloat("ctrl_cost_weight")),
        reset_noise_scale_(spec.config.GetFloat("reset_noise_scale")),
        exclude_positions_(spec.config.GetBool("exclude_current_positions_from_observation")) {
    SkipContactForces();  // reads no cfrc_ext
  }

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kNormal);
    Slot out = Allocate();
    WriteObs(out);
    // v5's reset info is x_position (v4 has none); the per-step terms are 0.
    Set(out, x_position_, d_->qpos[0]);
    for (int field : {x_velocity_, reward_forward_, reward_ctrl_}) Set(out, field, 0.0);
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    const double x_before = d_->qpos[0];
    DoSimulation(action);
    const double x_velocity = (d_->qpos[0] - x_before) / dt();
    const double forward_reward = forward_reward_weight_ * x_velocity;
    const float ctrl_cost = ControlCost(ctrl_cost_weight_, Actions(action), m_->nu);
    const double reward = forward_reward - static_cast<double>(ctrl_cost);

    Slot out = Allocate();
    WriteObs(out);
    Set(out, x_position_, d_->qpos[0]);
    Set(out, x_velocity_, x_velocity);
    Set(out, reward_forward_, forward_reward);
    Set(out, reward_ctrl_, -static_cast<double>(ctrl_cost));
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, false, TimeLimitReached()};  // never terminates
  }

 private:
  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = exclude_positions_ ? 1 : 0; i < m_->nq; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) *obs++ = d_->qvel[i];
  }

  const int obs_, x_position_, x_velocity_, reward_forward_, reward_ctrl_;
  const double forward_reward_weight_, ctrl_cost_weight_, reset_noise_scale_;
  const bool exclude_positions_;
};

}  // namespace pp::mujoco
