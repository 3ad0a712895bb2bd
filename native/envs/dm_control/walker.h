// dm_control's walker domain (suite/walker.py): WalkerStand-v1, WalkerWalk-v1, WalkerRun-v1.
#pragma once

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class WalkerTask { kStand, kWalk, kRun };

class WalkerEnv final : public SuiteEnv<WalkerEnv, WalkerTask> {
 public:
  static constexpr double kStandHeight = 1.2;  // _STAND_HEIGHT

  static TaskInfo Info(Task task) {
    const char* name = task == Task::kStand ? "stand" : task == Task::kWalk ? "walk" : "run";
    return {"walker", name, 25, .025};
  }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "walker.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) {
    return {{"orientations", {2 * (m.nbody - 1)}}, {"height", {}}, {"velocity", {m.nv}}};
  }

  WalkerEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        move_speed_(task == Task::kStand  ? 0.0
                    : task == Task::kWalk ? 1.0
                                          : 8.0),
        torso_(Id(mjOBJ_BODY, "torso")),
        speed_sensor_(Id(mjOBJ_SENSOR, "torso_subtreelinvel")) {}

 protected:
  void InitializeEpisode() override { RandomizeLimitedAndRotationalJoints(); }
  void Observe(double* out) override {
    for (int b = 1; b < m_->nbody; ++b) {  // xmat[1:, ['xx', 'xz']].ravel()
      *out++ = d_->xmat[9 * b + 0];
      *out++ = d_->xmat[9 * b + 2];
    }
    *out++ = d_->xpos[3 * torso_ + 2];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const double standing = Tolerance{kStandHeight, kInf, kStandHeight / 2}(d_->xpos[3 * torso_ + 2]);
    const double upright = (1 + d_->xmat[9 * torso_ + 8]) / 2;
    const double stand_reward = (3 * standing + upright) / 4;
    if (move_speed_ == 0) return stand_reward;
    const double move_reward =
        Tolerance{move_speed_, kInf, move_speed_ / 2, Sigmoid::kLinear, 0.5}(Sensor(speed_sensor_)[0]);
    return stand_reward * (5 * move_reward + 1) / 6;
  }

 private:
  const double move_speed_;
  const int torso_, speed_sensor_;
};

}  // namespace pp::dm_control
