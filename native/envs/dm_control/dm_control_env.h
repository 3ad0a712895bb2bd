// The base of every dm_control suite task: control.Environment's reset and step (n_sub_steps,
// time limit, discount), the task's RandomState, and the spec (Dict observation, float64 action).
#pragma once

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/numpy_random_state.h"
#include "core/spec.h"
#include "envs/common/pixel_stack.h"
#include "envs/common/state_stack.h"
#include "envs/dm_control/physics.h"
#include "envs/mujoco/numpy_math.h"
#if PP_MUJOCO_RENDER
#include "envs/common/mujoco_render.h"
#endif

namespace pp::dm_control {

// One entry of a task's observation OrderedDict: its key and shape (empty: a scalar). The shape is
// given in MuJoCo's sizes (mjtSize, 64-bit), e.g. {"velocity", {m.nv}}.
struct ObsEntry {
  ObsEntry(std::string key, std::initializer_list<int64_t> dims) : name(std::move(key)) {
    for (int64_t d : dims) shape.push_back(static_cast<int>(d));
  }
  std::string name;
  std::vector<int> shape;
  int size() const {
    int n = 1;
    for (int d : shape) n *= d;
    return n;
  }
};
using ObsLayout = std::vector<ObsEntry>;

// A task's constants: where control.Environment gets them from the task's constructor.
struct TaskInfo {
  std::string domain, task;  // suite.load(domain, task)
  double time_limit;         // seconds (the domain's _DEFAULT_TIME_LIMIT)
  double control_timestep;   // seconds; 0: the task passes none (one physics step per control step)
};

// Config keys of every suite task (the kwargs of suite.load's task_kwargs and environment_kwargs):
//   time_limit           seconds per episode (inf: none); the episode ends with discount 1;
//   control_timestep     seconds per env step (0: the task's default, if any);
//   n_sub_steps          physics steps per env step (0: from control_timestep); as in dm_control,
//                        an error for tasks that set their own control_timestep;
//   flat_observation     one float64 vector "obs" (the observation's values in order) instead of
//                        the Dict of the suite's names, as environment_kwargs' flat_observation;
//   legacy_step          Physics.legacy_step (mj_step2 ... mj_step1); False: plain mj_step;
//   expose_physics_state info["qpos"], info["qvel"] (and info["act"] if the model has activations)
//                        and the task state the episode drew (reacher's target, ...);
//   suite_dir            the installed dm_control/suite, where the model files are read;
//   max_episode_steps    0: derived from time_limit, as control.Environment's step limit;
// the frame, as Physics.render(height, width, camera_id) draws it (render() and pixel observations):
//   width, height        the frame's size (Physics.render's 320 x 240); at most the model's
//                        offscreen buffer (visual/global offwidth, offheight), as dm_control checks;
//   camera_id            a camera of the model, -1 the free camera (mjv_defaultFreeCamera);
//   camera_name          a camera by name ("" : camera_id), as a string camera_id in dm_control;
// pixel observations (dm_control.suite.wrappers.pixels.Wrapper, rendered inside the step):
//   from_pixels          observation "pixels", the frame (render_kwargs: width, height, camera);
//   pixels_only          the wrapper's pixels_only: true, "pixels" alone; false, after the state's;
//   gray_scale           "pixels" as Gymnasium's GrayscaleObservation converts it: (height, width);
//   frame_stack          the last k frames, oldest first, the reset frame repeated at an episode's
//                        start (FrameStackObservation(k, padding_type="reset")); 1: no stack axis.
//                        Without from_pixels, each state observation entry is stacked so (EnvPool's).
// `random` is the pool's `seed`: env i's RandomState is seeded with its seed (seed + i).
inline Config CommonDefaults(const TaskInfo& info, const std::string& suite_dir) {
  return Config{{"max_episode_steps", int64_t{0}},
                {"time_limit", info.time_limit},
                {"control_timestep", 0.0},
                {"n_sub_steps", int64_t{0}},
                {"flat_observation", false},
                {"legacy_step", true},
                {"expose_physics_state", false},
                {"suite_dir", suite_dir},
                {"width", int64_t{320}},
                {"height", int64_t{240}},
                {"camera_id", int64_t{-1}},
                {"camera_name", std::string()},
                {"from_pixels", false},
                {"pixels_only", true},
                {"gray_scale", false},
                {"frame_stack", int64_t{1}}};
}

// What this build says when asked for a frame it cannot make.
constexpr const char* kNoRenderBuild =
    "this build of parallel_pool has no MuJoCo rendering (configured with -DPP_WITH_MUJOCO_RENDER=OFF, or EGL's "
    "headers were missing at build time: Debian: apt-get install libegl-dev, then build parallel_pool again)";

// Camera(physics, camera_id=...)'s checks: a name is looked up (ValueError if the model has no
// such camera), an id must be in [-1, ncam).
inline int ResolveCamera(const mjModel& model, const Config& config) {
  const std::string& name = config.GetString("camera_name");
  int64_t id = config.GetInt("camera_id");
  if (!name.empty()) {
    if (id != -1) throw std::invalid_argument("give camera_id or camera_name, not both");
    id = mj_name2id(&model, mjOBJ_CAMERA, name.c_str());
    if (id < 0) throw std::invalid_argument("the model has no camera named '" + name + "'");
  }
  if (id < -1) throw std::invalid_argument("camera_id cannot be smaller than -1.");
  if (id >= model.ncam) {
    throw std::invalid_argument("model has " + std::to_string(model.ncam) +
                                " fixed cameras. camera_id=" + std::to_string(id) + " is invalid.");
  }
  return static_cast<int>(id);
}

// wrapper.core._estimate_max_renderable_geoms: the scene's maxgeom is max(1000, this).
inline int EstimateMaxRenderableGeoms(const mjModel& m) {
  const int64_t frames = std::max({m.nbody, m.ngeom, m.nsite, m.ncam, m.nlight});
  const int64_t n =
      3 * frames + 4 * m.ngeom + 3 * m.nbody + m.nsite + m.ntendon + m.njnt + m.nu + m.nskin + m.ncam + m.nlight;
  return static_cast<int>(std::max<int64_t>(1000, n));
}

// control.compute_n_steps, or n_sub_steps when given.
inline int NumSubSteps(const Config& config, const TaskInfo& info, double physics_timestep) {
  const int64_t n = config.GetInt("n_sub_steps");
  if (n < 0) throw std::invalid_argument("n_sub_steps must be >= 1, got " + std::to_string(n));
  double control_timestep = config.GetFloat("control_timestep");
  if (control_timestep == 0) control_timestep = info.control_timestep;
  if (n > 0) {
    // control.Environment refuses both (a task that passes its own control_timestep included).
    if (control_timestep != 0) throw std::invalid_argument("Both n_sub_steps and control_timestep were supplied.");
    return static_cast<int>(n);
  }
  if (control_timestep == 0) return 1;
  if (control_timestep < physics_timestep) {
    throw std::invalid_argument("Control timestep (" + std::to_string(control_timestep) +
                                ") cannot be smaller than physics timestep (" + std::to_string(physics_timestep) +
                                ").");
  }
  const double ratio = control_timestep / physics_timestep;
  if (std::abs(ratio - std::nearbyint(ratio)) > 1e-8) {
    throw std::invalid_argument("Control timestep (" + std::to_string(control_timestep) +
                                ") must be an integer multiple of physics timestep (" +
                                std::to_string(physics_timestep) + ")");
  }
  return static_cast<int>(std::nearbyint(ratio));
}

// control.Environment's step limit, `time_limit / (timestep * n_sub_steps)`, as a step count: the
// episode ends on the first step whose count reaches it. 0: no limit (an infinite time limit).
inline int StepLimit(double time_limit, double physics_timestep, int n_sub_steps) {
  if (std::isinf(time_limit)) return 0;
  if (!(time_limit >= 0)) throw std::invalid_argument("time_limit must be >= 0");
  const double step_limit = time_limit / (physics_timestep * n_sub_steps);
  return std::max(1, static_cast<int>(std::ceil(step_limit)));
}

// frame_stack, checked; the depth of the state observations' stack: frame_stack without
// from_pixels (which stacks the frames instead), else 1.
inline int StateStackDepth(const Config& config) {
  constexpr int64_t kMaxFrameStack = 64;
  const int64_t frame_stack = config.GetInt("frame_stack");
  if (frame_stack < 1 || frame_stack > kMaxFrameStack) {
    throw std::invalid_argument("frame_stack must be in [1, " + std::to_string(kMaxFrameStack) + "], got " +
                                std::to_string(frame_stack));
  }
  return config.GetBool("from_pixels") ? 1 : static_cast<int>(frame_stack);
}

// A task's spec: "obs:<name>" per observation entry (or one "obs" with flat_observation), the
// float64 "action" bounded as mujoco.action_spec (ctrlrange where limited, else +-mjMAXVAL), and
// info["qpos"], info["qvel"] (info["act"]) plus `task_state` entries with expose_physics_state.
inline EnvSpec MakeDmSpec(const mjModel& model, const Config& config, const TaskInfo& info, const ObsLayout& obs,
                          const ObsLayout& task_state = {}) {
  EnvSpec spec;
  const int stack = StateStackDepth(config);
  // EnvPool's frame_stack on state observations: each entry gets a leading axis of `stack`.
  auto stacked = [stack](std::vector<int> shape) {
    if (stack > 1) shape.insert(shape.begin(), stack);
    return shape;
  };
  if (config.GetBool("flat_observation")) {
    int total = 0;
    for (const ObsEntry& e : obs) total += e.size();
    spec.state.push_back(Box("obs", Dtype::kFloat64, stacked({total})));
  } else {
    for (const ObsEntry& e : obs) spec.state.push_back(Box("obs:" + e.name, Dtype::kFloat64, stacked(e.shape)));
  }
  const int64_t width = config.GetInt("width"), height = config.GetInt("height");
  if (width < 1 || height < 1) {
    throw std::invalid_argument("width and height must be >= 1, got " + std::to_string(width) + "x" +
                                std::to_string(height));
  }
  // Camera.__init__'s checks, with its words.
  if (width > model.vis.global.offwidth) {
    throw std::invalid_argument("Image width " + std::to_string(width) + " > framebuffer width " +
                                std::to_string(model.vis.global.offwidth) +
                                ". Either reduce the image width or specify a larger offscreen framebuffer in the "
                                "model XML (<visual><global offwidth=.../></visual>)");
  }
  if (height > model.vis.global.offheight) {
    throw std::invalid_argument("Image height " + std::to_string(height) + " > framebuffer height " +
                                std::to_string(model.vis.global.offheight) +
                                ". Either reduce the image height or specify a larger offscreen framebuffer in the "
                                "model XML (<visual><global offheight=.../></visual>)");
  }
  ResolveCamera(model, config);
  const int64_t frame_stack = config.GetInt("frame_stack");
  spec.render_shape = {static_cast<int>(height), static_cast<int>(width), 3};
  if (config.GetBool("from_pixels")) {
#if !PP_MUJOCO_RENDER
    throw std::invalid_argument(std::string("from_pixels: ") + kNoRenderBuild);
#endif
    if (config.GetBool("pixels_only")) {
      spec.state.clear();
    } else if (config.GetBool("flat_observation")) {
      throw std::invalid_argument(
          "from_pixels with pixels_only=False keeps the state observation under its own keys: it needs "
          "flat_observation=False");
    }
    std::vector<int> shape;
    if (frame_stack > 1) shape.push_back(static_cast<int>(frame_stack));
    shape.push_back(static_cast<int>(height));
    shape.push_back(static_cast<int>(width));
    if (!config.GetBool("gray_scale")) shape.push_back(3);
    spec.state.push_back(Box("obs:pixels", Dtype::kUInt8, shape, {0.0}, {255.0}));
  } else if (config.GetBool("gray_scale")) {
    throw std::invalid_argument("gray_scale shapes pixel observations: it needs from_pixels=True");
  }
  std::vector<double> low, high;
  for (int i = 0; i < model.nu; ++i) {
    const bool limited = model.actuator_ctrllimited[i] != 0;
    low.push_back(limited ? model.actuator_ctrlrange[2 * i] : -mjMAXVAL);
    high.push_back(limited ? model.actuator_ctrlrange[2 * i + 1] : mjMAXVAL);
  }
  spec.action.push_back(Box("action", Dtype::kFloat64, {static_cast<int>(model.nu)}, low, high));
  if (config.GetBool("expose_physics_state")) {
    spec.state.push_back(Box("info:qpos", Dtype::kFloat64, {static_cast<int>(model.nq)}));
    spec.state.push_back(Box("info:qvel", Dtype::kFloat64, {static_cast<int>(model.nv)}));
    if (model.na > 0) spec.state.push_back(Box("info:act", Dtype::kFloat64, {static_cast<int>(model.na)}));
    for (const ObsEntry& e : task_state) spec.state.push_back(Box("info:" + e.name, Dtype::kFloat64, e.shape));
  }
  const int n_sub_steps = NumSubSteps(config, info, model.opt.timestep);
  spec.max_episode_steps = StepLimit(config.GetFloat("time_limit"), model.opt.timestep, n_sub_steps);
  // dm_control has no render_fps: frames at the control rate play in real time.
  spec.render_fps = std::round(1.0 / (model.opt.timestep * n_sub_steps));
  return spec;
}

class DmControlEnv : public Env {
 public:
  // control.Environment.reset(): reset_context (Physics.reset, the task's initialize_episode,
  // Physics.after_reset), then the task's observation.
  // A task whose initialize_episode steps the physics for long (cheetah: 200 steps, ~1.3 ms) asks
  // for the steps (StepsInReset) and the reset runs them in parts: it may stop between them
  // (Env::PauseReset) and go on with the next call.
  void Reset() final {
    try {
      if (!reset_steps_left_) {
        physics_.Reset();
        InitializeEpisode();
      }
      if (reset_steps_left_) {
        if (!physics_.RunSteps(&reset_steps_, [this] { return PauseReset(); })) return;
        reset_steps_left_ = false;
        EndInitializeEpisode();
      }
    } catch (...) {
      reset_steps_left_ = false;  // the next reset starts afresh
      throw;
    }
    physics_.AfterReset();
    Write(Allocate(), /*reset=*/true);
  }

