// dm_control's quadruped domain (suite/quadruped.py): QuadrupedWalk-v1, QuadrupedRun-v1,
// QuadrupedFetch-v1. (QuadrupedEscape-v1 is not ported: its terrain is scipy.ndimage.zoom's cubic
// spline of random bumps.)
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class QuadrupedTask { kWalk, kRun, kFetch };

class QuadrupedEnv final : public SuiteEnv<QuadrupedEnv, QuadrupedTask> {
 public:
  static constexpr double kRunSpeed = 5, kWalkSpeed = 0.5;  // _RUN_SPEED, _WALK_SPEED
  static constexpr int kMaxAttempts = 10000;                // _find_non_contacting_height's

  static TaskInfo Info(Task task) {
    static const char* const kNames[] = {"walk", "run", "fetch"};
    return {"quadruped", kNames[static_cast<int>(task)], 20, .02};
  }
  // make_model(floor_size, terrain=False, rangefinders=False, walls_and_ball): walk and run on a
  // floor of time limit x speed (no walls, ball or target), fetch with them.
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    std::string xml = ReadText(suite_dir + "/quadruped.xml");
    if (task != Task::kFetch) {
      const std::string size = task == Task::kWalk ? "10.0" : "100";  // f'{floor_size}': 20 * .5, 20 * 5
      ReplaceFirst(xml, "<geom name=\"floor\" type=\"plane\" size=\"15 15 .5\"",
                   "<geom name=\"floor\" type=\"plane\" size=\"" + size + " " + size + " .5\"");
      for (const char* wall : {"wall_px", "wall_py", "wall_nx", "wall_ny"}) {
        RemoveElements(xml, std::string("<geom name=\"") + wall + "\"");
      }
      RemoveBody(xml, "ball");
      RemoveElements(xml, "<site name=\"target\"");
    }
    RemoveElements(xml, "<geom name=\"terrain\"");
    RemoveElements(xml, "<rangefinder ");
    return CompileModel(suite_dir, "quadruped.xml", xml);
  }
  static ObsLayout Layout(const mjModel& m, Task task) {
    int hinges = 0, force_torque = 0;
    for (int j = 0; j < m.njnt; ++j) hinges += m.jnt_type[j] == mjJNT_HINGE;
    for (int s = 0; s < m.nsensor; ++s) {
      if (m.sensor_type[s] == mjSENS_FORCE || m.sensor_type[s] == mjSENS_TORQUE) force_torque += m.sensor_dim[s];
    }
    ObsLayout obs{{"egocentric_state", {2 * hinges + m.na}},
                  {"torso_velocity", {3}},
                  {"torso_upright", {}},
                  {"imu", {6}},
                  {"force_torque", {force_torque}}};
    if (task == Task::kFetch) {
      obs.push_back({"ball_state", {9}});
      obs.push_back({"target_position", {3}});
    }
    return obs;
  }

  QuadrupedEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        root_qpos_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "root")]),
        root_dof_(m_->jnt_dofadr[Id(mjOBJ_JOINT, "root")]),
        torso_(Id(mjOBJ_BODY, "torso")),
        floor_(Id(mjOBJ_GEOM, "floor")),
        velocimeter_(Id(mjOBJ_SENSOR, "velocimeter")),
        workspace_(Id(mjOBJ_SITE, "workspace")) {
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_type[j] == mjJNT_HINGE) hinges_.push_back(j);
    }
    // _get_sensor_names(types): the sensors of those types, in id order.
    for (int s = 0; s < m_->nsensor; ++s) {
      const int type = m_->sensor_type[s];
      if (type == mjSENS_GYRO || type == mjSENS_ACCELEROMETER) imu_.push_back(s);
      if (type == mjSENS_FORCE || type == mjSENS_TORQUE) force_torque_.push_back(s);
    }
    if (task == Task::kFetch) {
      ball_ = Id(mjOBJ_BODY, "ball");
      ball_geom_ = Id(mjOBJ_GEOM, "ball");
      ball_qpos_ = m_->jnt_qposadr[Id(mjOBJ_JOINT, "ball_root")];
      ball_dof_ = m_->jnt_dofadr[Id(mjOBJ_JOINT, "ball_root")];
      target_ = Id(mjOBJ_SITE, "target");
    }
  }

 protected:
  void InitializeEpisode() override {
    if (task_ != Task::kFetch) {
      double orientation[4];
      for (double& q : orientation) q = random().StandardNormal();
      Normalize4(orientation, orientation);
      FindNonContactingHeight(orientation, 0.0, 0.0);
      return;
    }
    const double azimuth = random().Uniform(0, 2 * M_PI);
    const double orientation[4] = {std::cos(azimuth / 2), 0, 0, std::sin(azimuth / 2)};
    const double spawn_radius = 0.9 * m_->geom_size[3 * floor_];
    const double x = random().Uniform(-spawn_radius, spawn_radius), y = random().Uniform(-spawn_radius, spawn_radius);
    FindNonContactingHeight(orientation, x, y);
    d_->qpos[ball_qpos_ + 0] = random().Uniform(-spawn_radius, spawn_radius);
    d_->qpos[ball_qpos_ + 1] = random().Uniform(-spawn_radius, spawn_radius);
    d_->qpos[ball_qpos_ + 2] = 2;
    d_->qvel[ball_dof_ + 0] = 5 * random().StandardNormal();
    d_->qvel[ball_dof_ + 1] = 5 * random().StandardNormal();
  }
  void Observe(double* out) override {
    for (int j : hinges_) *out++ = d_->qpos[m_->jnt_qposadr[j]];
    for (int j : hinges_) *out++ = d_->qvel[m_->jnt_dofadr[j]];
    for (int i = 0; i < m_->na; ++i) *out++ = d_->act[i];
    for (int k = 0; k < 3; ++k) *out++ = Sensor(velocimeter_)[k];
    *out++ = d_->xmat[9 * torso_ + 8];
    for (int s : imu_) {
      for (int k = 0; k < m_->sensor_dim[s]; ++k) *out++ = Sensor(s)[k];
    }
    // np.arcsinh of the force and torque sensors (SVML's on AVX-512 NumPy: see the tests' tolerance).
    for (int s : force_torque_) {
      for (int k = 0; k < m_->sensor_dim[s]; ++k) *out++ = std::asinh(Sensor(s)[k]);
    }
    if (task_ != Task::kFetch) return;
    // ball_state(): rows (ball - torso position, ball - root linear velocity, ball angular
    // velocity) times the torso frame; target_position(): target - torso in the torso frame.
    double rows[3][3];
    for (int k = 0; k < 3; ++k) {
      rows[0][k] = d_->xpos[3 * ball_ + k] - d_->xpos[3 * torso_ + k];
      rows[1][k] = d_->qvel[ball_dof_ + k] - d_->qvel[root_dof_ + k];
      rows[2][k] = d_->qvel[ball_dof_ + 3 + k];
    }
    for (const auto& row : rows) out = InTorsoFrame(row, out);
    double to_target[3];
    for (int k = 0; k < 3; ++k) to_target[k] = d_->site_xpos[3 * target_ + k] - d_->xpos[3 * torso_ + k];
    InTorsoFrame(to_target, out);
  }
  double GetReward() override {
    const double upright = UprightReward();
    if (task_ != Task::kFetch) {
      const double speed = task_ == Task::kWalk ? kWalkSpeed : kRunSpeed;
      return upright * Tolerance{speed, kInf, speed, Sigmoid::kLinear, 0.5}(Sensor(velocimeter_)[0]);
    }
    const double arena_radius = m_->geom_size[3 * floor_] * std::sqrt(2.0);
    const double workspace_radius = m_->site_size[3 * workspace_];
    const double ball_radius = m_->geom_size[3 * ball_geom_];
    const double self_to_ball = mujoco::Norm2(d_->site_xpos[3 * workspace_ + 0] - d_->xpos[3 * ball_ + 0],
                                              d_->site_xpos[3 * workspace_ + 1] - d_->xpos[3 * ball_ + 1]);
    const double reach = Tolerance{0, workspace_radius + ball_radius, arena_radius, Sigmoid::kLinear, 0}(self_to_ball);
    const double ball_to_target = mujoco::Norm2(d_->site_xpos[3 * target_ + 0] - d_->xpos[3 * ball_ + 0],
                                                d_->site_xpos[3 * target_ + 1] - d_->xpos[3 * ball_ + 1]);
    const double target_radius = m_->site_size[3 * target_];
    const double fetch = Tolerance{0, target_radius, arena_radius, Sigmoid::kLinear, 0}(ball_to_target);
    return upright * (reach * (0.5 + 0.5 * fetch));
  }

 private:
  // _upright_reward(physics) with deviation_angle 0: np.cos(np.deg2rad(0)) is 1.
  double UprightReward() const {
    constexpr double kDeviation = 1.0;
    return Tolerance{kDeviation, kInf, 1 + kDeviation, Sigmoid::kLinear, 0}(d_->xmat[9 * torso_ + 8]);
  }
  // v.dot(torso_frame): BLAS's fused multiply-adds.
  double* InTorsoFrame(const double* v, double* out) const {
    const double* frame = d_->xmat + 9 * torso_;
    for (int j = 0; j < 3; ++j) *out++ = std::fma(v[2], frame[6 + j], std::fma(v[1], frame[3 + j], v[0] * frame[j]));
    return out;
  }
  // _find_non_contacting_height: from z = 0 up in steps of 0.01, a fresh reset_context with the root
  // at (x, y, z) and `orientation`, until nothing touches (PhysicsErrors of after_reset swallowed).
  void FindNonContactingHeight(const double* orientation, double x, double y) {
    double z = 0.0;
    int attempts = 0;
    do {
      physics_.Reset();
      d_->qpos[root_qpos_ + 0] = x;
      d_->qpos[root_qpos_ + 1] = y;
      d_->qpos[root_qpos_ + 2] = z;
      for (int k = 0; k < 4; ++k) d_->qpos[root_qpos_ + 3 + k] = orientation[k];
      physics_.AfterResetIgnoringWarnings();
      z += 0.01;
      if (++attempts > kMaxAttempts) throw std::runtime_error("Failed to find a non-contacting configuration.");
    } while (d_->ncon > 0);
  }

  const int root_qpos_, root_dof_, torso_, floor_, velocimeter_, workspace_;
  std::vector<int> hinges_, imu_, force_torque_;
  int ball_ = -1, ball_geom_ = -1, ball_qpos_ = -1, ball_dof_ = -1, target_ = -1;
};

}  // namespace pp::dm_control
