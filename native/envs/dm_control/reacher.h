// dm_control's reacher domain (suite/reacher.py): ReacherEasy-v1, ReacherHard-v1.
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class ReacherTask { kEasy, kHard };

class ReacherEnv final : public SuiteEnv<ReacherEnv, ReacherTask> {
 public:
  static constexpr bool kEditsModel = true;  // the target's size and position, per episode
  static TaskInfo Info(Task task) { return {"reacher", task == Task::kEasy ? "easy" : "hard", 20, 0}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "reacher.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) {
    return {{"position", {m.nq}}, {"to_target", {2}}, {"velocity", {m.nv}}};
  }
  // The target the episode drew: model.geom_pos['target'] (x, y, z) and its radius.
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"target_pos", {3}}, {"target_size", {}}}; }

  ReacherEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        target_size_(task == Task::kEasy ? .05 : .015),  // _BIG_TARGET, _SMALL_TARGET
        target_(Id(mjOBJ_GEOM, "target")),
        finger_(Id(mjOBJ_GEOM, "finger")) {}

 protected:
  void InitializeEpisode() override {
    m_->geom_size[3 * target_] = target_size_;
    RandomizeLimitedAndRotationalJoints();
    const double angle = random().Uniform(0, 2 * M_PI);
    const double radius = random().Uniform(.05, .20);
    m_->geom_pos[3 * target_ + 0] = radius * std::sin(angle);
    m_->geom_pos[3 * target_ + 1] = radius * std::cos(angle);
  }
  void Observe(double* out) override {
    for (int i = 0; i < m_->nq; ++i) *out++ = d_->qpos[i];
    *out++ = d_->geom_xpos[3 * target_ + 0] - d_->geom_xpos[3 * finger_ + 0];
    *out++ = d_->geom_xpos[3 * target_ + 1] - d_->geom_xpos[3 * finger_ + 1];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const double radii = m_->geom_size[3 * target_] + m_->geom_size[3 * finger_];
    const double dx = d_->geom_xpos[3 * target_ + 0] - d_->geom_xpos[3 * finger_ + 0];
    const double dy = d_->geom_xpos[3 * target_ + 1] - d_->geom_xpos[3 * finger_ + 1];
    return Tolerance{0, radii}(mujoco::Norm2(dx, dy));
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 3; ++k) out[k] = m_->geom_pos[3 * target_ + k];
    out[3] = m_->geom_size[3 * target_];
  }

 private:
  const double target_size_;
  const int target_, finger_;
};

}  // namespace pp::dm_control