  // Physics.render(height, width, camera_id) of the current state.
  void Render(uint8_t* rgb) override { RenderFrame(rgb); }

  // control.Environment.step(): before_step (ctrl = action, unclipped), Physics.step(n_sub_steps),
  // reward, observation; the time limit ends the episode with discount 1 (truncated) before the
  // task's termination (discount 0: terminated) is asked.
  StepResult Step(const Action& action) final {
    const double* a = action.Get<double>(action_);
    for (int i = 0; i < m_->nu; ++i) d_->ctrl[i] = a[i];
    physics_.Step(n_sub_steps_, legacy_step_);
    StepResult result;
    result.reward = GetReward();
    Write(Allocate(), /*reset=*/false);
    result.truncated = TimeLimitReached();
    result.terminated = !result.truncated && GetTermination();
    return result;
  }

 protected:
  // `edits_model`: the domain writes into its model (Physics' own_copy).
  DmControlEnv(const EnvSpec& spec, int env_id, const ModelPtr& compiled, bool edits_model, const TaskInfo& info,
               ObsLayout obs, ObsLayout task_state = {})
      : Env(spec, env_id),
        physics_(compiled, edits_model),
        m_(physics_.model()),
        d_(physics_.data()),
        n_sub_steps_(NumSubSteps(spec.config, info, compiled->opt.timestep)),
        legacy_step_(spec.config.GetBool("legacy_step")),
        action_(spec.ActionIndex("action")),
        obs_(std::move(obs)),
        task_state_(std::move(task_state)) {
    int total = 0;
    for (const ObsEntry& e : obs_) total += e.size();
    buffer_.resize(static_cast<std::size_t>(total));
    state_stack_depth_ = StateStackDepth(spec.config);
    if (state_stack_depth_ > 1) {
      states_ = StateStack(buffer_.size(), state_stack_depth_);
      stacked_.resize(buffer_.size() * static_cast<std::size_t>(state_stack_depth_));
    }
    const bool from_pixels = spec.config.GetBool("from_pixels");
    if (from_pixels && spec.config.GetBool("pixels_only")) {
      // The wrapper's pixels_only: no state observation is written (it is still computed).
    } else if (spec.config.GetBool("flat_observation")) {
      obs_fields_.push_back(spec.StateIndex("obs"));
    } else {
      for (const ObsEntry& e : obs_) obs_fields_.push_back(spec.StateIndex("obs:" + e.name));
    }
    if (spec.config.GetBool("expose_physics_state")) {
      qpos_field_ = spec.StateIndex("info:qpos");
      qvel_field_ = spec.StateIndex("info:qvel");
      if (m_->na > 0) act_field_ = spec.StateIndex("info:act");
      int total_state = 0;
      for (const ObsEntry& e : task_state_) {
        task_state_fields_.push_back(spec.StateIndex("info:" + e.name));
        total_state += e.size();
      }
      task_state_buffer_.resize(static_cast<std::size_t>(total_state));
    }
    camera_id_ = ResolveCamera(*m_, spec.config);
#if PP_MUJOCO_RENDER
    compiled_ = compiled;
#endif
    if (from_pixels) {
      pixels_field_ = spec.StateIndex("obs:pixels");
      pixels_ = pixels::PixelStack(spec.render_shape[0], spec.render_shape[1], spec.config.GetBool("gray_scale"),
                                   static_cast<int>(spec.config.GetInt("frame_stack")));
    }
  }

