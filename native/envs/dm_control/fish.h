// dm_control's fish domain (suite/fish.py): FishUpright-v1, FishSwim-v1.
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class FishTask { kUpright, kSwim };

class FishEnv final : public SuiteEnv<FishEnv, FishTask> {
 public:
  static constexpr bool kEditsModel = true;  // the target's position and visibility, per episode
  static constexpr int kNumJoints = 7;
  static TaskInfo Info(Task task) { return {"fish", task == Task::kUpright ? "upright" : "swim", 40, .04}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "fish.xml"); }
  static ObsLayout Layout(const mjModel& m, Task task) {
    if (task == Task::kUpright) return {{"joint_angles", {kNumJoints}}, {"upright", {}}, {"velocity", {m.nv}}};
    return {{"joint_angles", {kNumJoints}}, {"upright", {}}, {"target", {3}}, {"velocity", {m.nv}}};
  }
  // The target the episode drew (swim): model.geom_pos['target'].
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"target_pos", {3}}}; }

  FishEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        root_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "root")]),
        torso_(Id(mjOBJ_BODY, "torso")),
        target_(Id(mjOBJ_GEOM, "target")),
        mouth_(Id(mjOBJ_GEOM, "mouth")) {
    static const char* const kJoints[kNumJoints] = {"tail1",          "tail_twist",   "tail2",        "finright_roll",
                                                    "finright_pitch", "finleft_roll", "finleft_pitch"};  // _JOINTS
    for (int k = 0; k < kNumJoints; ++k) {
      const int joint = Id(mjOBJ_JOINT, kJoints[k]);
      joint_qpos_[k] = m_->jnt_qposadr[joint];
      joint_dof_[k] = m_->jnt_dofadr[joint];
    }
  }

 protected:
  void InitializeEpisode() override {
    double quat[4];
    for (double& q : quat) q = random().StandardNormal();
    Normalize4(quat, d_->qpos + root_ + 3);
    for (int k = 0; k < kNumJoints; ++k) d_->qpos[joint_qpos_[k]] = random().Uniform(-.2, .2);
    if (task_ == Task::kUpright) {
      m_->geom_rgba[4 * target_ + 3] = 0;
    } else {
      m_->geom_pos[3 * target_ + 0] = random().Uniform(-.4, .4);
      m_->geom_pos[3 * target_ + 1] = random().Uniform(-.4, .4);
      m_->geom_pos[3 * target_ + 2] = random().Uniform(.1, .3);
    }
  }
  void Observe(double* out) override {
    for (int k = 0; k < kNumJoints; ++k) *out++ = d_->qpos[joint_qpos_[k]];
    *out++ = d_->xmat[9 * torso_ + 8];
    if (task_ == Task::kSwim) {
      MouthToTarget(out);
      out += 3;
    }
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const double upright = d_->xmat[9 * torso_ + 8];
    if (task_ == Task::kUpright) return Tolerance{1, 1, 1}(upright);
    const double radii = m_->geom_size[3 * mouth_] + m_->geom_size[3 * target_];
    double to_target[3];
    MouthToTarget(to_target);
    const double in_target = Tolerance{0, radii, 2 * radii}(mujoco::Norm3(to_target));
    const double is_upright = 0.5 * (upright + 1);
    return (7 * in_target + is_upright) / 8;
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 3; ++k) out[k] = m_->geom_pos[3 * target_ + k];
  }

 private:
  // mouth_to_target(): the target relative to the mouth, in the mouth's frame (BLAS dgemv's fused
  // multiply-adds, as humanoid's extremities).
  void MouthToTarget(double* out) const {
    const double* frame = d_->geom_xmat + 9 * mouth_;
    double v[3];
    for (int k = 0; k < 3; ++k) v[k] = d_->geom_xpos[3 * target_ + k] - d_->geom_xpos[3 * mouth_ + k];
    for (int j = 0; j < 3; ++j) out[j] = std::fma(v[2], frame[6 + j], std::fma(v[1], frame[3 + j], v[0] * frame[j]));
  }

  const int root_, torso_, target_, mouth_;
  int joint_qpos_[kNumJoints], joint_dof_[kNumJoints];
};

}  // namespace pp::dm_control
