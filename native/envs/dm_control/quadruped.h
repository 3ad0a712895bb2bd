// dm_control's quadruped domain (suite/quadruped.py): QuadrupedWalk-v1, QuadrupedRun-v1,
// QuadrupedEscape-v1 (a per-episode height field: a bowl times scipy.ndimage.zoom of random bumps),
// QuadrupedFetch-v1.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/spline_zoom.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class QuadrupedTask { kWalk, kRun, kFetch, kEscape };

class QuadrupedEnv final : public SuiteEnv<QuadrupedEnv, QuadrupedTask> {
 public:
  static constexpr bool kEditsModel = true;                 // the terrain's height field (escape), per episode
  static constexpr double kRunSpeed = 5, kWalkSpeed = 0.5;  // _RUN_SPEED, _WALK_SPEED
  static constexpr int kMaxAttempts = 10000;                // _find_non_contacting_height's
  static constexpr int kHeightfield = 0;                    // _HEIGHTFIELD_ID
  static constexpr double kTerrainSmoothness = 0.15;        // _TERRAIN_SMOOTHNESS
  static constexpr double kTerrainBumpScale = 2;            // _TERRAIN_BUMP_SCALE (meters)

  static TaskInfo Info(Task task) {
    static const char* const kNames[] = {"walk", "run", "fetch", "escape"};
    return {"quadruped", kNames[static_cast<int>(task)], 20, .02};
  }
  // make_model(floor_size, terrain, rangefinders, walls_and_ball): walk and run on a floor of time
  // limit x speed (no walls, ball or target), escape on a floor of 40 with the terrain and the
  // rangefinders (no walls, ball or target), fetch with walls, ball and target.
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    std::string xml = ReadText(suite_dir + "/quadruped.xml");
    if (task != Task::kFetch) {
      // f'{floor_size}': 20 * .5, 20 * 5, 40
      const std::string size = task == Task::kWalk ? "10.0" : task == Task::kRun ? "100" : "40";
      ReplaceFirst(xml, "<geom name=\"floor\" type=\"plane\" size=\"15 15 .5\"",
                   "<geom name=\"floor\" type=\"plane\" size=\"" + size + " " + size + " .5\"");
      for (const char* wall : {"wall_px", "wall_py", "wall_nx", "wall_ny"}) {
        RemoveElements(xml, std::string("<geom name=\"") + wall + "\"");
      }
      RemoveBody(xml, "ball");
      RemoveElements(xml, "<site name=\"target\"");
    }
    if (task != Task::kEscape) {
      RemoveElements(xml, "<geom name=\"terrain\"");
      RemoveElements(xml, "<rangefinder ");
    }
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
    if (task == Task::kEscape) {
      int rangefinders = 0;
      for (int s = 0; s < m.nsensor; ++s) rangefinders += m.sensor_type[s] == mjSENS_RANGEFINDER ? m.sensor_dim[s] : 0;
      obs.push_back({"origin", {3}});
      obs.push_back({"rangefinder", {rangefinders}});
    }
    return obs;
  }
  // expose_physics_state: escape's episode terrain, the height field as the model holds it
  // (hfield_data, float32, nrow x ncol), which an oracle writes into its own model to replay.
  static ObsLayout TaskStateLayout(Task task) {
    if (task != Task::kEscape) return {};
    return {{"hfield", {kTerrainRes, kTerrainRes}}};
  }
  // quadruped.xml's <hfield name="terrain" ncol="201" nrow="201">: the spec's shape of the exposed
  // field (the constructor checks the compiled model against it).
  static constexpr int kTerrainRes = 201;

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
    if (task == Task::kEscape) {
      if (m_->nhfield < 1 || m_->hfield_nrow[kHeightfield] != kTerrainRes ||
          m_->hfield_ncol[kHeightfield] != kTerrainRes) {
        throw std::invalid_argument("quadruped.xml's terrain is not dm_control 1.0.50's 201 x 201 height field");
      }
      for (int s = 0; s < m_->nsensor; ++s) {
        if (m_->sensor_type[s] == mjSENS_RANGEFINDER) rangefinders_.push_back(s);
      }
    }
  }

 protected:
  void InitializeEpisode() override {
    if (task_ == Task::kEscape) MakeTerrain();
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
    if (task_ == Task::kEscape) {
      // origin(): -torso_pos.dot(torso_frame).
      double torso[3];
      for (int k = 0; k < 3; ++k) torso[k] = d_->xpos[3 * torso_ + k];
      double* const origin = out;
      out = InTorsoFrame(torso, out);
      for (int k = 0; k < 3; ++k) origin[k] = -origin[k];
      // rangefinder(): 1 where a ray hits nothing (-1), else np.tanh of the distance (NumPy's SIMD
      // tanh on AVX-512 CPUs, ours libm's: see the tests' tolerance).
      for (int s : rangefinders_) {
        for (int k = 0; k < m_->sensor_dim[s]; ++k) {
          const double r = Sensor(s)[k];
          *out++ = r == -1.0 ? 1.0 : std::tanh(r);
        }
      }
      return;
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
    if (task_ == Task::kEscape) {
      // _upright_reward(deviation_angle=20) times the escape term: the workspace's distance from
      // the origin against the terrain's half size (hfield_size[0]).
      const double terrain_size = m_->hfield_size[4 * kHeightfield];
      const double escape = Tolerance{terrain_size, kInf, terrain_size, Sigmoid::kLinear,
                                      0}(mujoco::Norm3(d_->site_xpos + 3 * workspace_));
      return UprightReward(kDeviation20) * escape;
    }
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
  void TaskState(double* out) override {
    if (task_ != Task::kEscape) return;
    const float* field = m_->hfield_data + m_->hfield_adr[kHeightfield];
    for (int i = 0; i < kTerrainRes * kTerrainRes; ++i) out[i] = field[i];
  }

 private:
  // np.cos(np.deg2rad(20)): deg2rad is x * (pi / 180), cos libm's for a scalar.
  inline static const double kDeviation20 = std::cos(20 * (M_PI / 180.0));

  // _upright_reward(physics, deviation_angle): deviation np.cos(np.deg2rad(angle)), 1 for 0.
  double UprightReward(double deviation = 1.0) const {
    return Tolerance{deviation, kInf, 1 + deviation, Sigmoid::kLinear, 0}(d_->xmat[9 * torso_ + 8]);
  }
  // Escape.initialize_episode's terrain: a sinusoidal bowl over the [-1, 1]^2 grid of the field
  // times ndimage.zoom of bumps drawn uniform in [_TERRAIN_SMOOTHNESS, 1) (bump_res^2 draws, row by
  // row), stored as the model's float32 height field. The bowl is the same every episode.
  void MakeTerrain() {
    const int res = m_->hfield_nrow[kHeightfield];
    if (bowl_.empty()) {
      // np.ogrid[-1:1:res*1j]: k * step + start, step = 2 / (res - 1).
      const double step = (1.0 - -1.0) / static_cast<double>(res - 1);
      std::vector<double> grid(static_cast<std::size_t>(res));
      for (int k = 0; k < res; ++k) grid[static_cast<std::size_t>(k)] = static_cast<double>(k) * step + -1.0;
      bowl_.resize(static_cast<std::size_t>(res) * res);
      for (int r = 0; r < res; ++r) {
        for (int c = 0; c < res; ++c) {
          const double x = grid[static_cast<std::size_t>(c)], y = grid[static_cast<std::size_t>(r)];
          // np.clip(np.sqrt(col**2 + row**2), .04, 1); .5 - np.cos(2 * np.pi * radius) / 2.
          const double radius = std::min(std::max(std::sqrt(x * x + y * y), .04), 1.0);
          bowl_[static_cast<std::size_t>(r) * res + c] = .5 - std::cos(2 * M_PI * radius) / 2;
        }
      }
    }
    const double terrain_size = 2 * m_->hfield_size[4 * kHeightfield];
    const int bump_res = static_cast<int>(terrain_size / kTerrainBumpScale);
    bumps_.resize(static_cast<std::size_t>(bump_res) * bump_res);
    for (double& b : bumps_) b = random().Uniform(kTerrainSmoothness, 1);
    std::ptrdiff_t rows = 0, cols = 0;
    spline_zoom::Zoom(bumps_, bump_res, bump_res, res / static_cast<double>(bump_res), smooth_, rows, cols);
    if (rows != res || cols != res) throw std::logic_error("the zoomed terrain does not match the height field");
    float* field = m_->hfield_data + m_->hfield_adr[kHeightfield];
    for (std::size_t i = 0; i < bowl_.size(); ++i) field[i] = static_cast<float>(bowl_[i] * smooth_[i]);
    terrain_serial_ = NextTerrainSerial();
  }
  // A process-wide count of terrains made, so a GL context's last upload is known by one number
  // (never reused, unlike an env's address).
  static uint64_t NextTerrainSerial() {
    static std::atomic<uint64_t> serial{0};
    return ++serial;
  }
#if PP_MUJOCO_RENDER
  // Escape's frames draw this episode's terrain: the thread's GL context holds the compiled
  // model's height field (mjr_makeContext's upload, shared by the task's envs on the thread), so
  // the env's own field is uploaded into it (mjr_uploadHField, as Escape.initialize_episode does
  // when a context exists) unless that context's last upload is already this terrain.
  void BeforeDraw(const mjrContext* context) override {
    if (task_ != Task::kEscape) return;
    thread_local std::vector<std::pair<const mjrContext*, uint64_t>> uploaded;
    for (auto& [ctx, serial] : uploaded) {
      if (ctx != context) continue;
      if (serial != terrain_serial_) {
        mjr_uploadHField(m_, context, kHeightfield);
        serial = terrain_serial_;
      }
      return;
    }
    mjr_uploadHField(m_, context, kHeightfield);
    uploaded.emplace_back(context, terrain_serial_);
  }
#endif
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
  std::vector<int> hinges_, imu_, force_torque_, rangefinders_;
  std::vector<double> bowl_, bumps_, smooth_;  // escape's terrain (the bowl computed once)
  uint64_t terrain_serial_ = 0;                // escape: bumped by each new terrain
  int ball_ = -1, ball_geom_ = -1, ball_qpos_ = -1, ball_dof_ = -1, target_ = -1;
};

}  // namespace pp::dm_control