  // Draws the current state as dm_control's Physics.render: a Camera made for the frame (scene of
  // max(1000, estimate) geoms, MjvOption with the rangefinder off, the free camera from
  // mjv_defaultFreeCamera) over the model's own offscreen buffer, the frame in its lower-left corner.
  void RenderFrame(uint8_t* rgb) {
#if PP_MUJOCO_RENDER
    if (!renderer_) {
      mujoco_render::RenderOptions options;
      options.max_geom = EstimateMaxRenderableGeoms(*m_);
      options.size_buffer_to_frame = false;
      renderer_ =
          std::make_unique<mujoco_render::Renderer>(compiled_, spec().render_shape[1], spec().render_shape[0], options);
      renderer_->set_scene_model(m_);
      renderer_->option().flags[mjVIS_RANGEFINDER] = 0;
      renderer_->set_before_draw([this](const mjrContext* context) { BeforeDraw(context); });
    }
    // A fresh MjvCamera per frame, as each Physics.render makes one.
    mjvCamera camera;
    mjv_defaultCamera(&camera);
    camera.fixedcamid = camera_id_;
    if (camera_id_ == -1) {
      camera.type = mjCAMERA_FREE;
      mjv_defaultFreeCamera(m_, &camera);
    } else {
      camera.type = mjCAMERA_FIXED;
    }
    renderer_->Render(d_, camera, rgb);
#else
    (void)rgb;
    throw std::runtime_error(kNoRenderBuild);
#endif
  }

#if PP_MUJOCO_RENDER
  // Called before each frame is drawn, with the thread's GL context current and `context` the
  // upload the frame uses: for a task whose episode changes what mjr_makeContext uploaded (quadruped
  // escape's height field), to upload its own.
  virtual void BeforeDraw(const mjrContext* /*context*/) {}
#endif
  // The task's initialize_episode (inside reset_context: after Physics.reset, before after_reset).
  virtual void InitializeEpisode() = 0;
  // For a task whose initialize_episode ends with physics.step(n) and then a little more: called
  // last in InitializeEpisode, it has Reset run the n steps (in parts, Reset above), then
  // EndInitializeEpisode (the rest).
  void StepsInReset(int n) {
    physics_.BeginSteps(&reset_steps_, n, legacy_step_);
    reset_steps_left_ = true;
  }
  virtual void EndInitializeEpisode() {}
  // The task's get_observation: the OrderedDict's values, in order, into `out` (the layout given
  // to the constructor).
  virtual void Observe(double* out) = 0;
  virtual double GetReward() = 0;
  // The task's get_termination: true where it returns a discount of 0 (no suite task returns
  // another value); None is false.
  virtual bool GetTermination() { return false; }
  // The values of the task_state entries (expose_physics_state), in order.
  virtual void TaskState(double* /*out*/) {}
  // Called after each seeding of random(), before the episodes it draws: for a domain whose model
  // itself is drawn from the task's RandomState when suite.load builds it (lqr's stiffnesses).
  virtual void Seeded() {}

