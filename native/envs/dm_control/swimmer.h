// dm_control's swimmer domain (suite/swimmer.py): SwimmerSwimmer6-v1, SwimmerSwimmer15-v1.
#pragma once

#include <sstream>
#include <string>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class SwimmerTask { kSwimmer6, kSwimmer15 };

class SwimmerEnv final : public SuiteEnv<SwimmerEnv, SwimmerTask> {
 public:
  static constexpr bool kEditsModel = true;  // the target's geom and light positions, per episode
  static int NumBodies(Task task) { return task == Task::kSwimmer6 ? 6 : 15; }
  static TaskInfo Info(Task task) { return {"swimmer", task == Task::kSwimmer6 ? "swimmer6" : "swimmer15", 30, .03}; }
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    return CompileModel(suite_dir, "swimmer.xml", MakeModelXml(suite_dir, NumBodies(task)));
  }
  static ObsLayout Layout(const mjModel& m, Task task) {
    return {{"joints", {m.nq - 3}}, {"to_target", {2}}, {"body_velocities", {3 * NumBodies(task)}}};
  }
  // The target the episode drew: model.geom_pos['target'].
  static ObsLayout TaskStateLayout(Task /*task*/) { return {{"target_pos", {3}}}; }

  SwimmerEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        target_(Id(mjOBJ_GEOM, "target")),
        nose_(Id(mjOBJ_GEOM, "nose")),
        head_(Id(mjOBJ_BODY, "head")),
        target_light_(Id(mjOBJ_LIGHT, "target_light")) {}

 protected:
  void InitializeEpisode() override {
    RandomizeLimitedAndRotationalJoints();
    const bool close_target = random().RandomSample() < .2;
    const double target_box = close_target ? .3 : 2;
    const double x = random().Uniform(-target_box, target_box), y = random().Uniform(-target_box, target_box);
    m_->geom_pos[3 * target_ + 0] = x;
    m_->geom_pos[3 * target_ + 1] = y;
    m_->light_pos[3 * target_light_ + 0] = x;
    m_->light_pos[3 * target_light_ + 1] = y;
  }
  void Observe(double* out) override {
    for (int i = 3; i < m_->nq; ++i) *out++ = d_->qpos[i];
    NoseToTarget(out);
    out += 2;
    // body_velocities(): sensordata[12:] as rows of 6, columns vx, vy, wz.
    for (int i = 12; i + 6 <= m_->nsensordata; i += 6) {
      *out++ = d_->sensordata[i + 0];
      *out++ = d_->sensordata[i + 1];
      *out++ = d_->sensordata[i + 5];
    }
  }
  double GetReward() override {
    const double target_size = m_->geom_size[3 * target_];
    double to_target[2];
    NoseToTarget(to_target);
    return Tolerance{0, target_size, 5 * target_size, Sigmoid::kLongTail}(mujoco::Norm2(to_target[0], to_target[1]));
  }
  void TaskState(double* out) override {
    for (int k = 0; k < 3; ++k) out[k] = m_->geom_pos[3 * target_ + k];
  }

 private:
  // nose_to_target(): (target - nose).dot(head's xmat)[:2], BLAS dgemv's fused multiply-adds.
  void NoseToTarget(double* out) const {
    const double* frame = d_->xmat + 9 * head_;
    double v[3];
    for (int k = 0; k < 3; ++k) v[k] = d_->geom_xpos[3 * target_ + k] - d_->geom_xpos[3 * nose_ + k];
    for (int j = 0; j < 2; ++j) out[j] = std::fma(v[2], frame[6 + j], std::fma(v[1], frame[3 + j], v[0] * frame[j]));
  }

  // _make_model(n_bodies): swimmer.xml with n - 1 segments chained below the head, a motor, a
  // velocimeter and a gyro per segment, and the tracking cameras moved out by n / 6.
  static std::string MakeModelXml(const std::string& suite_dir, int n) {
    std::string xml = ReadText(suite_dir + "/swimmer.xml");
    const double joint_limit = 360.0 / n;
    std::string bodies, closing, actuators, sensors;
    for (int b = 0; b < n - 1; ++b) {
      const std::string i = std::to_string(b);
      bodies += "<body name=\"segment_" + i + "\" pos=\"0 .1 0\"><geom class=\"visual\" name=\"visual_" + i +
                "\"/><geom class=\"inertial\" name=\"inertial_" + i + "\"/><site name=\"site_" + i +
                "\"/><joint name=\"joint_" + i + "\" range=\"" + PyFloat(-joint_limit) + " " + PyFloat(joint_limit) +
                "\"/>";
      closing += "</body>";
      actuators += "<motor name=\"motor_" + i + "\" joint=\"joint_" + i + "\"/>";
      sensors += "<velocimeter name=\"velocimeter_" + i + "\" site=\"site_" + i + "\"/><gyro name=\"gyro_" + i +
                 "\" site=\"site_" + i + "\"/>";
    }
    ReplaceFirst(xml, "<site name=\"head\"/>", "<site name=\"head\"/>" + bodies + closing);
    ReplaceFirst(xml, "</mujoco>", "<actuator>" + actuators + "</actuator><sensor>" + sensors + "</sensor></mujoco>");
    const double scale = n / 6.0;
    for (const char* pos : {"0 -.2 .5", "-.9 .5 .15"}) {  // the trackcom cameras' positions
      std::istringstream dims(pos);
      std::string scaled;
      for (double dim; dims >> dim;) {
        if (!scaled.empty()) scaled += ' ';
        scaled += PyFloat(dim * scale);
      }
      std::string original = "pos=\"", replacement = "pos=\"";
      original += pos;
      original += '"';
      replacement += scaled;
      replacement += '"';
      ReplaceFirst(xml, original, replacement);
    }
    return xml;
  }

  const int target_, nose_, head_, target_light_;
};

}  // namespace pp::dm_control
