// dm_control's acrobot domain (suite/acrobot.py): AcrobotSwingup-v1, AcrobotSwingupSparse-v1.
#pragma once

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class AcrobotTask { kSwingup, kSwingupSparse };

class AcrobotEnv final : public SuiteEnv<AcrobotEnv, AcrobotTask> {
 public:
  static TaskInfo Info(Task task) { return {"acrobot", task == Task::kSwingup ? "swingup" : "swingup_sparse", 10, 0}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "acrobot.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) { return {{"orientations", {4}}, {"velocity", {m.nv}}}; }

  AcrobotEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        upper_(Id(mjOBJ_BODY, "upper_arm")),
        lower_(Id(mjOBJ_BODY, "lower_arm")),
        shoulder_(Id(mjOBJ_JOINT, "shoulder")),
        elbow_(Id(mjOBJ_JOINT, "elbow")),
        target_(Id(mjOBJ_SITE, "target")),
        tip_(Id(mjOBJ_SITE, "tip")) {}

 protected:
  void InitializeEpisode() override {
    // qpos[['shoulder', 'elbow']] = uniform(-pi, pi, 2)
    d_->qpos[m_->jnt_qposadr[shoulder_]] = random().Uniform(-M_PI, M_PI);
    d_->qpos[m_->jnt_qposadr[elbow_]] = random().Uniform(-M_PI, M_PI);
  }
  void Observe(double* out) override {
    out[0] = d_->xmat[9 * upper_ + 2];  // horizontal: xz
    out[1] = d_->xmat[9 * lower_ + 2];
    out[2] = d_->xmat[9 * upper_ + 8];  // vertical: zz
    out[3] = d_->xmat[9 * lower_ + 8];
    for (int i = 0; i < m_->nv; ++i) out[4 + i] = d_->qvel[i];
  }
  double GetReward() override {
    double tip_to_target[3];
    for (int k = 0; k < 3; ++k) tip_to_target[k] = d_->site_xpos[3 * target_ + k] - d_->site_xpos[3 * tip_ + k];
    const double target_radius = m_->site_size[3 * target_];
    const double margin = task_ == Task::kSwingupSparse ? 0 : 1;
    return Tolerance{0, target_radius, margin}(mujoco::Norm3(tip_to_target));
  }

 private:
  const int upper_, lower_, shoulder_, elbow_, target_, tip_;
};

}  // namespace pp::dm_control