  // --- what the suite's tasks use --------------------------------------------------------------
  NumpyRandomState& random() { return random_; }
  bool LegacyStep() const { return legacy_step_; }

  // randomizers.randomize_limited_and_rotational_joints(physics, random).
  void RandomizeLimitedAndRotationalJoints() {
    for (int j = 0; j < m_->njnt; ++j) {
      double* qpos = d_->qpos + m_->jnt_qposadr[j];
      const int type = m_->jnt_type[j];
      const double lo = m_->jnt_range[2 * j], hi = m_->jnt_range[2 * j + 1];
      if (m_->jnt_limited[j]) {
        if (type == mjJNT_HINGE || type == mjJNT_SLIDE) {
          qpos[0] = random_.Uniform(lo, hi);
        } else if (type == mjJNT_BALL) {
          throw std::logic_error("limited ball joints are not supported by this port");
        }
      } else if (type == mjJNT_HINGE) {
        qpos[0] = random_.Uniform(-M_PI, M_PI);
      } else if (type == mjJNT_BALL) {
        double quat[4];
        for (double& q : quat) q = random_.StandardNormal();
        Normalize4(quat, qpos);
      } else if (type == mjJNT_FREE) {
        double quat[4];
        for (double& q : quat) q = random_.RandomSample();
        Normalize4(quat, qpos + 3);
      }
    }
  }

