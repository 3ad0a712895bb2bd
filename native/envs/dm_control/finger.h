// dm_control's finger domain (suite/finger.py): FingerSpin-v1, FingerTurnEasy-v1, FingerTurnHard-v1.
#pragma once

#include <cmath>
#include <stdexcept>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

enum class FingerTask { kSpin, kTurnEasy, kTurnHard };

class FingerEnv final : public SuiteEnv<FingerEnv, FingerTask> {
 public:
  static constexpr bool kEditsModel = true;      // its target site and the hinge's damping, per episode
  static constexpr double kSpinVelocity = 15.0;  // _SPIN_VELOCITY
  static constexpr int kMaxAttempts = 1000;      // _set_random_joint_angles' max_attempts

  static TaskInfo Info(Task task) {
    const char* name = task == Task::kSpin ? "spin" : task == Task::kTurnEasy ? "turn_easy" : "turn_hard";
    return {"finger", name, 20, .02};
  }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "finger.xml"); }
  static ObsLayout Layout(const mjModel& /*m*/, Task task) {
    ObsLayout obs{{"position", {4}}, {"velocity", {3}}, {"touch", {2}}};
    if (task != Task::kSpin) {
      obs.push_back({"target_position", {2}});
      obs.push_back({"dist_to_target", {}});
    }
    return obs;
  }
  // The target the episode drew (turn tasks): model.site_pos['target'] and its radius.
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"target_pos", {3}}, {"target_size", {}}}; }

  FingerEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        target_radius_(task == Task::kTurnEasy ? 0.07 : 0.03),  // _EASY_TARGET_SIZE, _HARD_TARGET_SIZE
        target_site_(Id(mjOBJ_SITE, "target")),
        tip_site_(Id(mjOBJ_SITE, "tip")),
        hinge_(Id(mjOBJ_JOINT, "hinge")),
        cap1_(Id(mjOBJ_GEOM, "cap1")),
        proximal_(Id(mjOBJ_SENSOR, "proximal")),
        distal_(Id(mjOBJ_SENSOR, "distal")),
        tip_(Id(mjOBJ_SENSOR, "tip")),
        spinner_(Id(mjOBJ_SENSOR, "spinner")),
        target_(Id(mjOBJ_SENSOR, "target")),
        proximal_velocity_(Id(mjOBJ_SENSOR, "proximal_velocity")),
        distal_velocity_(Id(mjOBJ_SENSOR, "distal_velocity")),
        hinge_velocity_(Id(mjOBJ_SENSOR, "hinge_velocity")),
        touchtop_(Id(mjOBJ_SENSOR, "touchtop")),
        touchbottom_(Id(mjOBJ_SENSOR, "touchbottom")) {}

 protected:
  void InitializeEpisode() override {
    if (task_ == Task::kSpin) {
      m_->site_rgba[4 * target_site_ + 3] = 0;
      m_->site_rgba[4 * tip_site_ + 3] = 0;
      m_->dof_damping[m_->jnt_dofadr[hinge_]] = .03;
    } else {
      const double target_angle = random().Uniform(-M_PI, M_PI);
      const double hinge_x = d_->xanchor[3 * hinge_ + 0], hinge_z = d_->xanchor[3 * hinge_ + 2];
      const double* size = m_->geom_size + 3 * cap1_;
      const double radius = (size[0] + size[1]) + size[2];
      m_->site_pos[3 * target_site_ + 0] = hinge_x + radius * std::sin(target_angle);
      m_->site_pos[3 * target_site_ + 2] = hinge_z + radius * std::cos(target_angle);
      m_->site_size[3 * target_site_] = target_radius_;
    }
    // _set_random_joint_angles: redrawn until nothing touches.
    for (int attempt = 0;; ++attempt) {
      if (attempt == kMaxAttempts) {
        throw std::runtime_error("Could not find a collision-free state after 1000 attempts");
      }
      RandomizeLimitedAndRotationalJoints();
      physics_.AfterReset();
      if (d_->ncon == 0) break;
    }
  }
  void Observe(double* out) override {
    const double tip_x = Sensor(tip_)[0] - Sensor(spinner_)[0], tip_z = Sensor(tip_)[2] - Sensor(spinner_)[2];
    *out++ = Sensor(proximal_)[0];
    *out++ = Sensor(distal_)[0];
    *out++ = tip_x;
    *out++ = tip_z;
    *out++ = Sensor(proximal_velocity_)[0];
    *out++ = Sensor(distal_velocity_)[0];
    *out++ = Sensor(hinge_velocity_)[0];
    *out++ = std::log1p(Sensor(touchtop_)[0]);
    *out++ = std::log1p(Sensor(touchbottom_)[0]);
    if (task_ == Task::kSpin) return;
    *out++ = Sensor(target_)[0] - Sensor(spinner_)[0];
    *out++ = Sensor(target_)[2] - Sensor(spinner_)[2];
    *out++ = DistToTarget();
  }
  double GetReward() override {
    if (task_ == Task::kSpin) return Sensor(hinge_velocity_)[0] <= -kSpinVelocity ? 1.0 : 0.0;
    return DistToTarget() <= 0 ? 1.0 : 0.0;
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 3; ++k) out[k] = m_->site_pos[3 * target_site_ + k];
    out[3] = m_->site_size[3 * target_site_];
  }

 private:
  // np.linalg.norm(target_position - tip_position) - site_size['target', 0]
  double DistToTarget() const {
    const double dx = (Sensor(target_)[0] - Sensor(spinner_)[0]) - (Sensor(tip_)[0] - Sensor(spinner_)[0]);
    const double dz = (Sensor(target_)[2] - Sensor(spinner_)[2]) - (Sensor(tip_)[2] - Sensor(spinner_)[2]);
    return mujoco::Norm2(dx, dz) - m_->site_size[3 * target_site_];
  }

  const double target_radius_;
  const int target_site_, tip_site_, hinge_, cap1_;
  const int proximal_, distal_, tip_, spinner_, target_, proximal_velocity_, distal_velocity_, hinge_velocity_;
  const int touchtop_, touchbottom_;
};

}  // namespace pp::dm_control
