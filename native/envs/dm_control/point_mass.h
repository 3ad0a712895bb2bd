// dm_control's point_mass domain (suite/point_mass.py): PointMassEasy-v1, PointMassHard-v1.
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class PointMassTask { kEasy, kHard };

class PointMassEnv final : public SuiteEnv<PointMassEnv, PointMassTask> {
 public:
  static constexpr bool kEditsModel = true;  // the tendons' wrap parameters (its gains), per episode
  static TaskInfo Info(Task task) { return {"point_mass", task == Task::kEasy ? "easy" : "hard", 20, 0}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "point_mass.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) { return {{"position", {m.nq}}, {"velocity", {m.nv}}}; }
  // The gains the episode drew (hard): model.wrap_prm[:4], dir1 then dir2.
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"wrap_prm", {4}}}; }

  PointMassEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task), target_(Id(mjOBJ_GEOM, "target")), mass_(Id(mjOBJ_GEOM, "pointmass")) {}

 protected:
  void InitializeEpisode() override {
    RandomizeLimitedAndRotationalJoints();
    if (task_ != Task::kHard) return;
    // Each control actuates a random unit combination of the joints; the two directions are
    // redrawn until |dir1 . dir2| <= 0.9 (np.dot and np.linalg.norm are BLAS's fused ones).
    double dir1[2], dir2[2];
    RandomDirection(dir1);
    do {
      RandomDirection(dir2);
    } while (std::abs(std::fma(dir1[1], dir2[1], dir1[0] * dir2[0])) > 0.9);
    m_->wrap_prm[0] = dir1[0];
    m_->wrap_prm[1] = dir1[1];
    m_->wrap_prm[2] = dir2[0];
    m_->wrap_prm[3] = dir2[1];
  }
  void Observe(double* out) override {
    for (int i = 0; i < m_->nq; ++i) *out++ = d_->qpos[i];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const double target_size = m_->geom_size[3 * target_];
    double to_target[3];
    for (int k = 0; k < 3; ++k) to_target[k] = d_->geom_xpos[3 * target_ + k] - d_->geom_xpos[3 * mass_ + k];
    const double near_target = Tolerance{0, target_size, target_size}(mujoco::Norm3(to_target));
    const Tolerance small{0, 0, 1, Sigmoid::kQuadratic, 0};
    const double control_reward = Mean([&](std::ptrdiff_t i) { return small(d_->ctrl[i], Operand::kArray); }, m_->nu);
    return near_target * ((control_reward + 4) / 5);
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 4; ++k) out[k] = m_->wrap_prm[k];
  }

 private:
  void RandomDirection(double* dir) {
    dir[0] = random().StandardNormal();
    dir[1] = random().StandardNormal();
    const double norm = mujoco::Norm2(dir[0], dir[1]);
    dir[0] /= norm;
    dir[1] /= norm;
  }

  const int target_, mass_;
};

}  // namespace pp::dm_control
