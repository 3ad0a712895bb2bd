// dm_control's pendulum domain (suite/pendulum.py): PendulumSwingup-v1.
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

class PendulumEnv final : public SuiteEnv<PendulumEnv, int> {
 public:
  static TaskInfo Info(Task /*task*/) { return {"pendulum", "swingup", 20, 0}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "pendulum.xml"); }
  static ObsLayout Layout(const mjModel& /*m*/, Task /*task*/) { return {{"orientation", {2}}, {"velocity", {1}}}; }

  PendulumEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task), pole_(Id(mjOBJ_BODY, "pole")), hinge_(Id(mjOBJ_JOINT, "hinge")) {}

 protected:
  void InitializeEpisode() override { d_->qpos[m_->jnt_qposadr[hinge_]] = random().Uniform(-M_PI, M_PI); }
  void Observe(double* out) override {
    out[0] = d_->xmat[9 * pole_ + 8];  // zz
    out[1] = d_->xmat[9 * pole_ + 2];  // xz
    out[2] = d_->qvel[m_->jnt_dofadr[hinge_]];
  }
  double GetReward() override {
    // _COSINE_BOUND = np.cos(np.deg2rad(_ANGLE_BOUND)); np.deg2rad(x) is x * (pi / 180).
    static const double kCosineBound = std::cos(8.0 * (M_PI / 180.0));
    return Tolerance{kCosineBound, 1}(d_->xmat[9 * pole_ + 8]);
  }

 private:
  const int pole_, hinge_;
};

}  // namespace pp::dm_control
