// InvertedDoublePendulum-v4 and InvertedDoublePendulum-v5: Gymnasium's cart with two stacked poles
// to keep upright. Same spaces, kwargs, reward, termination and info as
// gymnasium/envs/mujoco/inverted_double_pendulum_v4.py and inverted_double_pendulum_v5.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/model.h"
#include "envs/mujoco/mujoco_env.h"

namespace pp::mujoco {

class InvertedDoublePendulumEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG, which only v4 passes: v5's default_camera_config is {}.
  static constexpr FreeCameraConfig kV4DefaultCamera{
      .trackbodyid = 0, .distance = 4.1225, .lookat = std::array<double, 3>{0.0, 0.0, 0.12250000000000005}};
  static constexpr const char* kXmlFile = "inverted_double_pendulum.xml";
  static constexpr int64_t kV4FrameSkip = 5;
  // v4 hard-codes these; v5 takes them as healthy_reward and reset_noise_scale.
  static constexpr double kV4HealthyReward = 10.0;
  static constexpr double kV4ResetNoiseScale = 0.1;
  // np.clip bound of the observed qvel and qfrc_constraint.
  static constexpr double kObsClip = 10.0;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes none).
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, kV4FrameSkip);
      c.Set("healthy_reward", kV4HealthyReward);
      c.Set("reset_noise_scale", kV4ResetNoiseScale);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    if (model->nq < 1 || model->nv < 3 || model->nsite < 1) {
      throw std::invalid_argument("InvertedDoublePendulum needs a model with nq >= 1, nv >= 3 and a site");
    }
    EnvSpec spec = BeginSpec(*model, ObsSize(version, *model));
    if (version == Version::kV5) {  // v4's step info is empty
      for (const char* key : {"reward_survive", "distance_penalty", "velocity_penalty"}) AddInfo(spec, key, version);
    }
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  InvertedDoublePendulumEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  version == Version::kV4 ? kV4DefaultCamera : FreeCameraConfig{}),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        reward_survive_(FieldOrNone(spec, "info:reward_survive")),
        distance_penalty_(FieldOrNone(spec, "info:distance_penalty")),
        velocity_penalty_(FieldOrNone(spec, "info:velocity_penalty")),
        healthy_reward_(v5_ ? spec.config.GetFloat("healthy_reward") : kV4HealthyReward),
        reset_noise_scale_(v5_ ? spec.config.GetFloat("reset_noise_scale") : kV4ResetNoiseScale) {
    SkipContactForces();  // reads no cfrc_ext
  }

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kNormal);
    Slot out = Allocate();
    WriteObs(out);
    for (int field : {reward_survive_, distance_penalty_, velocity_penalty_}) Set(out, field, 0.0);  // no reset info
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    DoSimulation(action);
    // x, _, y = data.site_xpos[0]
    const double x = d_->site_xpos[0], y = d_->site_xpos[2];
    const bool terminated = y <= 1;
    const double v1 = d_->qvel[1], v2 = d_->qvel[2];
    // 0.01 * x**2 + (y - 2) ** 2 and 1e-3 * v1**2 + 5e-3 * v2**2, on NumPy float64 scalars.
    const double dist_penalty = 0.01 * NumpySquare(x) + NumpySquare(y - 2);
    const double vel_penalty = 1e-3 * NumpySquare(v1) + 5e-3 * NumpySquare(v2);
    // v4: alive_bonus = 10; v5: healthy_reward * int(not terminated).
    const double alive_bonus = v5_ ? healthy_reward_ * (terminated ? 0.0 : 1.0) : kV4HealthyReward;
    const double reward = alive_bonus - dist_penalty - vel_penalty;

    Slot out = Allocate();
    WriteObs(out);
    Set(out, reward_survive_, alive_bonus);
    Set(out, distance_penalty_, -dist_penalty);
    Set(out, velocity_penalty_, -vel_penalty);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 private:
  // x**2 of a NumPy float64 scalar is libm's pow(x, 2.0), which is not always x * x (they differed
  // in the last bit for ~0.1% of random values here). The exponent is volatile so that the compiler
  // cannot fold the call into x * x, as it does with a literal 2.0.
  static double NumpySquare(double x) {
    volatile double two = 2.0;
    return std::pow(x, two);
  }

  // qpos[:1], sin(qpos[1:]), cos(qpos[1:]), clip(qvel), clip(qfrc_constraint) (v5: its first entry).
  static int64_t ObsSize(Version version, const mjModel& model) {
    return 1 + 2 * (model.nq - 1) + model.nv + (version == Version::kV4 ? model.nv : 1);
  }

  static double Clip(double v) { return std::min(std::max(v, -kObsClip), kObsClip); }

  // np.sin and np.cos of float64 are libm's sin and cos (checked bit for bit on 2,000,000 values).
  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    *obs++ = d_->qpos[0];
    for (int64_t i = 1; i < m_->nq; ++i) *obs++ = std::sin(d_->qpos[i]);
    for (int64_t i = 1; i < m_->nq; ++i) *obs++ = std::cos(d_->qpos[i]);
    for (int64_t i = 0; i < m_->nv; ++i) *obs++ = Clip(d_->qvel[i]);
    const int64_t n_constraint = v5_ ? 1 : m_->nv;
    for (int64_t i = 0; i < n_constraint; ++i) *obs++ = Clip(d_->qfrc_constraint[i]);
  }

  const bool v5_;
  const int obs_, reward_survive_, distance_penalty_, velocity_penalty_;
  const double healthy_reward_, reset_noise_scale_;
};

}  // namespace pp::mujoco
