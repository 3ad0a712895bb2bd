// Swimmer-v4 and Swimmer-v5: Gymnasium's three-link swimmer in a viscous fluid that learns to swim
// forward (+x). Same spaces, kwargs, reward and info as gymnasium/envs/mujoco/swimmer_v4.py and swimmer_v5.py.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/model.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/numpy_math.h"

namespace pp::mujoco {

class SwimmerEnv final : public MujocoEnv {
 public:
  static constexpr const char* kXmlFile = "swimmer.xml";
  static constexpr int64_t kV4FrameSkip = 4;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes no xml_file).
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, 4);
    }
    c.Set("forward_reward_weight", 1.0);
    c.Set("ctrl_cost_weight", 1e-4);
    c.Set("reset_noise_scale", 0.1);
    c.Set("exclude_current_positions_from_observation", true);
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    const int64_t skipped = config.GetBool("exclude_current_positions_from_observation") ? 2 : 0;
    EnvSpec spec = BeginSpec(*model, model->nq - skipped + model->nv);
    for (const char* key : InfoKeys(version)) AddInfo(spec, key, version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  SwimmerEnv(const EnvSpec& spec, int env_id, Version /*version*/)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile),
                  FrameSkip(spec.config, kV4FrameSkip)),  // no default camera config
        obs_(spec.StateIndex("obs")),
        forward_reward_weight_(spec.config.GetFloat("forward_reward_weight")),
        ctrl_cost_weight_(spec.config.GetFloat("ctrl_cost_weight")),
        reset_noise_scale_(spec.config.GetFloat("reset_noise_scale")),
        exclude_positions_(spec.config.GetBool("exclude_current_positions_from_observation")),
        info_(spec, kInfoNames) {
    SkipContactForces();  // reads no cfrc_ext
  }

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kUniform);
    Slot out = Allocate();
    WriteObs(out);
    // v5's reset info: x_position, y_position, distance_from_origin (v4 has none; it gets the
    // same positions). The per-step terms are 0.
    WritePositions(out);
    info_.Zero(out, {kXVelocity, kYVelocity, kRewardForward, kRewardCtrl, kRewardFwd, kForwardReward});
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    const double x_before = d_->qpos[0], y_before = d_->qpos[1];
    DoSimulation(action);
    const double x_velocity = (d_->qpos[0] - x_before) / dt();
    const double y_velocity = (d_->qpos[1] - y_before) / dt();
    const double forward_reward = forward_reward_weight_ * x_velocity;
    const float ctrl_cost = ControlCost(ctrl_cost_weight_, Actions(action), m_->nu);
    const double reward = forward_reward - static_cast<double>(ctrl_cost);

    Slot out = Allocate();
    WriteObs(out);
    WritePositions(out);
    info_.SetVelocity(out, x_velocity, y_velocity);
    Set(out, info_[kRewardForward], forward_reward);
    Set(out, info_[kRewardFwd], forward_reward);
    Set(out, info_[kForwardReward], forward_reward);
    Set(out, info_[kRewardCtrl], -static_cast<double>(ctrl_cost));
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, false, TimeLimitReached()};  // never terminates
  }

 private:
  // Every info key either version has; InfoKeys() lists each version's, in Gymnasium's order.
  // v4 reports the forward reward twice, as reward_fwd and forward_reward; v5 as reward_forward.
  enum InfoKey { kRewardForward = kNumPlanarInfo, kRewardCtrl, kRewardFwd, kForwardReward, kNumInfo };
  static constexpr const char* kInfoNames[kNumInfo] = {"x_position",  "y_position", "distance_from_origin",
                                                       "x_velocity",  "y_velocity", "reward_forward",
                                                       "reward_ctrl", "reward_fwd", "forward_reward"};

  static std::vector<const char*> InfoKeys(Version version) {
    if (version == Version::kV4) {
      return {"reward_fwd",           "reward_ctrl", "x_position", "y_position",
              "distance_from_origin", "x_velocity",  "y_velocity", "forward_reward"};
    }
    return {"x_position", "y_position",     "distance_from_origin", "x_velocity",
            "y_velocity", "reward_forward", "reward_ctrl"};
  }

  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = exclude_positions_ ? 2 : 0; i < m_->nq; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) *obs++ = d_->qvel[i];
  }

  // qpos[0], qpos[1] and np.linalg.norm(qpos[0:2], ord=2).
  void WritePositions(const Slot& out) const {
    Set(out, info_[kXPosition], d_->qpos[0]);
    Set(out, info_[kYPosition], d_->qpos[1]);
    Set(out, info_[kDistanceFromOrigin], Norm2(d_->qpos[0], d_->qpos[1]));
  }

  const int obs_;
  const double forward_reward_weight_, ctrl_cost_weight_, reset_noise_scale_;
  const bool exclude_positions_;
  const PlanarInfoFields<kNumInfo> info_;
};

}  // namespace pp::mujoco
