// Pusher-v4 and Pusher-v5: Gymnasium's 7-joint arm that pushes a cylinder to a goal.
// Same spaces, kwargs, reward, reset and info as gymnasium/envs/mujoco/pusher_v4.py and pusher_v5.py.
// Gymnasium refuses Pusher-v4 under mujoco >= 3 (Gymnasium issue #950: pusher.xml behaves
// differently there than under the mujoco 2 it was tuned on); this one runs it on the mujoco
// wheel's libmujoco like every task here, with pusher_v4.py's arithmetic.
#pragma once

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

class PusherEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{.trackbodyid = -1, .distance = 4.0};
  static constexpr const char* kV4XmlFile = "pusher.xml";
  static constexpr const char* kV5XmlFile = "pusher_v5.xml";
  static constexpr int64_t kV4FrameSkip = 5;
  static constexpr int64_t kMaxEpisodeSteps = 100;
  // The observed joints: the arm's 7 (qpos[:7], qvel[:7]).
  static constexpr int64_t kArmJoints = 7;
  // v4's fixed reward weights, v5's defaults.
  static constexpr double kNearWeight = 0.5, kDistWeight = 1.0, kControlWeight = 0.1;
  // reset_model's hard-coded noise (both versions): qvel uniform(-0.005, 0.005); the cylinder at
  // (uniform(-0.3, 0), uniform(-0.2, 0.2)), redrawn until farther than 0.17 from the goal (0, 0).
  static constexpr double kQvelNoise = 0.005, kMinGoalDistance = 0.17;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes none).
  static Config Defaults(Version version) {
    Config c = CommonDefaults(kMaxEpisodeSteps);
    if (version == Version::kV5) {
      SetModelKwargs(c, kV5XmlFile, kV4FrameSkip);
      c.Set("reward_near_weight", kNearWeight);
      c.Set("reward_dist_weight", kDistWeight);
      c.Set("reward_control_weight", kControlWeight);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, XmlFile(version)));
    if (model->nq < kArmJoints + 4 || model->nv < kArmJoints + 4) {
      throw std::invalid_argument("Pusher needs a model with nq >= 11 and nv >= 11");
    }
    // qpos[:7], qvel[:7], the coms of tips_arm, object and goal.
    EnvSpec spec = BeginSpec(*model, 2 * kArmJoints + 9);
    for (const char* key : {"reward_dist", "reward_ctrl"}) AddInfo(spec, key, version);
    if (version == Version::kV5) AddInfo(spec, "reward_near", version);
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  PusherEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, XmlFile(version)), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        reward_dist_(spec.StateIndex("info:reward_dist")),
        reward_ctrl_(spec.StateIndex("info:reward_ctrl")),
        reward_near_(FieldOrNone(spec, "info:reward_near")),
        reward_near_weight_(v5_ ? spec.config.GetFloat("reward_near_weight") : kNearWeight),
        reward_dist_weight_(v5_ ? spec.config.GetFloat("reward_dist_weight") : kDistWeight),
        reward_control_weight_(v5_ ? spec.config.GetFloat("reward_control_weight") : kControlWeight),
        tips_arm_(BodyId("tips_arm")),
        object_(BodyId("object")),
        goal_(BodyId("goal")) {
    SkipContactForces();  // reads no cfrc_ext
  }

  // reset_model: qpos = qpos0 (no noise) with qpos[-4:-2] the cylinder's position and qpos[-2:]
  // the goal's, (0, 0); qvel = uniform(-0.005, 0.005) but 0 for the last four. Then set_state.
  void Reset() override {
    mj_resetData(m_, d_);
    const int64_t nq = m_->nq, nv = m_->nv;
    double cylinder_x, cylinder_y;
    do {
      cylinder_x = rng().Uniform(-0.3, 0.0);
      cylinder_y = rng().Uniform(-0.2, 0.2);
    } while (!(Norm2(cylinder_x, cylinder_y) > kMinGoalDistance));  // norm(cylinder_pos - goal_pos)
    d_->qpos[nq - 4] = cylinder_x;
    d_->qpos[nq - 3] = cylinder_y;
    d_->qpos[nq - 2] = d_->qpos[nq - 1] = 0.0;
    for (int64_t i = 0; i < nv; ++i) d_->qvel[i] += rng().Uniform(-kQvelNoise, kQvelNoise);
    for (int64_t i = nv - 4; i < nv; ++i) d_->qvel[i] = 0.0;
    mj_forward(m_, d_);

    Slot out = Allocate();
    WriteObs(out);
    for (int field : {reward_dist_, reward_ctrl_, reward_near_}) Set(out, field, 0.0);  // no reset info
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    // v4 rewards the state before the step, v5 the state after it.
    Terms terms;
    if (!v5_) terms = Rewards(action);
    DoSimulation(action);
    if (v5_) terms = Rewards(action);
    // v4: reward_dist + 0.1 * reward_ctrl + 0.5 * reward_near, with 0.1 * reward_ctrl a float32;
    // v5: reward_dist + reward_ctrl + reward_near, the terms already weighted.
    const float ctrl_term = v5_ ? terms.ctrl : static_cast<float>(kControlWeight) * terms.ctrl;
    const double near_term = v5_ ? terms.near : kNearWeight * terms.near;
    const double reward = (terms.dist + static_cast<double>(ctrl_term)) + near_term;

    Slot out = Allocate();
    WriteObs(out);
    Set(out, reward_dist_, terms.dist);
    Set(out, reward_ctrl_, terms.ctrl);
    Set(out, reward_near_, terms.near);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, false, TimeLimitReached()};  // never terminates
  }

 private:
  struct Terms {
    double near = 0.0, dist = 0.0;
    float ctrl = 0.0f;
  };

  static const char* XmlFile(Version version) { return version == Version::kV4 ? kV4XmlFile : kV5XmlFile; }

  // get_body_com: despite its name, the body frame's origin (data.xpos), not its center of mass.
  const double* Com(int body) const { return d_->xpos + 3 * body; }

  // reward_near = -norm(object - tips_arm), reward_dist = -norm(object - goal) (float64),
  // reward_ctrl = -np.square(action).sum() (float32); v5 multiplies each by its weight.
  Terms Rewards(const Action& action) const {
    double vec_1[3], vec_2[3];
    for (int k = 0; k < 3; ++k) {
      vec_1[k] = Com(object_)[k] - Com(tips_arm_)[k];
      vec_2[k] = Com(object_)[k] - Com(goal_)[k];
    }
    Terms terms;
    terms.near = -Norm3(vec_1);
    terms.dist = -Norm3(vec_2);
    terms.ctrl = -SumOfSquares(Actions(action), m_->nu);
    if (v5_) {
      terms.near *= reward_near_weight_;
      terms.dist *= reward_dist_weight_;
      terms.ctrl *= static_cast<float>(reward_control_weight_);
    }
    return terms;
  }

  void WriteObs(const Slot& out) const {
    double* obs = ObsRow(out, obs_);
    for (int64_t i = 0; i < kArmJoints; ++i) *obs++ = d_->qpos[i];
    for (int64_t i = 0; i < kArmJoints; ++i) *obs++ = d_->qvel[i];
    for (int body : {tips_arm_, object_, goal_}) {
      for (int k = 0; k < 3; ++k) *obs++ = Com(body)[k];
    }
  }

  const bool v5_;
  const int obs_, reward_dist_, reward_ctrl_, reward_near_;
  const double reward_near_weight_, reward_dist_weight_, reward_control_weight_;
  const int tips_arm_, object_, goal_;
};

}  // namespace pp::mujoco
