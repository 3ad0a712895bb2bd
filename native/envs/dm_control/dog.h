// dm_control's dog domain (suite/dog.py): DogStand-v1, DogWalk-v1, DogTrot-v1, DogRun-v1, DogFetch-v1.
// The model reads its meshes and skin from dm_control/suite/dog_assets (its meshdir).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class DogTask { kStand, kWalk, kTrot, kRun, kFetch };

class DogEnv final : public SuiteEnv<DogEnv, DogTask> {
 public:
  static constexpr double kTimeLimit = 15;             // _DEFAULT_TIME_LIMIT
  static constexpr double kStandHeightFraction = 0.9;  // _STAND_HEIGHT_FRACTION
  static constexpr double kMaxUprightAngle = 30;       // _MAX_UPRIGHT_ANGLE (degrees)

  static double Speed(Task task) {  // _WALK_SPEED, _TROT_SPEED, _RUN_SPEED
    return task == Task::kTrot ? 3 : task == Task::kRun ? 9 : 1;
  }
  static TaskInfo Info(Task task) {
    static const char* const kNames[] = {"stand", "walk", "trot", "run", "fetch"};
    return {"dog", kNames[static_cast<int>(task)], kTimeLimit, .015};
  }
  // make_model(floor_size, remove_ball): the floor as large as the task's speed times the time
  // limit (fetch: 10), and without ball, target, their cameras and the walls but for fetch.
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    std::string xml = ReadText(suite_dir + "/dog.xml");
    const std::string size = task == Task::kFetch ? "10" : std::to_string(static_cast<int>(Speed(task) * kTimeLimit));
    ReplaceFirst(xml, "<geom name=\"floor\" type=\"plane\" size=\"10 10 0.1\"",
                 "<geom name=\"floor\" type=\"plane\" size=\"" + size + " " + size + " .1\"");
    if (task != Task::kFetch) {
      RemoveBody(xml, "ball");
      RemoveElements(xml, "<geom name=\"target\"");
      RemoveElements(xml, "<camera name=\"ball\"");
      RemoveElements(xml, "<camera name=\"head\"");
      for (const char* wall : {"wall_px", "wall_nx", "wall_py", "wall_ny"}) {
        RemoveElements(xml, std::string("<geom name=\"") + wall + "\"");
      }
    }
    return CompileModel(suite_dir, "dog.xml", xml);
  }
  static ObsLayout Layout(const mjModel& m, Task task) {
    int hinges = 0;
    for (int j = 0; j < m.njnt; ++j) hinges += m.jnt_type[j] == mjJNT_HINGE;
    ObsLayout obs{{"joint_angles", {hinges}},   {"joint_velocites", {hinges}},  // the suite's spelling
                  {"torso_pelvis_height", {2}}, {"z_projection", {9}},         {"torso_com_velocity", {3}},
                  {"inertial_sensors", {9}},    {"foot_forces", {12}},         {"touch_sensors", {4}},
                  {"actuator_state", {m.na}}};
    if (task == Task::kFetch) {
      obs.push_back({"ball_state", {6}});
      obs.push_back({"target_position", {3}});
    }
    return obs;
  }

  DogEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        root_qpos_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "root")]),
        skull_(Id(mjOBJ_BODY, "skull")),
        torso_(Id(mjOBJ_BODY, "torso")),
        pelvis_(Id(mjOBJ_BODY, "pelvis")),
        floor_(Id(mjOBJ_GEOM, "floor")),
        torso_linvel_(Id(mjOBJ_SENSOR, "torso_linvel")) {
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_type[j] == mjJNT_HINGE) hinges_.push_back(j);
    }
    for (const char* name : {"accelerometer", "velocimeter", "gyro"}) inertial_.push_back(Id(mjOBJ_SENSOR, name));
    for (const char* name : {"foot_L", "foot_R", "hand_L", "hand_R"}) foot_forces_.push_back(Id(mjOBJ_SENSOR, name));
    for (const char* name : {"palm_L", "palm_R", "sole_L", "sole_R"}) touch_.push_back(Id(mjOBJ_SENSOR, name));
    if (task == Task::kFetch) {
      ball_geom_ = Id(mjOBJ_GEOM, "ball");
      ball_qpos_ = m_->jnt_qposadr[Id(mjOBJ_JOINT, "ball_root")];
      ball_dof_ = m_->jnt_dofadr[Id(mjOBJ_JOINT, "ball_root")];
      target_ = Id(mjOBJ_GEOM, "target");
      head_site_ = Id(mjOBJ_SITE, "head");
      upper_bite_ = Id(mjOBJ_SITE, "upper_bite");
      lower_bite_ = Id(mjOBJ_SITE, "lower_bite");
    }
  }

 protected:
  void InitializeEpisode() override {
    // Stand.initialize_episode: the stand heights and body weight at the reset pose, a random
    // heading, root velocities and actuator activations.
    physics_.Reset();
    stand_height_[0] = d_->xpos[3 * torso_ + 2] * kStandHeightFraction;
    stand_height_[1] = d_->xpos[3 * pelvis_ + 2] * kStandHeightFraction;
    body_weight_ = -m_->opt.gravity[2] * m_->body_subtreemass[torso_];
    const double azimuth = random().Uniform(0, 2 * M_PI);
    d_->qpos[root_qpos_ + 3] = std::cos(azimuth / 2);
    d_->qpos[root_qpos_ + 4] = 0;
    d_->qpos[root_qpos_ + 5] = 0;
    d_->qpos[root_qpos_ + 6] = std::sin(azimuth / 2);
    d_->qvel[0] = 2 * random().StandardNormal();
    d_->qvel[1] = 2 * random().StandardNormal();
    d_->qvel[5] = 2 * random().StandardNormal();
    if (m_->nu != m_->na) throw std::logic_error("dog: every actuator must have an activation");
    for (int a = 0; a < m_->nu; ++a) {
      d_->act[a] = random().Uniform(m_->actuator_ctrlrange[2 * a], m_->actuator_ctrlrange[2 * a + 1]);
    }
    if (task_ != Task::kFetch) return;
    // Fetch: the ball thrown from a circle around the dog, roughly towards it.
    const double radius = 0.75 * m_->geom_size[3 * floor_];
    const double ball_azimuth = random().Uniform(0, 2 * M_PI);
    d_->qpos[ball_qpos_ + 0] = radius * std::sin(ball_azimuth);
    d_->qpos[ball_qpos_ + 1] = radius * std::cos(ball_azimuth);
    d_->qpos[ball_qpos_ + 2] = 0.05;
    const double vertical_height = random().Uniform(0, 3);
    const double gravity = -m_->opt.gravity[2];
    const double vertical_velocity = std::sqrt(2 * gravity * vertical_height);
    const double horizontal_speed = random().Uniform(0, 5);
    const double direction_x = -std::sin(ball_azimuth) + 0.05 * random().StandardNormal();
    const double direction_y = -std::cos(ball_azimuth) + 0.05 * random().StandardNormal();
    d_->qvel[ball_dof_ + 0] = horizontal_speed * direction_x;
    d_->qvel[ball_dof_ + 1] = horizontal_speed * direction_y;
    d_->qvel[ball_dof_ + 2] = vertical_velocity;
  }
  void Observe(double* out) override {
    for (int j : hinges_) *out++ = d_->qpos[m_->jnt_qposadr[j]];
    for (int j : hinges_) *out++ = d_->qvel[m_->jnt_dofadr[j]];
    *out++ = d_->xpos[3 * torso_ + 2];
    *out++ = d_->xpos[3 * pelvis_ + 2];
    for (int body : {skull_, torso_, pelvis_}) {
      for (int k = 6; k < 9; ++k) *out++ = d_->xmat[9 * body + k];  // zx, zy, zz
    }
    out = InFrame(Sensor(torso_linvel_), d_->xmat + 9 * torso_, out);
    for (int s : inertial_) {
      for (int k = 0; k < m_->sensor_dim[s]; ++k) *out++ = Sensor(s)[k];
    }
    for (int s : foot_forces_) {
      for (int k = 0; k < m_->sensor_dim[s]; ++k) *out++ = Sensor(s)[k];
    }
    for (int s : touch_) *out++ = Sensor(s)[0];
    for (int a = 0; a < m_->na; ++a) *out++ = d_->act[a];
    if (task_ != Task::kFetch) return;
    // ball_in_head_frame(), target_in_head_frame()
    const double* head_frame = d_->site_xmat + 9 * head_site_;
    const double* head_pos = d_->site_xpos + 3 * head_site_;
    double head_to_ball[3], head_to_ball_vel[3], head_to_target[3], head_vel[6], ball_vel[6];
    mj_objectVelocity(m_, d_, mjOBJ_SITE, head_site_, head_vel, 0);  // (angular, linear)
    mj_objectVelocity(m_, d_, mjOBJ_GEOM, ball_geom_, ball_vel, 0);
    for (int k = 0; k < 3; ++k) {
      head_to_ball[k] = d_->geom_xpos[3 * ball_geom_ + k] - head_pos[k];
      head_to_ball_vel[k] = ball_vel[3 + k] - head_vel[3 + k];
      head_to_target[k] = d_->geom_xpos[3 * target_ + k] - head_pos[k];
    }
    out = InFrame(head_to_ball, head_frame, out);
    out = InFrame(head_to_ball_vel, head_frame, out);
    InFrame(head_to_target, head_frame, out);
  }
  // np.prod of the reward factors: a left-to-right product.
  double GetReward() override {
    static const double kMinUprightCosine = std::cos(kMaxUprightAngle * (M_PI / 180.0));  // _MIN_UPRIGHT_COSINE
    double reward = Tolerance{stand_height_[0], kInf, stand_height_[0]}(d_->xpos[3 * torso_ + 2]);
    reward *= Tolerance{stand_height_[1], kInf, stand_height_[1]}(d_->xpos[3 * pelvis_ + 2]);
    const Tolerance upright{kMinUprightCosine, kInf, kMinUprightCosine + 1, Sigmoid::kLinear, 0};
    for (int body : {skull_, torso_, pelvis_}) reward *= upright(d_->xmat[9 * body + 8], Operand::kArray);
    double touch = 0.0;  // touch_sensors().sum(): four values, left to right
    for (int s : touch_) touch += Sensor(s)[0];
    reward *= Tolerance{body_weight_, kInf, body_weight_, Sigmoid::kLinear, 0.9}(touch);
    if (task_ == Task::kStand) return reward;
    if (task_ != Task::kFetch) {
      const double speed = Speed(task_);
      double forward_velocity[3];
      InFrame(Sensor(torso_linvel_), d_->xmat + 9 * torso_, forward_velocity);
      const double forward =
          Tolerance{speed, 2 * speed, std::max(1.0, speed), Sigmoid::kLinear, 0}(forward_velocity[0]);
      return reward * ((4 * forward + 1) / 5);
    }
    const double bite_radius = m_->site_size[3 * upper_bite_];
    constexpr double kBiteMargin = 2;
    const double* ball = d_->geom_xpos + 3 * ball_geom_;
    double upper[3], lower[3], to_target[3];
    for (int k = 0; k < 3; ++k) {
      upper[k] = ball[k] - d_->site_xpos[3 * upper_bite_ + k];
      lower[k] = ball[k] - d_->site_xpos[3 * lower_bite_ + k];
      to_target[k] = ball[k] - d_->geom_xpos[3 * target_ + k];
    }
    const double ball_to_mouth = 0.5 * (mujoco::Norm3(upper) + mujoco::Norm3(lower));
    double reach_ball = Tolerance{0, bite_radius, kBiteMargin, Sigmoid::kReciprocal}(ball_to_mouth);
    reach_ball = (6 * reach_ball + 1) / 7;
    const double target_radius = m_->geom_size[3 * target_];
    const double bring_margin = m_->geom_size[3 * floor_];
    const double ball_to_target = mujoco::Norm3(to_target);
    const double ball_near_target = Tolerance{0, target_radius, bring_margin, Sigmoid::kReciprocal}(ball_to_target);
    const double fetch_ball = (ball_near_target + 1) / 2;
    if (ball_to_target < 2 * target_radius) reach_ball = 1;
    return reward * reach_ball * fetch_ball;
  }

 private:
  // v.dot(frame): BLAS's fused multiply-adds.
  static double* InFrame(const double* v, const double* frame, double* out) {
    for (int j = 0; j < 3; ++j) *out++ = std::fma(v[2], frame[6 + j], std::fma(v[1], frame[3 + j], v[0] * frame[j]));
    return out;
  }

  const int root_qpos_, skull_, torso_, pelvis_, floor_, torso_linvel_;
  std::vector<int> hinges_, inertial_, foot_forces_, touch_;
  int ball_geom_ = -1, ball_qpos_ = -1, ball_dof_ = -1, target_ = -1, head_site_ = -1, upper_bite_ = -1,
      lower_bite_ = -1;
  double stand_height_[2] = {0, 0};
  double body_weight_ = 0;
};

}  // namespace pp::dm_control
