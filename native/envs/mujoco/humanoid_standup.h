// HumanoidStandup-v4 and HumanoidStandup-v5: Gymnasium's humanoid that starts lying down and learns
// to stand up. Same spaces, kwargs, reward terms and info as gymnasium/envs/mujoco/humanoidstandup_v4.py
// and humanoidstandup_v5.py.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/humanoid.h"
#include "envs/mujoco/model.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/numpy_math.h"

namespace pp::mujoco {

class HumanoidStandupEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{
      .trackbodyid = 1, .distance = 4.0, .elevation = -20.0, .lookat = std::array<double, 3>{0.0, 0.0, 0.8925}};
  static constexpr const char* kXmlFile = "humanoidstandup.xml";
  static constexpr int64_t kV4FrameSkip = 5;
  // v4's fixed reward weights, reset noise and impact cost cap (v5's kwargs defaults).
  static constexpr double kV4CtrlCostWeight = 0.1, kV4ImpactCostWeight = 5e-7, kV4ImpactCostMax = 10.0;
  static constexpr double kV4ResetNoiseScale = 0.01;

  // Gymnasium's constructor kwargs and their defaults, per version: v4 takes none but rendering's.
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, 5);
      // Accepted and unused, as in Gymnasium: its uph_cost is (qpos[2] - 0) / timestep, unweighted.
      c.Set("uph_cost_weight", 1.0);
      c.Set("ctrl_cost_weight", kV4CtrlCostWeight);
      c.Set("impact_cost_weight", kV4ImpactCostWeight);
      c.Set("impact_cost_range", std::vector<double>{-std::numeric_limits<double>::infinity(), kV4ImpactCostMax});
      c.Set("reset_noise_scale", kV4ResetNoiseScale);
      c.Set("exclude_current_positions_from_observation", true);
      HumanoidObservation::SetDefaults(c);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    EnvSpec spec = BeginSpec(*model, Observation(version, config).Size(*model));
    if (version == Version::kV5) {
      for (const char* key : {"x_position", "y_position", "z_distance_from_origin"}) AddInfo(spec, key, version);
      AddTendonInfo(spec, *model);
    }
    for (const char* key : {"reward_linup", "reward_quadctrl", "reward_impact"}) AddInfo(spec, key, version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  HumanoidStandupEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        observation_(Observation(version, spec.config)),
        ctrl_cost_weight_(v5_ ? spec.config.GetFloat("ctrl_cost_weight") : kV4CtrlCostWeight),
        impact_cost_weight_(v5_ ? spec.config.GetFloat("impact_cost_weight") : kV4ImpactCostWeight),
        impact_cost_range_(v5_ ? Range(spec.config, "impact_cost_range")
                               : std::pair<double, double>{-std::numeric_limits<double>::infinity(), kV4ImpactCostMax}),
        reset_noise_scale_(v5_ ? spec.config.GetFloat("reset_noise_scale") : kV4ResetNoiseScale),
        x_position_(FieldOrNone(spec, "info:x_position")),
        y_position_(FieldOrNone(spec, "info:y_position")),
        z_distance_(FieldOrNone(spec, "info:z_distance_from_origin")),
        tendon_length_(FieldOrNone(spec, "info:tendon_length")),
        tendon_velocity_(FieldOrNone(spec, "info:tendon_velocity")),
        reward_linup_(spec.StateIndex("info:reward_linup")),
        reward_quadctrl_(spec.StateIndex("info:reward_quadctrl")),
        reward_impact_(spec.StateIndex("info:reward_impact")) {}

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kUniform);
    Slot out = Allocate();
    observation_.Write(*m_, *d_, ObsRow(out, obs_));
    // v5's reset info: x_position, y_position, z_distance_from_origin and the tendons (v4 has
    // none). The reward terms are 0.
    WritePositions(out);
    for (int field : {reward_linup_, reward_quadctrl_, reward_impact_}) Set(out, field, 0.0);
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    DoSimulation(action);
    const double uph_cost = (d_->qpos[2] - 0) / m_->opt.timestep;
    const double quad_ctrl_cost = ctrl_cost_weight_ * SumOfSquares(d_->ctrl, m_->nu);
    double quad_impact_cost = impact_cost_weight_ * SumOfSquares(d_->cfrc_ext, kSpatialDim * m_->nbody);
    // v4: min(cost, 10) (Python's min keeps a NaN cost); v5: np.clip(cost, *impact_cost_range).
    // Both give the same for v4's fixed range.
    quad_impact_cost = std::min(std::max(quad_impact_cost, impact_cost_range_.first), impact_cost_range_.second);
    const double reward = uph_cost - quad_ctrl_cost - quad_impact_cost + 1;

    Slot out = Allocate();
    observation_.Write(*m_, *d_, ObsRow(out, obs_));
    WritePositions(out);
    Set(out, reward_linup_, uph_cost);
    Set(out, reward_quadctrl_, -quad_ctrl_cost);
    Set(out, reward_impact_, -quad_impact_cost);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, false, TimeLimitReached()};  // never terminates
  }

 private:
  // v4 observes every row and always drops x, y; v5 as Humanoid-v5, with the same kwargs.
  static HumanoidObservation Observation(Version version, const Config& config) {
    return HumanoidObservation::FromConfig(version, config, version == Version::kV5);
  }

  // v5: qpos[0], qpos[1], qpos[2] - init_qpos[2] (init_qpos is the model's qpos0) and the tendons.
  void WritePositions(const Slot& out) const {
    if (!v5_) return;
    Set(out, x_position_, d_->qpos[0]);
    Set(out, y_position_, d_->qpos[1]);
    Set(out, z_distance_, d_->qpos[2] - m_->qpos0[2]);
    WriteTendonInfo(out, tendon_length_, tendon_velocity_, *m_, *d_);
  }

  const bool v5_;
  const int obs_;
  const HumanoidObservation observation_;
  const double ctrl_cost_weight_, impact_cost_weight_;
  const std::pair<double, double> impact_cost_range_;
  const double reset_noise_scale_;
  const int x_position_, y_position_, z_distance_, tendon_length_, tendon_velocity_;
  const int reward_linup_, reward_quadctrl_, reward_impact_;
};

}  // namespace pp::mujoco
