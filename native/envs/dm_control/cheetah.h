// dm_control's cheetah domain (suite/cheetah.py): CheetahRun-v1.
#pragma once

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

class CheetahEnv final : public SuiteEnv<CheetahEnv, int> {
 public:
  static constexpr double kRunSpeed = 10;  // _RUN_SPEED

  static TaskInfo Info(Task /*task*/) { return {"cheetah", "run", 10, 0}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "cheetah.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) { return {{"position", {m.nq - 1}}, {"velocity", {m.nv}}}; }

  CheetahEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task), speed_sensor_(Id(mjOBJ_SENSOR, "torso_subtreelinvel")) {}

 protected:
  // Limited joints uniform in their range (nq == njnt: one qpos per joint), then 200 physics
  // steps to let the cheetah settle (physics.step(nstep=200), run by Reset in parts), and the
  // clock back to 0.
  void InitializeEpisode() override {
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_limited[j] == 1) d_->qpos[j] = random().Uniform(m_->jnt_range[2 * j], m_->jnt_range[2 * j + 1]);
    }
    StepsInReset(200);
  }
  void EndInitializeEpisode() override { d_->time = 0; }
  void Observe(double* out) override {
    for (int i = 1; i < m_->nq; ++i) *out++ = d_->qpos[i];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    return Tolerance{kRunSpeed, kInf, kRunSpeed, Sigmoid::kLinear, 0}(Sensor(speed_sensor_)[0]);
  }

 private:
  const int speed_sensor_;
};

}  // namespace pp::dm_control