  // `quat /= np.linalg.norm(quat)`: the norm is BLAS ddot's, one fused multiply-add per element
  // after the first product (see mujoco/numpy_math.h's Norm3).
  static void Normalize4(const double* q, double* out) {
    const double norm = std::sqrt(std::fma(q[3], q[3], std::fma(q[2], q[2], std::fma(q[1], q[1], q[0] * q[0]))));
    for (int i = 0; i < 4; ++i) out[i] = q[i] / norm;
  }

  // Named lookups (physics.named...): ids by name, or a clear error.
  int Id(mjtObj type, const char* name) const {
    const int id = mj_name2id(m_, type, name);
    if (id < 0) throw std::invalid_argument(std::string("the dm_control model has no object named '") + name + "'");
    return id;
  }
  // sensordata of the sensor `name`: its first value.
  const double* Sensor(int sensor_id) const { return d_->sensordata + m_->sensor_adr[sensor_id]; }
  // np.mean over an array of values: NumPy's pairwise sum divided by n.
  template <typename Element>
  static double Mean(const Element& element, int n) {
    return mujoco::NumpySum<double>(element, 0, n) / n;
  }

  Physics physics_;
  mjModel* const m_;
  mjData* const d_;

 private:
  // StepsInReset's steps, and whether some are still to run (a reset that paused between them).
  Physics::Steps reset_steps_;
  bool reset_steps_left_ = false;
  void Reseeded(uint64_t seed) final {
    random_.Seed(seed);
    Seeded();
  }

