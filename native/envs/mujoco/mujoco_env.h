// The base of every MuJoCo task: what gymnasium/envs/mujoco/mujoco_env.py's MujocoEnv does (model,
// data, frame_skip, reset noise, set_state, do_simulation) plus the spec parts all tasks share.
#pragma once

#include <mujoco/mujoco.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/model.h"

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
//                         default to Gymnasium's gymnasium/envs/mujoco/assets when it loads us.
inline Config CommonDefaults(int64_t max_episode_steps = kDefaultMaxEpisodeSteps) {
  return Config{
      {"max_episode_steps", max_episode_steps}, {"expose_physics_state", false}, {"assets_dir", std::string()}};
}

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

// A scalar float64 info entry, info[key].
inline void AddInfo(EnvSpec& spec, const std::string& key) {
  spec.state.push_back(Box("info:" + key, Dtype::kFloat64, {}));
}

// The spec's last fields: info["qpos"] and info["qvel"] when expose_physics_state is set.
inline void EndSpec(EnvSpec& spec, const mjModel& model, const Config& config) {
  if (config.GetBool("expose_physics_state")) {
    spec.state.push_back(Box("info:qpos", Dtype::kFloat64, {static_cast<int>(model.nq)}));
    spec.state.push_back(Box("info:qvel", Dtype::kFloat64, {static_cast<int>(model.nv)}));
  }
}

// --- the env -------------------------------------------------------------------------------------

// How Gymnasium's reset_model() perturbs qvel: `scale * standard_normal` (Ant, HalfCheetah,
// Humanoid, ...) or `uniform(-scale, scale)` (Hopper, Walker2d, Swimmer, ...). qpos always gets
// `uniform(-scale, scale)`.
enum class VelocityNoise { kNormal, kUniform };

class MujocoEnv : public Env {
 public:
  ~MujocoEnv() override = default;

 protected:
  // Loads (or shares) the model of `xml_path` and makes this env's own mjData.
  MujocoEnv(const EnvSpec& spec, int env_id, const std::string& xml_path, int frame_skip)
      : Env(spec, env_id),
        model_(LoadModel(xml_path)),
        data_(MakeData(model_.get())),
        m_(model_.get()),
        d_(data_.get()),
        frame_skip_(frame_skip),
        action_(spec.ActionIndex("action")),
        // MujocoEnv keeps init_qpos/init_qvel from a fresh MjData: qpos0 and zeros.
        init_qpos_(d_->qpos, d_->qpos + m_->nq),
        init_qvel_(d_->qvel, d_->qvel + m_->nv) {
    if (spec.config.GetBool("expose_physics_state")) {
      qpos_field_ = spec.StateIndex("info:qpos");
      qvel_field_ = spec.StateIndex("info:qvel");
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

  // Copies qpos and qvel into info when expose_physics_state is set.
  void WritePhysicsState(const Slot& out) const {
    if (qpos_field_ < 0) return;
    double* qpos = out.Get<double>(qpos_field_);
    double* qvel = out.Get<double>(qvel_field_);
    for (int64_t i = 0; i < m_->nq; ++i) qpos[i] = d_->qpos[i];
    for (int64_t i = 0; i < m_->nv; ++i) qvel[i] = d_->qvel[i];
  }

  // Writes a scalar float64 field of `out` (an info entry); index -1 (a key this task version
  // does not have) writes nothing.
  static void Set(const Slot& out, int index, double value) {
    if (index >= 0) *out.Get<double>(index) = value;
  }
  // The index of state field `name`, or -1 if the spec has none.
  static int FieldOrNone(const EnvSpec& spec, const std::string& name) {
    for (std::size_t i = 0; i < spec.state.size(); ++i) {
      if (spec.state[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

 private:
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
};

}  // namespace pp::mujoco
