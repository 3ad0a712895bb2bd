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
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/numpy_random_state.h"
#include "core/spec.h"
#include "envs/dm_control/physics.h"
#include "envs/mujoco/numpy_math.h"

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
//   max_episode_steps    0: derived from time_limit, as control.Environment's step limit.
// `random` is the pool's `seed`: env i's RandomState is seeded with its seed (seed + i).
inline Config CommonDefaults(const TaskInfo& info, const std::string& suite_dir) {
  return Config{{"max_episode_steps", int64_t{0}}, {"time_limit", info.time_limit}, {"control_timestep", 0.0},
                {"n_sub_steps", int64_t{0}},       {"flat_observation", false},     {"legacy_step", true},
                {"expose_physics_state", false},   {"suite_dir", suite_dir}};
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

// A task's spec: "obs:<name>" per observation entry (or one "obs" with flat_observation), the
// float64 "action" bounded as mujoco.action_spec (ctrlrange where limited, else +-mjMAXVAL), and
// info["qpos"], info["qvel"] (info["act"]) plus `task_state` entries with expose_physics_state.
inline EnvSpec MakeDmSpec(const mjModel& model, const Config& config, const TaskInfo& info, const ObsLayout& obs,
                          const ObsLayout& task_state = {}) {
  EnvSpec spec;
  if (config.GetBool("flat_observation")) {
    int total = 0;
    for (const ObsEntry& e : obs) total += e.size();
    spec.state.push_back(Box("obs", Dtype::kFloat64, {total}));
  } else {
    for (const ObsEntry& e : obs) spec.state.push_back(Box("obs:" + e.name, Dtype::kFloat64, e.shape));
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
  return spec;
}

class DmControlEnv : public Env {
 public:
  // control.Environment.reset(): reset_context (Physics.reset, the task's initialize_episode,
  // Physics.after_reset), then the task's observation.
  void Reset() final {
    physics_.Reset();
    InitializeEpisode();
    physics_.AfterReset();
    Write(Allocate());
  }

  // control.Environment.step(): before_step (ctrl = action, unclipped), Physics.step(n_sub_steps),
  // reward, observation; the time limit ends the episode with discount 1 (truncated) before the
  // task's termination (discount 0: terminated) is asked.
  StepResult Step(const Action& action) final {
    const double* a = action.Get<double>(action_);
    for (int i = 0; i < m_->nu; ++i) d_->ctrl[i] = a[i];
    physics_.Step(n_sub_steps_, legacy_step_);
    StepResult result;
    result.reward = GetReward();
    Write(Allocate());
    result.truncated = TimeLimitReached();
    result.terminated = !result.truncated && GetTermination();
    return result;
  }

 protected:
  DmControlEnv(const EnvSpec& spec, int env_id, const mjModel& compiled, const TaskInfo& info, ObsLayout obs,
               ObsLayout task_state = {})
      : Env(spec, env_id),
        physics_(&compiled),
        m_(physics_.model()),
        d_(physics_.data()),
        n_sub_steps_(NumSubSteps(spec.config, info, compiled.opt.timestep)),
        legacy_step_(spec.config.GetBool("legacy_step")),
        action_(spec.ActionIndex("action")),
        obs_(std::move(obs)),
        task_state_(std::move(task_state)) {
    int total = 0;
    for (const ObsEntry& e : obs_) total += e.size();
    buffer_.resize(static_cast<std::size_t>(total));
    if (spec.config.GetBool("flat_observation")) {
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
  }

  // The task's initialize_episode (inside reset_context: after Physics.reset, before after_reset).
  virtual void InitializeEpisode() = 0;
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
  void Reseeded(uint64_t seed) final {
    random_.Seed(seed);
    Seeded();
  }

  void Write(const Slot& out) {
    Observe(buffer_.data());
    if (obs_fields_.size() == 1 && obs_.size() != 1) {
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
  int qpos_field_ = -1, qvel_field_ = -1, act_field_ = -1;
  NumpyRandomState random_;
};

}  // namespace pp::dm_control
