// Ant-v4 and Ant-v5: Gymnasium's four-legged ant that learns to walk forward (+x).
// Same spaces, kwargs, reward terms, termination and info as gymnasium/envs/mujoco/ant_v4.py and ant_v5.py.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
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

class AntEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{.distance = 4.0};
  static constexpr const char* kXmlFile = "ant.xml";
  static constexpr int64_t kV4FrameSkip = 5;

  // Gymnasium's constructor kwargs and their defaults, per version.
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    c.Set("xml_file", std::string(kXmlFile));
    c.Set("ctrl_cost_weight", 0.5);
    c.Set("contact_cost_weight", 5e-4);
    c.Set("healthy_reward", 1.0);
    c.Set("terminate_when_unhealthy", true);
    c.Set("healthy_z_range", std::vector<double>{0.2, 1.0});
    c.Set("contact_force_range", std::vector<double>{-1.0, 1.0});
    c.Set("reset_noise_scale", 0.1);
    c.Set("exclude_current_positions_from_observation", true);
    if (version == Version::kV4) {
      c.Set("use_contact_forces", false);
    } else {
      c.Set("frame_skip", int64_t{5});
      c.Set("forward_reward_weight", 1.0);
      // Gymnasium also accepts a body name (int | str); a config value has one type, so here it
      // is the body id, Gymnasium's default 1 ("torso" in ant.xml).
      c.Set("main_body", int64_t{1});
      c.Set("include_cfrc_ext_in_observation", true);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    const int64_t skipped = config.GetBool("exclude_current_positions_from_observation") ? 2 : 0;
    int64_t obs_size = model->nq - skipped + model->nv;
    if (ContactForcesInObs(version, config)) obs_size += ContactObsBodies(version, *model) * kSpatialDim;
    EnvSpec spec = BeginSpec(*model, obs_size);
    for (const char* key : InfoKeys(version)) AddInfo(spec, key, version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  AntEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        forward_reward_weight_(v5_ ? spec.config.GetFloat("forward_reward_weight") : 1.0),
        ctrl_cost_weight_(spec.config.GetFloat("ctrl_cost_weight")),
        contact_cost_weight_(spec.config.GetFloat("contact_cost_weight")),
        healthy_reward_(spec.config.GetFloat("healthy_reward")),
        terminate_when_unhealthy_(spec.config.GetBool("terminate_when_unhealthy")),
        healthy_z_range_(Range(spec.config, "healthy_z_range")),
        contact_force_range_(Range(spec.config, "contact_force_range")),
        reset_noise_scale_(spec.config.GetFloat("reset_noise_scale")),
        exclude_positions_(spec.config.GetBool("exclude_current_positions_from_observation")),
        contact_forces_in_obs_(ContactForcesInObs(version, spec.config)),
        // v4 pays the contact cost only with use_contact_forces; v5 always does.
        contact_cost_in_reward_(v5_ || spec.config.GetBool("use_contact_forces")),
        // v4 tracks the body named "torso"; v5 the `main_body` kwarg.
        main_body_(v5_ ? BodyId(spec.config.GetInt("main_body")) : BodyId("torso")),
        info_(spec, kInfoNames) {}

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kNormal);
    Slot out = Allocate();
    WriteObs(out);
    // v5's reset info: x_position, y_position, distance_from_origin (v4 has none; it gets the
    // same positions). The per-step terms are 0.
    WritePositions(out);
    info_.Zero(out,
               {kXVelocity, kYVelocity, kRewardForward, kRewardCtrl, kRewardContact, kRewardSurvive, kForwardReward});
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    const double* body_xpos = d_->xpos + 3 * main_body_;
    const double x_before = body_xpos[0], y_before = body_xpos[1];
    DoSimulation(action);
    const double x_velocity = (body_xpos[0] - x_before) / dt();
    const double y_velocity = (body_xpos[1] - y_before) / dt();

    const bool healthy = IsHealthy();
    const double forward_reward = x_velocity * forward_reward_weight_;
    // v4: float(is_healthy or terminate_when_unhealthy) * healthy_reward; v5: is_healthy * healthy_reward.
    const double healthy_reward = (healthy || (!v5_ && terminate_when_unhealthy_)) ? healthy_reward_ : 0.0;
    const float ctrl_cost = ControlCost(ctrl_cost_weight_, Actions(action), m_->nu);
    const double contact_cost = ContactCost();
    const double costs =
        contact_cost_in_reward_ ? static_cast<double>(ctrl_cost) + contact_cost : static_cast<double>(ctrl_cost);
    const double reward = (forward_reward + healthy_reward) - costs;
    const bool terminated = terminate_when_unhealthy_ && !healthy;

    Slot out = Allocate();
    WriteObs(out);
    WritePositions(out);
    info_.SetVelocity(out, x_velocity, y_velocity);
    Set(out, info_[kRewardForward], forward_reward);
    Set(out, info_[kForwardReward], forward_reward);
    // Ant-v4 reports -contact_cost as reward_ctrl when use_contact_forces is set (Gymnasium's
    // ant_v4.py overwrites the key); kept, so the info matches.
    Set(out, info_[kRewardCtrl], !v5_ && contact_cost_in_reward_ ? -contact_cost : -static_cast<double>(ctrl_cost));
    Set(out, info_[kRewardContact], -contact_cost);
    Set(out, info_[kRewardSurvive], healthy_reward);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 private:
  // Every info key either version has; InfoKeys() lists each version's, in Gymnasium's order.
  enum InfoKey {
    kRewardForward = kNumPlanarInfo,
    kRewardCtrl,
    kRewardContact,
    kRewardSurvive,
    kForwardReward,
    kNumInfo
  };
  static constexpr const char* kInfoNames[kNumInfo] = {
      "x_position",     "y_position",  "distance_from_origin", "x_velocity",     "y_velocity",
      "reward_forward", "reward_ctrl", "reward_contact",       "reward_survive", "forward_reward"};

  static std::vector<const char*> InfoKeys(Version version) {
    if (version == Version::kV4) {
      return {"reward_forward",       "reward_ctrl", "reward_survive", "x_position",    "y_position",
              "distance_from_origin", "x_velocity",  "y_velocity",     "forward_reward"};
    }
    return {"x_position",     "y_position",  "distance_from_origin", "x_velocity",    "y_velocity",
            "reward_forward", "reward_ctrl", "reward_contact",       "reward_survive"};
  }

  // v4's use_contact_forces observes all bodies' clipped cfrc_ext; v5's
  // include_cfrc_ext_in_observation all but the world body's.
  static bool ContactForcesInObs(Version version, const Config& config) {
    return config.GetBool(version == Version::kV4 ? "use_contact_forces" : "include_cfrc_ext_in_observation");
  }
  static int64_t ContactObsBodies(Version version, const mjModel& model) {
    return version == Version::kV4 ? model.nbody : model.nbody - 1;
  }

  // np.isfinite(state_vector()).all() and min_z <= qpos[2] <= max_z
  bool IsHealthy() const {
    return StateIsFinite() && healthy_z_range_.first <= d_->qpos[2] && d_->qpos[2] <= healthy_z_range_.second;
  }

  // contact_cost_weight * np.sum(np.square(np.clip(cfrc_ext, *contact_force_range)))
  double ContactCost() const {
    const auto [low, high] = contact_force_range_;
    return contact_cost_weight_ * SumOfClippedSquares(d_->cfrc_ext, kSpatialDim * m_->nbody, low, high);
  }

  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = exclude_positions_ ? 2 : 0; i < m_->nq; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) *obs++ = d_->qvel[i];
    if (contact_forces_in_obs_) {
      const int64_t first = v5_ ? kSpatialDim : 0;  // v5 skips the world body (cfrc_ext[1:])
      for (int64_t i = first; i < kSpatialDim * m_->nbody; ++i) {
        *obs++ = std::min(std::max(d_->cfrc_ext[i], contact_force_range_.first), contact_force_range_.second);
      }
    }
  }

  // v5: qpos[0], qpos[1] and their norm; v4: the torso's xpos (which lags qpos by one substep).
  void WritePositions(const Slot& out) const {
    const double* xy = v5_ ? d_->qpos : d_->xpos + 3 * main_body_;
    Set(out, info_[kXPosition], xy[0]);
    Set(out, info_[kYPosition], xy[1]);
    Set(out, info_[kDistanceFromOrigin], Norm2(xy[0], xy[1]));
  }

  const bool v5_;
  const int obs_;
  const double forward_reward_weight_, ctrl_cost_weight_, contact_cost_weight_, healthy_reward_;
  const bool terminate_when_unhealthy_;
  const std::pair<double, double> healthy_z_range_, contact_force_range_;
  const double reset_noise_scale_;
  const bool exclude_positions_, contact_forces_in_obs_, contact_cost_in_reward_;
  const int main_body_;
  const PlanarInfoFields<kNumInfo> info_;
};

}  // namespace pp::mujoco
