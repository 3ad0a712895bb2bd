// dm_control's hopper domain (suite/hopper.py): HopperStand-v1, HopperHop-v1.
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class HopperTask { kStand, kHop };

class HopperEnv final : public SuiteEnv<HopperEnv, HopperTask> {
 public:
  static constexpr double kStandHeight = 0.6;  // _STAND_HEIGHT
  static constexpr double kHopSpeed = 2;       // _HOP_SPEED

  static TaskInfo Info(Task task) { return {"hopper", task == Task::kStand ? "stand" : "hop", 20, .02}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "hopper.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) {
    return {{"position", {m.nq - 1}}, {"velocity", {m.nv}}, {"touch", {2}}};
  }

  HopperEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        torso_(Id(mjOBJ_BODY, "torso")),
        foot_(Id(mjOBJ_BODY, "foot")),
        speed_sensor_(Id(mjOBJ_SENSOR, "torso_subtreelinvel")),
        toe_sensor_(Id(mjOBJ_SENSOR, "touch_toe")),
        heel_sensor_(Id(mjOBJ_SENSOR, "touch_heel")) {}

 protected:
  void InitializeEpisode() override { RandomizeLimitedAndRotationalJoints(); }
  void Observe(double* out) override {
    for (int i = 1; i < m_->nq; ++i) *out++ = d_->qpos[i];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
    // np.log1p of the touch sensors (NumPy's log1p may be its own SIMD one: see the tests' tolerance).
    *out++ = std::log1p(Sensor(toe_sensor_)[0]);
    *out++ = std::log1p(Sensor(heel_sensor_)[0]);
  }
  double GetReward() override {
    const double height = d_->xipos[3 * torso_ + 2] - d_->xipos[3 * foot_ + 2];
    const double standing = Tolerance{kStandHeight, 2}(height);
    if (task_ == Task::kHop) {
      const double speed = Sensor(speed_sensor_)[0];
      return standing * Tolerance{kHopSpeed, kInf, kHopSpeed / 2, Sigmoid::kLinear, 0.5}(speed);
    }
    const Tolerance small{0, 0, 1, Sigmoid::kQuadratic, 0};
    double small_control = Mean([&](std::ptrdiff_t i) { return small(d_->ctrl[i], Operand::kArray); }, m_->nu);
    small_control = (small_control + 4) / 5;
    return standing * small_control;
  }

 private:
  const int torso_, foot_, speed_sensor_, toe_sensor_, heel_sensor_;
};

}  // namespace pp::dm_control
