// The base of every MuJoCo task: what gymnasium/envs/mujoco/mujoco_env.py's MujocoEnv does (model,
// data, frame_skip, reset noise, set_state, do_simulation) plus the spec parts all tasks share.
#pragma once

#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pixel_stack.h"
#include "envs/common/state_stack.h"
#include "envs/mujoco/model.h"
#if PP_MUJOCO_RENDER
#include "envs/common/mujoco_render.h"
#endif

namespace pp::mujoco {

// Gymnasium keeps v4 and v5 of each task side by side; one class per task serves both.
enum class Version { kV4, kV5 };

// Gymnasium registers every MuJoCo task with a 1,000-step time limit except the two pendulums
// (InvertedPendulum, InvertedDoublePendulum) and Reacher/Pusher, which pass their own.
constexpr int64_t kDefaultMaxEpisodeSteps = 1000;

// Config keys of every MuJoCo task besides Gymnasium's constructor kwargs:
//   max_episode_steps     Gymnasium's TimeLimit;
//   expose_physics_state  add info["qpos"] and info["qvel"] (float64), the state after the step
//                         or reset, e.g. to put a Gymnasium env in the same state;
//   assets_dir            where a bare xml_file name is looked up; the Python package sets its
//                         default to Gymnasium's gymnasium/envs/mujoco/assets when it loads us;
// the frame, as Gymnasium's MujocoEnv kwargs (render() and pixel observations):
//   width, height         the frame's size (Gymnasium's DEFAULT_SIZE, 480);
//   camera_id             a camera of the model, -1 the free camera, kNoCameraId (-2): not given
//                         (Gymnasium's None);
//   camera_name           a camera by name, "" not given; neither given: the model's "track"
//                         camera, else the free camera placed by the task's default camera config;
// pixel observations (EnvPool's from_pixels and frame_stack, Gymnasium's wrappers' layout):
//   from_pixels           obs is the frame, rendered in the step (AddRenderObservation(render_only));
//   gray_scale            ... as GrayscaleObservation(keep_dim=False) converts it: (height, width);
//   frame_stack           the last k observations, oldest first, the reset's repeated at an
//                         episode's start (FrameStackObservation(k, padding_type="reset")): frames
//                         (k, height, width [, 3]), or without from_pixels state vectors (k, n), as
//                         EnvPool stacks both; 1: no stack dimension.
constexpr int64_t kNoCameraId = -2;
constexpr int64_t kDefaultFrameSize = 480;
inline Config CommonDefaults(int64_t max_episode_steps = kDefaultMaxEpisodeSteps) {
  return Config{{"max_episode_steps", max_episode_steps},
                {"expose_physics_state", false},
                {"assets_dir", std::string()},
                {"width", kDefaultFrameSize},
                {"height", kDefaultFrameSize},
                {"camera_id", kNoCameraId},
                {"camera_name", std::string()},
                {"from_pixels", false},
                {"gray_scale", false},
                {"frame_stack", int64_t{1}}};
}

// v5's model kwargs: xml_file (v4 has none) and frame_skip (v4's is fixed).
inline void SetModelKwargs(Config& c, const char* xml_file, int64_t frame_skip) {
  c.Set("xml_file", std::string(xml_file));
  c.Set("frame_skip", frame_skip);
}

// What this build says when asked for a frame it cannot make.
constexpr const char* kNoRenderBuild =
    "this build of parallel_pool has no MuJoCo rendering (configured with -DPP_WITH_MUJOCO_RENDER=OFF, or EGL's "
    "headers were missing at build time: Debian: apt-get install libegl-dev, then build parallel_pool again)";

// A task's DEFAULT_CAMERA_CONFIG (Gymnasium's default_camera_config): the attributes it sets on
// the free camera after OffScreenViewer placed it (lookat: the median of geom_xpos; distance:
// the model's extent). Unset fields keep those values.
struct FreeCameraConfig {
  std::optional<int> trackbodyid = std::nullopt;
  std::optional<double> distance = std::nullopt, elevation = std::nullopt, azimuth = std::nullopt;
  std::optional<std::array<double, 3>> lookat = std::nullopt;
};

// Per-body spatial vectors (cfrc_ext, cinert rows, ...) have 6 entries: torque, then force.
constexpr int64_t kSpatialDim = 6;

// v5 tasks take frame_skip as a kwarg; v4 tasks hard-code theirs.
inline int FrameSkip(const Config& config, int64_t fixed) {
  const int64_t frame_skip = config.Has("frame_skip") ? config.GetInt("frame_skip") : fixed;
  if (frame_skip < 1) throw std::invalid_argument("frame_skip must be >= 1, got " + std::to_string(frame_skip));
  return static_cast<int>(frame_skip);
}

// A (low, high) config pair such as healthy_z_range.
inline std::pair<double, double> Range(const Config& config, const std::string& key) {
  const std::vector<double>& v = config.GetFloats(key);
  if (v.size() != 2) {
    throw std::invalid_argument(key + " must be a (low, high) pair, got " + std::to_string(v.size()) + " values");
  }
  return {v[0], v[1]};
}

// --- the spec ------------------------------------------------------------------------------------

// The spec's first fields: the observation (float64, unbounded: Gymnasium's Box(-inf, inf)) and
// the action (float32 Box of the actuators' ctrlrange, as MujocoEnv._set_action_space).
inline EnvSpec BeginSpec(const mjModel& model, int64_t obs_size) {
  EnvSpec spec;
  spec.state.push_back(Box("obs", Dtype::kFloat64, {static_cast<int>(obs_size)}));
  std::vector<double> low, high;
  for (int64_t i = 0; i < model.nu; ++i) {
    low.push_back(static_cast<float>(model.actuator_ctrlrange[2 * i]));
    high.push_back(static_cast<float>(model.actuator_ctrlrange[2 * i + 1]));
  }
  spec.action.push_back(Box("action", Dtype::kFloat32, {static_cast<int>(model.nu)}, low, high));
  return spec;
}

// A scalar float64 info entry, info[key]. In Gymnasium's info of every step; in a reset's only for
// a v5 task's position and tendon entries (its _get_reset_info; v4 tasks return none).
inline void AddInfo(EnvSpec& spec, const std::string& key, Version version) {
  static const std::set<std::string> kResetInfo = {
      "x_position", "y_position", "distance_from_origin", "z_distance_from_origin", "tendon_length", "tendon_velocity"};
  const bool on_reset = version == Version::kV5 && kResetInfo.count(key) > 0;
  spec.state.push_back(
      WithPresence(Box("info:" + key, Dtype::kFloat64, {}), on_reset ? InfoPresence::kAlways : InfoPresence::kStep));
}

// The camera the config names (Gymnasium's MujocoRenderer.__init__): camera_id, else camera_name's
// id (-1, the free camera, when the model has no such camera), else "track"'s.
inline int ResolveCameraId(const mjModel& model, const Config& config) {
  const int64_t camera_id = config.GetInt("camera_id");
  const std::string& camera_name = config.GetString("camera_name");
  if (camera_id != kNoCameraId && !camera_name.empty()) {
    throw std::invalid_argument("Both `camera_id` and `camera_name` cannot be specified at the same time.");
  }
  if (camera_id == kNoCameraId) {
    return mj_name2id(&model, mjOBJ_CAMERA, camera_name.empty() ? "track" : camera_name.c_str());
  }
  if (camera_id < -1 || camera_id >= model.ncam) {
    throw std::invalid_argument("camera_id " + std::to_string(camera_id) + " is out of range: the model has " +
                                std::to_string(model.ncam) + " camera(s); -1 is the free camera");
  }
  return static_cast<int>(camera_id);
}

// The observation field of from_pixels: (frame_stack,) height, width (, 3) uint8.
inline FieldSpec PixelObsField(const Config& config) {
  std::vector<int> shape;
  if (config.GetInt("frame_stack") > 1) shape.push_back(static_cast<int>(config.GetInt("frame_stack")));
  shape.push_back(static_cast<int>(config.GetInt("height")));
  shape.push_back(static_cast<int>(config.GetInt("width")));
  if (!config.GetBool("gray_scale")) shape.push_back(3);
  return Box("obs", Dtype::kUInt8, shape, {0.0}, {255.0});
}

// The spec's last fields: info["qpos"] and info["qvel"] when expose_physics_state is set; the
// frame's shape; with from_pixels, the pixel observation in place of the state vector, else with
// frame_stack > 1 the stacked state vectors (the vector's size stays readable as the table
// "state_obs_size" either way).
inline void EndSpec(EnvSpec& spec, const mjModel& model, const Config& config, int frame_skip) {
  if (config.GetBool("expose_physics_state")) {
    spec.state.push_back(Box("info:qpos", Dtype::kFloat64, {static_cast<int>(model.nq)}));
    spec.state.push_back(Box("info:qvel", Dtype::kFloat64, {static_cast<int>(model.nv)}));
  }
  const int64_t width = config.GetInt("width"), height = config.GetInt("height");
  // 16384: beyond what any GL implementation offers as a framebuffer (llvmpipe's limit is 16384).
  constexpr int64_t kMaxFrameSize = 16384;
  if (width < 1 || height < 1 || width > kMaxFrameSize || height > kMaxFrameSize) {
    throw std::invalid_argument("width and height must be in [1, " + std::to_string(kMaxFrameSize) + "], got " +
                                std::to_string(width) + "x" + std::to_string(height));
  }
  constexpr int64_t kMaxFrameStack = 64;
  const int64_t frame_stack = config.GetInt("frame_stack");
  if (frame_stack < 1 || frame_stack > kMaxFrameStack) {
    throw std::invalid_argument("frame_stack must be in [1, " + std::to_string(kMaxFrameStack) + "], got " +
                                std::to_string(frame_stack));
  }
  ResolveCameraId(model, config);  // rejects a bad camera now rather than at the first frame
  spec.render_shape = {static_cast<int>(height), static_cast<int>(width), 3};
  // MujocoEnv's metadata["render_fps"]: int(np.round(1.0 / self.dt)).
  spec.render_fps = std::round(1.0 / (model.opt.timestep * frame_skip));
  FieldSpec& obs = spec.state[static_cast<std::size_t>(spec.StateIndex("obs"))];
  const int state_obs_size = obs.shape.at(0);
  spec.tables["state_obs_size"] = {static_cast<double>(state_obs_size)};
  if (config.GetBool("from_pixels")) {
#if !PP_MUJOCO_RENDER
    throw std::invalid_argument(std::string("from_pixels: ") + kNoRenderBuild);
#endif
    obs = PixelObsField(config);
  } else if (config.GetBool("gray_scale")) {
    throw std::invalid_argument("gray_scale converts pixel observations: it needs from_pixels=True");
  } else if (frame_stack > 1) {
    obs.shape = {static_cast<int>(frame_stack), state_obs_size};
  }
}

// --- the env -------------------------------------------------------------------------------------

// How Gymnasium's reset_model() perturbs qvel: `scale * standard_normal` (Ant, HalfCheetah,
// Humanoid, ...) or `uniform(-scale, scale)` (Hopper, Walker2d, Swimmer, ...). qpos always gets
// `uniform(-scale, scale)`.
enum class VelocityNoise { kNormal, kUniform };

// Writes a scalar float64 field of `out` (an info entry); index -1 (a key this task version
// does not have) writes nothing.
inline void Set(const Slot& out, int index, double value) {
  if (index >= 0) *out.Get<double>(index) = value;
}

// The index of state field `name`, or -1 if the spec has none.
inline int FieldOrNone(const EnvSpec& spec, const std::string& name) {
  for (std::size_t i = 0; i < spec.state.size(); ++i) {
    if (spec.state[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

// The info keys that open the key enums of the envs that move in the plane (Ant, Humanoid,
// Swimmer); each env's own keys start at kNumPlanarInfo.
enum PlanarInfoKey : int { kXPosition, kYPosition, kDistanceFromOrigin, kXVelocity, kYVelocity, kNumPlanarInfo };

// An env's info fields, by its own key enum: each key's field index, or -1 where the task
// version lacks the key (Set writes nothing there).
template <int N>
class InfoFields {
 public:
  InfoFields(const EnvSpec& spec, const char* const (&names)[N]) {
    for (int k = 0; k < N; ++k) index_[k] = FieldOrNone(spec, std::string("info:") + names[k]);
  }
  int operator[](int key) const { return index_[key]; }
  // A reset's per-step terms, which are 0.
  void Zero(const Slot& out, std::initializer_list<int> keys) const {
    for (int k : keys) Set(out, index_[k], 0.0);
  }

 private:
  std::array<int, N> index_{};
};

// The info fields of a task whose key enum opens with the planar keys (Ant, Humanoid, Swimmer).
template <int N>
class PlanarInfoFields : public InfoFields<N> {
  static_assert(N > kNumPlanarInfo, "the key enum opens with PlanarInfoKey's keys");

 public:
  using InfoFields<N>::InfoFields;
  void SetVelocity(const Slot& out, double x_velocity, double y_velocity) const {
    Set(out, (*this)[kXVelocity], x_velocity);
    Set(out, (*this)[kYVelocity], y_velocity);
  }
};

class MujocoEnv : public Env {
 public:
  ~MujocoEnv() override = default;

 protected:
  // Loads (or shares) the model of `xml_path` and makes this env's own mjData.
  // `camera`: the task's DEFAULT_CAMERA_CONFIG (none when Gymnasium's task passes none).
  MujocoEnv(const EnvSpec& spec, int env_id, const std::string& xml_path, int frame_skip,
            const FreeCameraConfig& camera = {})
      : Env(spec, env_id),
        model_(LoadModel(xml_path)),
        data_(MakeData(model_.get())),
        m_(model_.get()),
        d_(data_.get()),
        frame_skip_(frame_skip),
        action_(spec.ActionIndex("action")),
        // MujocoEnv keeps init_qpos/init_qvel from a fresh MjData: qpos0 and zeros.
        init_qpos_(d_->qpos, d_->qpos + m_->nq),
        init_qvel_(d_->qvel, d_->qvel + m_->nv),
        camera_config_(camera),
        camera_id_(ResolveCameraId(*m_, spec.config)),
        from_pixels_(spec.config.GetBool("from_pixels")),
        gray_scale_(spec.config.GetBool("gray_scale")),
        frame_stack_(static_cast<int>(spec.config.GetInt("frame_stack"))),
        obs_field_(spec.StateIndex("obs")) {
    if (spec.config.GetBool("expose_physics_state")) {
      qpos_field_ = spec.StateIndex("info:qpos");
      qvel_field_ = spec.StateIndex("info:qvel");
    }
    const auto state_obs_size = static_cast<std::size_t>(spec.tables.at("state_obs_size").at(0));
    if (from_pixels_) {
      // The tasks still compute their state vector (ObsRow); it goes here, unread.
      state_obs_.resize(state_obs_size);
      pixels_ = pixels::PixelStack(spec.render_shape[0], spec.render_shape[1], gray_scale_, frame_stack_);
    } else if (frame_stack_ > 1) {
      // The tasks write the newest state vector here; FinishOutput stacks it into the "obs" row.
      state_obs_.resize(state_obs_size);
      states_ = StateStack(state_obs_size, frame_stack_);
    }
  }

 public:
  // Gymnasium's render() in "rgb_array" mode: the current state from the configured camera.
  void Render(uint8_t* rgb) override { RenderFrame(rgb); }

 protected:
  // Where a task writes its state observation: the "obs" row, or a scratch row with from_pixels
  // (the observation is the frame then) or frame_stack > 1 (the stack then), which FinishOutput writes.
  double* ObsRow(const Slot& out, int obs_field) const {
    return from_pixels_ || frame_stack_ > 1 ? state_obs_.data() : out.Get<double>(obs_field);
  }

  // The end of every Reset and Step: info["qpos"/"qvel"] and, with from_pixels, the frame
  // (stacked), else the stacked state vectors; `reset` starts a new stack.
  void FinishOutput(const Slot& out, bool reset) {
    WritePhysicsState(out);
    if (from_pixels_) {
      WritePixels(out, reset);
    } else if (frame_stack_ > 1) {
      states_.Push(state_obs_.data(), reset, out.Get<double>(obs_field_));
    }
  }

  // MujocoEnv.dt: the time one env step covers.
  double dt() const { return m_->opt.timestep * frame_skip_; }

  // mj_resetData, then Gymnasium's reset noise and set_state (which ends with mj_forward).
  void ResetWithNoise(double scale, VelocityNoise velocity_noise) {
    mj_resetData(m_, d_);
    for (int64_t i = 0; i < m_->nq; ++i) d_->qpos[i] = init_qpos_[i] + rng().Uniform(-scale, scale);
    for (int64_t i = 0; i < m_->nv; ++i) {
      const double noise =
          velocity_noise == VelocityNoise::kNormal ? scale * rng().Normal() : rng().Uniform(-scale, scale);
      d_->qvel[i] = init_qvel_[i] + noise;
    }
    mj_forward(m_, d_);
  }

  // MujocoEnv.do_simulation: ctrl = action (float32 widened to float64), frame_skip mj_steps, then
  // mj_rnePostConstraint so cfrc_ext and friends are up to date. Those are outputs only (the next
  // mj_step recomputes everything), so a task that reads none of cacc/cfrc_int/cfrc_ext skips it.
  void DoSimulation(const Action& action) {
    const float* a = Actions(action);
    for (int64_t i = 0; i < m_->nu; ++i) d_->ctrl[i] = a[i];
    for (int i = 0; i < frame_skip_; ++i) mj_step(m_, d_);
    if (uses_contact_forces_) mj_rnePostConstraint(m_, d_);
  }

  // For tasks whose obs, reward and info read no cacc/cfrc_int/cfrc_ext.
  void SkipContactForces() { uses_contact_forces_ = false; }

  const float* Actions(const Action& action) const { return action.Get<float>(action_); }

  // np.isfinite(state_vector()).all()
  bool StateIsFinite() const {
    for (int64_t i = 0; i < m_->nq; ++i) {
      if (!std::isfinite(d_->qpos[i])) return false;
    }
    for (int64_t i = 0; i < m_->nv; ++i) {
      if (!std::isfinite(d_->qvel[i])) return false;
    }
    return true;
  }

  // A body's id by name (e.g. "torso"), or a clear error naming the model's gap.
  int BodyId(const std::string& name) const {
    const int id = mj_name2id(m_, mjOBJ_BODY, name.c_str());
    if (id < 0) throw std::invalid_argument("the MuJoCo model has no body named '" + name + "'");
    return id;
  }
  int BodyId(int64_t id) const {
    if (id < 0 || id >= m_->nbody) {
      throw std::invalid_argument("body id " + std::to_string(id) + " is out of range [0, " +
                                  std::to_string(m_->nbody) + ")");
    }
    return static_cast<int>(id);
  }

  // Draws the current state into `rgb` (height x width x 3), as Gymnasium's OffScreenViewer.
  void RenderFrame(uint8_t* rgb) {
#if PP_MUJOCO_RENDER
    if (!renderer_) {
      // Gymnasium makes its viewer at the first render() and places the free camera from that
      // state: lookat = median of geom_xpos per axis, distance = the model's extent, then the
      // task's default camera config.
      renderer_ = std::make_unique<mujoco_render::Renderer>(model_, spec().render_shape[1], spec().render_shape[0]);
      mjv_defaultCamera(&camera_);
      camera_.type = mjCAMERA_FREE;
      camera_.fixedcamid = -1;
      std::vector<double> column(static_cast<std::size_t>(m_->ngeom));
      for (int axis = 0; axis < 3; ++axis) {
        for (int g = 0; g < m_->ngeom; ++g) column[static_cast<std::size_t>(g)] = d_->geom_xpos[3 * g + axis];
        camera_.lookat[axis] = Median(column);
      }
      camera_.distance = m_->stat.extent;
      if (camera_config_.trackbodyid) camera_.trackbodyid = *camera_config_.trackbodyid;
      if (camera_config_.distance) camera_.distance = *camera_config_.distance;
      if (camera_config_.lookat)
        std::copy(camera_config_.lookat->begin(), camera_config_.lookat->end(), camera_.lookat);
      if (camera_config_.elevation) camera_.elevation = *camera_config_.elevation;
      if (camera_config_.azimuth) camera_.azimuth = *camera_config_.azimuth;
    }
    // OffScreenViewer.render(camera_id=...): -1 the free camera, else that fixed camera.
    camera_.type = camera_id_ == -1 ? mjCAMERA_FREE : mjCAMERA_FIXED;
    camera_.fixedcamid = camera_id_;
    renderer_->Render(d_, camera_, rgb);
#else
    (void)rgb;
    throw std::runtime_error(kNoRenderBuild);
#endif
  }

  // Copies qpos and qvel into info when expose_physics_state is set.
  void WritePhysicsState(const Slot& out) const {
    if (qpos_field_ < 0) return;
    double* qpos = out.Get<double>(qpos_field_);
    double* qvel = out.Get<double>(qvel_field_);
    for (int64_t i = 0; i < m_->nq; ++i) qpos[i] = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) qvel[i] = d_->qvel[i];
  }

 private:
  // np.median of one axis: the middle value, or the mean of the two middle values.
  static double Median(std::vector<double> v) {
    if (v.empty()) return std::nan("");
    const std::size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double upper = v[mid];
    if (v.size() % 2 == 1) return upper;
    const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
    return (lower + upper) / 2.0;
  }

  void WritePixels(const Slot& out, bool reset) {
    pixels_.Push([this](uint8_t* rgb) { RenderFrame(rgb); }, reset, out.Get<uint8_t>(obs_field_));
  }

  ModelPtr model_;  // shared, read-only
  DataPtr data_;    // this env's own simulation state

 protected:
  const mjModel* const m_;
  mjData* const d_;
  const int frame_skip_;

 private:
  const int action_;
  const std::vector<double> init_qpos_, init_qvel_;
  int qpos_field_ = -1, qvel_field_ = -1;
  bool uses_contact_forces_ = true;

  // Rendering: the camera as Gymnasium resolves it; the renderer and free camera made at the
  // first frame; with from_pixels, the ring of the last frame_stack frames.
  const FreeCameraConfig camera_config_;
  const int camera_id_;
  const bool from_pixels_, gray_scale_;
  const int frame_stack_;
  const int obs_field_;
  mutable std::vector<double> state_obs_;  // scratch the tasks' const WriteObs writes into
  pixels::PixelStack pixels_;
  StateStack states_;  // frame_stack > 1 without from_pixels
#if PP_MUJOCO_RENDER
  std::unique_ptr<mujoco_render::Renderer> renderer_;
  mjvCamera camera_{};
#endif
};

}  // namespace pp::mujoco
