// dm_control's stacker domain (suite/stacker.py): StackerStack2-v1, StackerStack4-v1.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "envs/dm_control/planar_arm.h"
#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class StackerTask { kStack2, kStack4 };

class StackerEnv final : public SuiteEnv<StackerEnv, StackerTask> {
 public:
  static constexpr bool kEditsModel = true;  // the target's body position, per episode
  static constexpr double kClose = .01;      // _CLOSE
  static constexpr int kMaxBoxes = 4;

  static int NumBoxes(Task task) { return task == Task::kStack2 ? 2 : 4; }
  static TaskInfo Info(Task task) { return {"stacker", task == Task::kStack2 ? "stack_2" : "stack_4", 10, .01}; }
  // make_model(n_boxes): stacker.xml without boxes n_boxes..3.
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    std::string xml = ReadText(suite_dir + "/stacker.xml");
    for (int b = NumBoxes(task); b < kMaxBoxes; ++b) RemoveBody(xml, "box" + std::to_string(b));
    return CompileModel(suite_dir, "stacker.xml", xml);
  }
  static ObsLayout Layout(const mjModel& m, Task task) {
    const int n = NumBoxes(task);
    return {{"arm_pos", {PlanarArm::kNumJoints, 2}},
            {"arm_vel", {PlanarArm::kNumJoints}},
            {"touch", {m.nsensordata}},
            {"hand_pos", {4}},
            {"box_pos", {n, 4}},
            {"box_vel", {3 * n}},
            {"target_pos", {2}}};
  }
  // The target the episode drew: model.body_pos['target'].
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"target_pos", {3}}}; }

  StackerEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        arm_(m_),
        hand_(Id(mjOBJ_BODY, "hand")),
        target_body_(Id(mjOBJ_BODY, "target")),
        target_geom_(Id(mjOBJ_GEOM, "target")),
        target_site_(Id(mjOBJ_SITE, "target")),
        grasp_site_(Id(mjOBJ_SITE, "grasp")) {
    for (int b = 0; b < NumBoxes(task); ++b) {
      const std::string name = "box" + std::to_string(b);
      boxes_.push_back(Box{Id(mjOBJ_BODY, name.c_str()), Id(mjOBJ_SITE, name.c_str()), Joint(name + "_x"),
                           Joint(name + "_y"), Joint(name + "_z")});
    }
  }

 protected:
  void InitializeEpisode() override {
    const int n = NumBoxes(task_);
    do {
      arm_.RandomAngles(random(), d_->qpos);
      const int64_t target_height = 2 * random().Randint(0, n) + 1;
      const double box_size = m_->geom_size[3 * target_geom_];
      m_->body_pos[3 * target_body_ + 2] = box_size * static_cast<double>(target_height);
      m_->body_pos[3 * target_body_ + 0] = random().Uniform(-.37, .37);
      for (const Box& box : boxes_) {
        d_->qpos[box.x.first] = random().Uniform(.1, .3);
        d_->qpos[box.z.first] = random().Uniform(0, .7);
        d_->qpos[box.y.first] = random().Uniform(0, 2 * M_PI);
      }
      physics_.AfterReset();
    } while (d_->ncon > 0);
  }
  void Observe(double* out) override {
    out = arm_.WritePositions(d_, out);
    out = arm_.WriteVelocities(d_, out);
    for (int i = 0; i < m_->nsensordata; ++i) *out++ = std::log1p(d_->sensordata[i]);
    out = WriteBody2dPose(d_, hand_, true, out);
    for (const Box& box : boxes_) out = WriteBody2dPose(d_, box.body, true, out);
    for (const Box& box : boxes_) {  // joint_vel of box<i>_x, _y, _z
      *out++ = d_->qvel[box.x.second];
      *out++ = d_->qvel[box.y.second];
      *out++ = d_->qvel[box.z.second];
    }
    WriteBody2dPose(d_, target_body_, false, out);
  }
  double GetReward() override {
    const double box_size = m_->geom_size[3 * target_geom_];
    double min_distance = SiteDistance(d_, boxes_[0].site, target_site_);
    for (std::size_t b = 1; b < boxes_.size(); ++b) {
      min_distance = std::min(min_distance, SiteDistance(d_, boxes_[b].site, target_site_));
    }
    const double box_is_close = Tolerance{0, 0, 2 * box_size}(min_distance);
    const double hand_is_far = Tolerance{.1, kInf, kClose}(SiteDistance(d_, grasp_site_, target_site_));
    return box_is_close * hand_is_far;
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 3; ++k) out[k] = m_->body_pos[3 * target_body_ + k];
  }

 private:
  // A joint's (qpos address, dof address).
  std::pair<int, int> Joint(const std::string& name) const {
    const int j = Id(mjOBJ_JOINT, name.c_str());
    return {m_->jnt_qposadr[j], m_->jnt_dofadr[j]};
  }
  struct Box {
    int body, site;
    std::pair<int, int> x, y, z;
  };

  const PlanarArm arm_;
  const int hand_, target_body_, target_geom_, target_site_, grasp_site_;
  std::vector<Box> boxes_;
};

}  // namespace pp::dm_control
