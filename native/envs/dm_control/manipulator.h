// dm_control's manipulator domain (suite/manipulator.py): ManipulatorBringBall-v1,
// ManipulatorBringPeg-v1, ManipulatorInsertBall-v1, ManipulatorInsertPeg-v1.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "envs/dm_control/planar_arm.h"
#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class ManipulatorTask { kBringBall, kBringPeg, kInsertBall, kInsertPeg };

class ManipulatorEnv final : public SuiteEnv<ManipulatorEnv, ManipulatorTask> {
 public:
  static constexpr bool kEditsModel = true;                // the target's body pose, per episode
  static constexpr double kClose = .01;                    // _CLOSE
  static constexpr double kPInHand = .1, kPInTarget = .1;  // _P_IN_HAND, _P_IN_TARGET
  static constexpr int kNumTouch = 5;                      // _TOUCH_SENSORS

  static bool UsePeg(Task task) { return task == Task::kBringPeg || task == Task::kInsertPeg; }
  static bool Insert(Task task) { return task == Task::kInsertBall || task == Task::kInsertPeg; }
  static TaskInfo Info(Task task) {
    static const char* const kNames[] = {"bring_ball", "bring_peg", "insert_ball", "insert_peg"};
    return {"manipulator", kNames[static_cast<int>(task)], 10, .01};
  }
  // make_model(use_peg, insert): manipulator.xml without the props the task does not use.
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    std::string xml = ReadText(suite_dir + "/manipulator.xml");
    const bool peg = UsePeg(task), insert = Insert(task);
    for (const char* prop : {"ball", "target_ball", "cup", "peg", "target_peg", "slot"}) {
      const std::string name = prop;
      const bool required = peg ? (name == "peg" || name == "target_peg" || (insert && name == "slot"))
                                : (name == "ball" || name == "target_ball" || (insert && name == "cup"));
      if (!required) RemoveBody(xml, name);
    }
    return CompileModel(suite_dir, "manipulator.xml", xml);
  }
  static ObsLayout Layout(const mjModel& /*m*/, Task /*task*/) {
    return {{"arm_pos", {PlanarArm::kNumJoints, 2}},
            {"arm_vel", {PlanarArm::kNumJoints}},
            {"touch", {kNumTouch}},
            {"hand_pos", {4}},
            {"object_pos", {4}},
            {"object_vel", {3}},
            {"target_pos", {4}}};
  }
  // The target (and receptacle) the episode drew: model.body_pos and body_quat of the target body.
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"target_body_pos", {3}}, {"target_body_quat", {4}}}; }

  ManipulatorEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        arm_(m_),
        object_name_(UsePeg(task) ? "peg" : "ball"),
        hand_(Id(mjOBJ_BODY, "hand")),
        object_(Id(mjOBJ_BODY, object_name_.c_str())),
        target_(Id(mjOBJ_BODY, UsePeg(task) ? "target_peg" : "target_ball")),
        receptacle_(Insert(task) ? Id(mjOBJ_BODY, UsePeg(task) ? "slot" : "cup") : -1),
        grasp_(Id(mjOBJ_SITE, "grasp")) {
    static const char* const kTouch[kNumTouch] = {"palm_touch", "finger_touch", "thumb_touch", "fingertip_touch",
                                                  "thumbtip_touch"};
    for (int k = 0; k < kNumTouch; ++k) touch_[k] = Id(mjOBJ_SENSOR, kTouch[k]);
    for (int k = 0; k < 3; ++k) {  // _object_joints: <object>_x, _z, _y
      const std::string joint = object_name_ + "_" + "xzy"[k];
      const int j = Id(mjOBJ_JOINT, joint.c_str());
      object_qpos_[k] = m_->jnt_qposadr[j];
      object_dof_[k] = m_->jnt_dofadr[j];
    }
    if (UsePeg(task)) {
      sites_[0] = Id(mjOBJ_SITE, "peg_grasp");
      sites_[1] = Id(mjOBJ_SITE, "peg_pinch");
      sites_[2] = Id(mjOBJ_SITE, "pinch");
      sites_[3] = Id(mjOBJ_SITE, "peg");
      sites_[4] = Id(mjOBJ_SITE, "target_peg");
      sites_[5] = Id(mjOBJ_SITE, "target_peg_tip");
      sites_[6] = Id(mjOBJ_SITE, "peg_tip");
    } else {
      sites_[0] = Id(mjOBJ_SITE, "ball");
      sites_[1] = Id(mjOBJ_SITE, "target_ball");
    }
  }

 protected:
  void InitializeEpisode() override {
    do {
      arm_.RandomAngles(random(), d_->qpos);
      const double target_x = random().Uniform(-.4, .4);
      const double target_z = random().Uniform(.1, .4);
      double target_angle;
      if (receptacle_ >= 0) {
        target_angle = random().Uniform(-M_PI / 3, M_PI / 3);
        SetPose(receptacle_, target_x, target_z, target_angle);
      } else {
        target_angle = random().Uniform(-M_PI, M_PI);
      }
      SetPose(target_, target_x, target_z, target_angle);
      const double probs[3] = {kPInHand, kPInTarget, 1 - kPInHand - kPInTarget};
      const int64_t init_type = random().Choice(probs, 3);  // in_hand, in_target, uniform
      double object_x, object_z, object_angle;
      if (init_type == 1) {
        object_x = target_x;
        object_z = target_z;
        object_angle = target_angle;
      } else if (init_type == 0) {
        physics_.AfterReset();
        object_x = d_->site_xpos[3 * grasp_ + 0];
        object_z = d_->site_xpos[3 * grasp_ + 2];
        // np.pi - np.arctan2(zx, xx) of the grasp site's frame. NumPy's arctan2 is SVML's on CPUs
        // with AVX-512, which rounds some arguments differently than libm's: see the tests.
        object_angle = M_PI - std::atan2(d_->site_xmat[9 * grasp_ + 6], d_->site_xmat[9 * grasp_ + 0]);
      } else {
        object_x = random().Uniform(-.5, .5);
        object_z = random().Uniform(0, .7);
        object_angle = random().Uniform(0, 2 * M_PI);
        d_->qvel[object_dof_[0]] = random().Uniform(-5, 5);
      }
      d_->qpos[object_qpos_[0]] = object_x;
      d_->qpos[object_qpos_[1]] = object_z;
      d_->qpos[object_qpos_[2]] = object_angle;
      physics_.AfterReset();
    } while (d_->ncon > 0);
  }
  void Observe(double* out) override {
    out = arm_.WritePositions(d_, out);
    out = arm_.WriteVelocities(d_, out);
    for (int k = 0; k < kNumTouch; ++k) *out++ = std::log1p(Sensor(touch_[k])[0]);
    out = WriteBody2dPose(d_, hand_, true, out);
    out = WriteBody2dPose(d_, object_, true, out);
    for (int k = 0; k < 3; ++k) *out++ = d_->qvel[object_dof_[k]];
    WriteBody2dPose(d_, target_, true, out);
  }
  double GetReward() override {
    auto is_close = [](double distance) { return Tolerance{0, kClose, kClose * 2}(distance); };
    if (!UsePeg(task_)) return is_close(SiteDistance(d_, sites_[0], sites_[1]));
    const double grasp = is_close(SiteDistance(d_, sites_[0], grasp_));
    const double pinch = is_close(SiteDistance(d_, sites_[1], sites_[2]));
    const double grasping = (grasp + pinch) / 2;
    const double bring = is_close(SiteDistance(d_, sites_[3], sites_[4]));
    const double bring_tip = is_close(SiteDistance(d_, sites_[5], sites_[6]));
    const double bringing = (bring + bring_tip) / 2;
    return std::max(bringing, grasping / 3);
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 3; ++k) out[k] = m_->body_pos[3 * target_ + k];
    for (int k = 0; k < 4; ++k) out[3 + k] = m_->body_quat[4 * target_ + k];
  }

 private:
  // model.body_pos[body, ['x', 'z']] and body_quat[body, ['qw', 'qy']] = cos, sin of angle / 2.
  void SetPose(int body, double x, double z, double angle) {
    m_->body_pos[3 * body + 0] = x;
    m_->body_pos[3 * body + 2] = z;
    m_->body_quat[4 * body + 0] = std::cos(angle / 2);
    m_->body_quat[4 * body + 2] = std::sin(angle / 2);
  }

  const PlanarArm arm_;
  const std::string object_name_;
  const int hand_, object_, target_, receptacle_, grasp_;
  int touch_[kNumTouch];
  int object_qpos_[3], object_dof_[3];
  int sites_[7] = {};
};

}  // namespace pp::dm_control
