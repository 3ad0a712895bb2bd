// dm_control's humanoid and humanoid_CMU domains (suite/humanoid.py, suite/humanoid_CMU.py):
// HumanoidStand-v1, HumanoidWalk-v1, HumanoidRun-v1, HumanoidRunPureState-v1, HumanoidCMUStand-v1,
// HumanoidCMUWalk-v1, HumanoidCMURun-v1 (the same task on the CMU model, its thorax for the torso).
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class HumanoidTask { kStand, kWalk, kRun, kRunPureState, kCMUStand, kCMUWalk, kCMURun };

class HumanoidEnv final : public SuiteEnv<HumanoidEnv, HumanoidTask> {
 public:
  static constexpr double kStandHeight = 1.4;  // _STAND_HEIGHT

  static bool IsCMU(Task task) { return task >= Task::kCMUStand; }
  static TaskInfo Info(Task task) {
    static const char* const kNames[] = {"stand", "walk", "run", "run_pure_state", "stand", "walk", "run"};
    const char* name = kNames[static_cast<int>(task)];
    return IsCMU(task) ? TaskInfo{"humanoid_CMU", name, 20, 0.02} : TaskInfo{"humanoid", name, 25, .025};
  }
  static ModelPtr Model(const Config& config, Task task) {
    return SuiteModel(config, IsCMU(task) ? "humanoid_CMU.xml" : "humanoid.xml");
  }
  static ObsLayout Layout(const mjModel& m, Task task) {
    if (task == Task::kRunPureState) return {{"position", {m.nq}}, {"velocity", {m.nv}}};
    return {{"joint_angles", {m.nq - 7}}, {"head_height", {}},   {"extremities", {12}},
            {"torso_vertical", {3}},      {"com_velocity", {3}}, {"velocity", {m.nv}}};
  }

  HumanoidEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        move_speed_(task == Task::kStand || task == Task::kCMUStand ? 0.0
                    : task == Task::kWalk || task == Task::kCMUWalk ? 1.0
                                                                    : 10.0),
        torso_(Id(mjOBJ_BODY, IsCMU(task) ? "thorax" : "torso")),
        head_(Id(mjOBJ_BODY, "head")),
        limbs_{Id(mjOBJ_BODY, IsCMU(task) ? "lhand" : "left_hand"), Id(mjOBJ_BODY, IsCMU(task) ? "lfoot" : "left_foot"),
               Id(mjOBJ_BODY, IsCMU(task) ? "rhand" : "right_hand"),
               Id(mjOBJ_BODY, IsCMU(task) ? "rfoot" : "right_foot")},
        com_velocity_(Id(mjOBJ_SENSOR, IsCMU(task) ? "thorax_subtreelinvel" : "torso_subtreelinvel")),
        upright_(IsCMU(task) ? 7 : 8) {}

 protected:
  // Random joint angles (the root's orientation included), redrawn while anything penetrates.
  void InitializeEpisode() override {
    do {
      RandomizeLimitedAndRotationalJoints();
      physics_.AfterReset();
    } while (d_->ncon > 0);
  }
  void Observe(double* out) override {
    if (task_ == Task::kRunPureState) {
      for (int i = 0; i < m_->nq; ++i) *out++ = d_->qpos[i];
      for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
      return;
    }
    for (int i = 7; i < m_->nq; ++i) *out++ = d_->qpos[i];
    *out++ = d_->xpos[3 * head_ + 2];
    // extremities(): each limb's position relative to the torso, in the torso's frame:
    // torso_to_limb.dot(torso_frame), BLAS dgemv's fused multiply-adds.
    const double* frame = d_->xmat + 9 * torso_;
    const double* torso_pos = d_->xpos + 3 * torso_;
    for (int limb : limbs_) {
      double v[3];
      for (int k = 0; k < 3; ++k) v[k] = d_->xpos[3 * limb + k] - torso_pos[k];
      for (int j = 0; j < 3; ++j) *out++ = std::fma(v[2], frame[6 + j], std::fma(v[1], frame[3 + j], v[0] * frame[j]));
    }
    for (int k = 6; k < 9; ++k) *out++ = d_->xmat[9 * torso_ + k];  // ['zx', 'zy', 'zz']
    for (int k = 0; k < 3; ++k) *out++ = Sensor(com_velocity_)[k];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const double standing = Tolerance{kStandHeight, kInf, kStandHeight / 4}(d_->xpos[3 * head_ + 2]);
    // torso_upright() is the torso's zz; humanoid_CMU's thorax_upright() is the thorax's zy.
    const double upright = Tolerance{0.9, kInf, 1.9, Sigmoid::kLinear, 0}(d_->xmat[9 * torso_ + upright_]);
    const double stand_reward = standing * upright;
    const Tolerance small{0, 0, 1, Sigmoid::kQuadratic, 0};
    double small_control = Mean([&](std::ptrdiff_t i) { return small(d_->ctrl[i], Operand::kArray); }, m_->nu);
    small_control = (4 + small_control) / 5;
    const double* com_velocity = Sensor(com_velocity_);
    if (move_speed_ == 0) {
      const Tolerance still{0, 0, 2};
      const double dont_move = Mean([&](std::ptrdiff_t k) { return still(com_velocity[k], Operand::kArray); }, 2);
      return small_control * stand_reward * dont_move;
    }
    const double speed = mujoco::Norm2(com_velocity[0], com_velocity[1]);
    double move = Tolerance{move_speed_, kInf, move_speed_, Sigmoid::kLinear, 0}(speed);
    move = (5 * move + 1) / 6;
    return small_control * stand_reward * move;
  }

 private:
  const double move_speed_;
  const int torso_, head_;
  const int limbs_[4];
  const int com_velocity_;
  const int upright_;  // the xmat entry of *_upright(): zz (8) or zy (7)
};

}  // namespace pp::dm_control
