// InvertedPendulum-v4 and InvertedPendulum-v5: Gymnasium's cart-pole that keeps a pole upright.
// Same spaces, kwargs, reward, termination and info as gymnasium/envs/mujoco/inverted_pendulum_v4.py
// and inverted_pendulum_v5.py.
#pragma once

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

class InvertedPendulumEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{.trackbodyid = 0, .distance = 2.04};
  static constexpr const char* kXmlFile = "inverted_pendulum.xml";
  static constexpr int64_t kV4FrameSkip = 2;
  // v4 hard-codes its reset noise; v5 takes it as reset_noise_scale.
  static constexpr double kV4ResetNoiseScale = 0.01;
  // The pole falls when |qpos[1]| (obs[1], the hinge angle) exceeds this.
  static constexpr double kMaxAngle = 0.2;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes none).
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, kV4FrameSkip);
      c.Set("reset_noise_scale", kV4ResetNoiseScale);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    if (model->nq < 2) throw std::invalid_argument("InvertedPendulum needs a model with nq >= 2");
    EnvSpec spec = BeginSpec(*model, model->nq + model->nv);
    if (version == Version::kV5) AddInfo(spec, "reward_survive", version);  // v4's step info is empty
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  InvertedPendulumEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        reward_survive_(FieldOrNone(spec, "info:reward_survive")),
        reset_noise_scale_(v5_ ? spec.config.GetFloat("reset_noise_scale") : kV4ResetNoiseScale) {
    SkipContactForces();  // reads no cfrc_ext
  }

  void Reset() override {
    // Both versions perturb qpos and qvel with uniform(-scale, scale).
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kUniform);
    Slot out = Allocate();
    WriteObs(out);
    Set(out, reward_survive_, 0.0);  // no reset info; the per-step term is 0
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    DoSimulation(action);
    // not np.isfinite(obs).all() or np.abs(obs[1]) > 0.2; obs is qpos and qvel.
    const bool terminated = !StateIsFinite() || std::abs(d_->qpos[1]) > kMaxAngle;
    // v4: always 1.0; v5: int(not terminated).
    const double reward = (!v5_ || !terminated) ? 1.0 : 0.0;

    Slot out = Allocate();
    WriteObs(out);
    Set(out, reward_survive_, reward);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 private:
  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = 0; i < m_->nq; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) *obs++ = d_->qvel[i];
  }

  const bool v5_;
  const int obs_, reward_survive_;
  const double reset_noise_scale_;
};

}  // namespace pp::mujoco