  void Write(const Slot& out, bool reset) {
    Observe(buffer_.data());
    if (pixels_field_ >= 0) {
      pixels_.Push([this](uint8_t* rgb) { RenderFrame(rgb); }, reset, out.Get<uint8_t>(pixels_field_));
    }
    if (obs_fields_.empty()) {
      // pixels_only: no state observation.
    } else if (state_stack_depth_ > 1) {
      // The stack is (depth, total), oldest first; entry k's rows are its columns of it.
      states_.Push(buffer_.data(), reset, stacked_.data());
      const std::size_t total = buffer_.size();
      const bool flat = obs_fields_.size() == 1 && obs_.size() != 1;
      std::size_t offset = 0;
      for (std::size_t k = 0; k < obs_fields_.size(); ++k) {
        const auto n = flat ? total : static_cast<std::size_t>(obs_[k].size());
        double* dst = out.Get<double>(obs_fields_[k]);
        for (int i = 0; i < state_stack_depth_; ++i) {
          std::memcpy(dst + static_cast<std::size_t>(i) * n,
                      stacked_.data() + static_cast<std::size_t>(i) * total + offset, n * sizeof(double));
        }
        offset += n;
      }
    } else if (obs_fields_.size() == 1 && obs_.size() != 1) {
      std::memcpy(out.Get<double>(obs_fields_[0]), buffer_.data(), buffer_.size() * sizeof(double));
    } else {
      std::size_t offset = 0;
      for (std::size_t k = 0; k < obs_.size(); ++k) {
        const auto n = static_cast<std::size_t>(obs_[k].size());
        std::memcpy(out.Get<double>(obs_fields_[k]), buffer_.data() + offset, n * sizeof(double));
        offset += n;
      }
    }
    if (qpos_field_ < 0) return;
    std::memcpy(out.Get<double>(qpos_field_), d_->qpos, static_cast<std::size_t>(m_->nq) * sizeof(double));
    std::memcpy(out.Get<double>(qvel_field_), d_->qvel, static_cast<std::size_t>(m_->nv) * sizeof(double));
    if (act_field_ >= 0) {
      std::memcpy(out.Get<double>(act_field_), d_->act, static_cast<std::size_t>(m_->na) * sizeof(double));
    }
    if (task_state_.empty()) return;
    TaskState(task_state_buffer_.data());
    std::size_t offset = 0;
    for (std::size_t k = 0; k < task_state_.size(); ++k) {
      const auto n = static_cast<std::size_t>(task_state_[k].size());
      std::memcpy(out.Get<double>(task_state_fields_[k]), task_state_buffer_.data() + offset, n * sizeof(double));
      offset += n;
    }
  }

  const int n_sub_steps_;
  const bool legacy_step_;
  const int action_;
  const ObsLayout obs_, task_state_;
  std::vector<int> obs_fields_, task_state_fields_;
  std::vector<double> buffer_, task_state_buffer_;
  int state_stack_depth_ = 1;  // frame_stack on state observations
  StateStack states_;
  std::vector<double> stacked_;  // the stack, (depth, buffer_ size)
  int qpos_field_ = -1, qvel_field_ = -1, act_field_ = -1;
  NumpyRandomState random_;
  int camera_id_ = -1;
  int pixels_field_ = -1;
  pixels::PixelStack pixels_;
#if PP_MUJOCO_RENDER
  ModelPtr compiled_;  // the uploaded model (shared by the task's envs); the scene reads m_
  std::unique_ptr<mujoco_render::Renderer> renderer_;
#endif
};

}  // namespace pp::dm_control
