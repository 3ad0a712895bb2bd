// Reacher-v4 and Reacher-v5: Gymnasium's two-link arm that moves its fingertip to a random target.
// Same spaces, kwargs, reward, reset and info as gymnasium/envs/mujoco/reacher_v4.py and reacher_v5.py.
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
#include "envs/mujoco/numpy_math.h"

namespace pp::mujoco {

class ReacherEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{.trackbodyid = 0};
  static constexpr const char* kXmlFile = "reacher.xml";
  static constexpr int64_t kV4FrameSkip = 2;
  static constexpr int64_t kMaxEpisodeSteps = 50;
  // reset_model's hard-coded noise (both versions): qpos uniform(-0.1, 0.1), qvel
  // uniform(-0.005, 0.005), and a goal uniform in the disk of radius 0.2.
  static constexpr double kQposNoise = 0.1, kQvelNoise = 0.005, kGoalRadius = 0.2;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes none).
  static Config Defaults(Version version) {
    Config c = CommonDefaults(kMaxEpisodeSteps);
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, kV4FrameSkip);
      c.Set("reward_dist_weight", 1.0);
      c.Set("reward_control_weight", 1.0);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    if (model->nq < 4 || model->nv < 2) throw std::invalid_argument("Reacher needs a model with nq >= 4 and nv >= 2");
    // cos(qpos[:2]), sin(qpos[:2]), qpos[2:], qvel[:2], fingertip - target (v5: its x and y).
    const int64_t obs_size = 2 + model->nq + 2 + (version == Version::kV4 ? 3 : 2);
    EnvSpec spec = BeginSpec(*model, obs_size);
    for (const char* key : {"reward_dist", "reward_ctrl"}) AddInfo(spec, key, version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  ReacherEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        reward_dist_(spec.StateIndex("info:reward_dist")),
        reward_ctrl_(spec.StateIndex("info:reward_ctrl")),
        reward_dist_weight_(v5_ ? spec.config.GetFloat("reward_dist_weight") : 1.0),
        reward_control_weight_(v5_ ? spec.config.GetFloat("reward_control_weight") : 1.0),
        fingertip_(BodyId("fingertip")),
        target_(BodyId("target")) {
    SkipContactForces();  // reads no cfrc_ext
  }

  // reset_model: qpos = qpos0 + uniform(-0.1, 0.1); its last two entries (the target's slide
  // joints) the goal, drawn uniform in [-0.2, 0.2)^2 until inside the disk; qvel = uniform(-0.005,
  // 0.005) but 0 for the target. Then set_state (mj_forward).
  void Reset() override {
    mj_resetData(m_, d_);
    const int64_t nq = m_->nq, nv = m_->nv;
    for (int64_t i = 0; i < nq; ++i) d_->qpos[i] += rng().Uniform(-kQposNoise, kQposNoise);
    double goal_x, goal_y;
    do {
      goal_x = rng().Uniform(-kGoalRadius, kGoalRadius);
      goal_y = rng().Uniform(-kGoalRadius, kGoalRadius);
    } while (!(Norm2(goal_x, goal_y) < kGoalRadius));
    d_->qpos[nq - 2] = goal_x;
    d_->qpos[nq - 1] = goal_y;
    for (int64_t i = 0; i < nv; ++i) d_->qvel[i] += rng().Uniform(-kQvelNoise, kQvelNoise);
    d_->qvel[nv - 2] = d_->qvel[nv - 1] = 0.0;
    mj_forward(m_, d_);

    Slot out = Allocate();
    WriteObs(out);
    Set(out, reward_dist_, 0.0);  // no reset info; the per-step terms are 0
    Set(out, reward_ctrl_, 0.0);
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    // v4 rewards the state before the step, v5 the state after it.
    double reward_dist = 0.0;
    float reward_ctrl = 0.0f;
    if (!v5_) Rewards(action, reward_dist, reward_ctrl);
    DoSimulation(action);
    if (v5_) Rewards(action, reward_dist, reward_ctrl);
    const double reward = reward_dist + static_cast<double>(reward_ctrl);

    Slot out = Allocate();
    WriteObs(out);
    Set(out, reward_dist_, reward_dist);
    Set(out, reward_ctrl_, reward_ctrl);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, false, TimeLimitReached()};  // never terminates
  }

 private:
  // vec = get_body_com("fingertip") - get_body_com("target"); get_body_com is data.xpos (the body
  // frame's origin, not its center of mass).
  void FingertipToTarget(double vec[3]) const {
    for (int k = 0; k < 3; ++k) vec[k] = d_->xpos[3 * fingertip_ + k] - d_->xpos[3 * target_ + k];
  }

  // reward_dist = -norm(vec) * reward_dist_weight (float64); reward_ctrl = -np.square(action).sum()
  // * reward_control_weight, a float32 (v4 has no weights: the products are skipped).
  void Rewards(const Action& action, double& reward_dist, float& reward_ctrl) const {
    double vec[3];
    FingertipToTarget(vec);
    reward_dist = -Norm3(vec);
    const float sum = SumOfSquares(Actions(action), m_->nu);
    reward_ctrl = -sum;
    if (v5_) {
      reward_dist *= reward_dist_weight_;
      reward_ctrl *= static_cast<float>(reward_control_weight_);
    }
  }

  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = 0; i < 2; ++i) *obs++ = std::cos(d_->qpos[i]);
    for (int64_t i = 0; i < 2; ++i) *obs++ = std::sin(d_->qpos[i]);
    for (int64_t i = 2; i < m_->nq; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < 2; ++i) *obs++ = d_->qvel[i];
    double vec[3];
    FingertipToTarget(vec);
    for (int k = 0; k < (v5_ ? 2 : 3); ++k) *obs++ = vec[k];
  }

  const bool v5_;
  const int obs_, reward_dist_, reward_ctrl_;
  const double reward_dist_weight_, reward_control_weight_;
  const int fingertip_, target_;
};

}  // namespace pp::mujoco
