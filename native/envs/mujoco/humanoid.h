// Humanoid-v4 and Humanoid-v5: Gymnasium's 3-D humanoid that learns to walk forward (+x).
// Same spaces, kwargs, reward terms, termination and info as gymnasium/envs/mujoco/humanoid_v4.py and
// humanoid_v5.py. HumanoidObservation and the tendon info are shared with HumanoidStandup.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/mujoco/model.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/numpy_math.h"

namespace pp::mujoco {

// Per-body composite inertia (mjData.cinert) has 10 entries.
constexpr int64_t kInertiaDim = 10;

// The humanoids' observation: qpos (without x, y when excluded), qvel, cinert, cvel,
// qfrc_actuator, cfrc_ext. v4 keeps every row; v5 drops the world body's rows (cinert[1:],
// cvel[1:], cfrc_ext[1:]) and the root free joint's actuator forces (qfrc_actuator[6:]), and
// each of the four parts can be left out (include_*_in_observation).
struct HumanoidObservation {
  bool exclude_positions = true;
  bool v5 = false;
  bool cinert = true, cvel = true, qfrc_actuator = true, cfrc_ext = true;

  // v5's kwargs that pick the parts, each on by default.
  static constexpr const char* kIncludeKeys[4] = {"include_cinert_in_observation", "include_cvel_in_observation",
                                                  "include_qfrc_actuator_in_observation",
                                                  "include_cfrc_ext_in_observation"};
  static void SetDefaults(Config& c) {
    for (const char* key : kIncludeKeys) c.Set(key, true);
  }

  // `exclude_positions_key`: whether this task version has the
  // exclude_current_positions_from_observation kwarg (HumanoidStandup-v4 always excludes).
  static HumanoidObservation FromConfig(Version version, const Config& config, bool exclude_positions_key) {
    HumanoidObservation o;
    o.exclude_positions = exclude_positions_key ? config.GetBool("exclude_current_positions_from_observation") : true;
    o.v5 = version == Version::kV5;
    if (o.v5) {
      o.cinert = config.GetBool(kIncludeKeys[0]);
      o.cvel = config.GetBool(kIncludeKeys[1]);
      o.qfrc_actuator = config.GetBool(kIncludeKeys[2]);
      o.cfrc_ext = config.GetBool(kIncludeKeys[3]);
    }
    return o;
  }

  int64_t Size(const mjModel& m) const {
    const int64_t bodies = v5 ? m.nbody - 1 : m.nbody;
    int64_t size = m.nq - (exclude_positions ? 2 : 0) + m.nv;
    if (cinert) size += bodies * kInertiaDim;
    if (cvel) size += bodies * kSpatialDim;
    if (qfrc_actuator) size += v5 ? m.nv - 6 : m.nv;
    if (cfrc_ext) size += bodies * kSpatialDim;
    return size;
  }

  void Write(const mjModel& m, const mjData& d, double* obs) const {
    const int64_t first_body = v5 ? 1 : 0;
    obs = std::copy(d.qpos + (exclude_positions ? 2 : 0), d.qpos + m.nq, obs);
    obs = std::copy(d.qvel, d.qvel + m.nv, obs);
    if (cinert) obs = std::copy(d.cinert + kInertiaDim * first_body, d.cinert + kInertiaDim * m.nbody, obs);
    if (cvel) obs = std::copy(d.cvel + kSpatialDim * first_body, d.cvel + kSpatialDim * m.nbody, obs);
    if (qfrc_actuator) obs = std::copy(d.qfrc_actuator + (v5 ? 6 : 0), d.qfrc_actuator + m.nv, obs);
    if (cfrc_ext) std::copy(d.cfrc_ext + kSpatialDim * first_body, d.cfrc_ext + kSpatialDim * m.nbody, obs);
  }
};

// v5's info["tendon_length"] and info["tendon_velocity"]: float64 arrays of the model's ntendon
// (data.ten_length, data.ten_velocity).
inline void AddTendonInfo(EnvSpec& spec, const mjModel& model) {
  for (const char* key : {"info:tendon_length", "info:tendon_velocity"}) {
    spec.state.push_back(Box(key, Dtype::kFloat64, {static_cast<int>(model.ntendon)}));
  }
}

inline void WriteTendonInfo(const Slot& out, int length_field, int velocity_field, const mjModel& m, const mjData& d) {
  std::copy(d.ten_length, d.ten_length + m.ntendon, out.Get<double>(length_field));
  std::copy(d.ten_velocity, d.ten_velocity + m.ntendon, out.Get<double>(velocity_field));
}

// np.sum(np.square(x)) of a float64 array (data.ctrl, cfrc_ext): pairwise, in float64. The
// humanoids square data.ctrl, not the float32 action, so their control cost is float64.
inline double SumOfSquares(const double* x, std::ptrdiff_t n) {
  return NumpySum<double>([x](std::ptrdiff_t i) { return x[i] * x[i]; }, 0, n);
}

class HumanoidEnv final : public MujocoEnv {
 public:
  // Gymnasium's DEFAULT_CAMERA_CONFIG (the same in v4 and v5).
  static constexpr FreeCameraConfig kDefaultCamera{
      .trackbodyid = 1, .distance = 4.0, .elevation = -20.0, .lookat = std::array<double, 3>{0.0, 0.0, 2.0}};
  static constexpr const char* kXmlFile = "humanoid.xml";
  static constexpr int64_t kV4FrameSkip = 5;

  // Gymnasium's constructor kwargs and their defaults, per version (v4 takes no xml_file).
  static Config Defaults(Version version) {
    Config c = CommonDefaults();
    c.Set("forward_reward_weight", 1.25);
    c.Set("ctrl_cost_weight", 0.1);
    c.Set("healthy_reward", 5.0);
    c.Set("terminate_when_unhealthy", true);
    c.Set("healthy_z_range", std::vector<double>{1.0, 2.0});
    c.Set("reset_noise_scale", 1e-2);
    c.Set("exclude_current_positions_from_observation", true);
    if (version == Version::kV5) {
      SetModelKwargs(c, kXmlFile, 5);
      c.Set("contact_cost_weight", 5e-7);
      c.Set("contact_cost_range", std::vector<double>{-std::numeric_limits<double>::infinity(), 10.0});
      HumanoidObservation::SetDefaults(c);
    }
    return c;
  }

  static EnvSpec MakeSpec(Version version, const Config& config) {
    ModelPtr model = LoadModel(XmlPathFromConfig(config, kXmlFile));
    EnvSpec spec = BeginSpec(*model, HumanoidObservation::FromConfig(version, config, true).Size(*model));
    if (version == Version::kV4) {
      for (const char* key : {"reward_linvel", "reward_quadctrl", "reward_alive", "x_position", "y_position",
                              "distance_from_origin", "x_velocity", "y_velocity", "forward_reward"}) {
        AddInfo(spec, key, version);
      }
    } else {
      for (const char* key : {"x_position", "y_position"}) AddInfo(spec, key, version);
      AddTendonInfo(spec, *model);
      for (const char* key : {"distance_from_origin", "x_velocity", "y_velocity", "reward_survive", "reward_forward",
                              "reward_ctrl", "reward_contact"}) {
        AddInfo(spec, key, version);
      }
    }
    EndSpec(spec, *model, config, FrameSkip(config, kV4FrameSkip));
    return spec;
  }

  HumanoidEnv(const EnvSpec& spec, int env_id, Version version)
      : MujocoEnv(spec, env_id, XmlPathFromConfig(spec.config, kXmlFile), FrameSkip(spec.config, kV4FrameSkip),
                  kDefaultCamera),
        v5_(version == Version::kV5),
        obs_(spec.StateIndex("obs")),
        observation_(HumanoidObservation::FromConfig(version, spec.config, true)),
        forward_reward_weight_(spec.config.GetFloat("forward_reward_weight")),
        ctrl_cost_weight_(spec.config.GetFloat("ctrl_cost_weight")),
        contact_cost_weight_(v5_ ? spec.config.GetFloat("contact_cost_weight") : 0.0),
        healthy_reward_(spec.config.GetFloat("healthy_reward")),
        terminate_when_unhealthy_(spec.config.GetBool("terminate_when_unhealthy")),
        healthy_z_range_(Range(spec.config, "healthy_z_range")),
        contact_cost_range_(v5_ ? Range(spec.config, "contact_cost_range") : std::pair<double, double>{}),
        reset_noise_scale_(spec.config.GetFloat("reset_noise_scale")),
        body_mass_sum_(NumpySum<double>([this](std::ptrdiff_t i) { return m_->body_mass[i]; }, 0, m_->nbody)),
        tendon_length_(FieldOrNone(spec, "info:tendon_length")),
        tendon_velocity_(FieldOrNone(spec, "info:tendon_velocity")),
        info_(spec, kInfoNames) {}

  void Reset() override {
    ResetWithNoise(reset_noise_scale_, VelocityNoise::kUniform);
    Slot out = Allocate();
    observation_.Write(*m_, *d_, ObsRow(out, obs_));
    // v5's reset info: x_position, y_position, tendon_length, tendon_velocity,
    // distance_from_origin (v4 has none; it gets its positions too). The per-step terms are 0.
    WritePositions(out, MassCenter());
    info_.Zero(out, {kXVelocity, kYVelocity, kRewardLinvel, kRewardQuadctrl, kRewardAlive, kForwardReward,
                     kRewardSurvive, kRewardForward, kRewardCtrl, kRewardContact});
    FinishOutput(out, /*reset=*/true);
  }

  StepResult Step(const Action& action) override {
    const std::array<double, 2> xy_before = MassCenter();
    DoSimulation(action);
    const std::array<double, 2> xy_after = MassCenter();
    const double x_velocity = (xy_after[0] - xy_before[0]) / dt();
    const double y_velocity = (xy_after[1] - xy_before[1]) / dt();

    const bool healthy = IsHealthy();
    const double forward_reward = forward_reward_weight_ * x_velocity;
    // v4: float(is_healthy or terminate_when_unhealthy) * healthy_reward; v5: is_healthy * healthy_reward.
    const double healthy_reward = (healthy || (!v5_ && terminate_when_unhealthy_)) ? healthy_reward_ : 0.0;
    const double ctrl_cost = ctrl_cost_weight_ * SumOfSquares(d_->ctrl, m_->nu);
    const double contact_cost = v5_ ? ContactCost() : 0.0;
    const double reward = v5_ ? (forward_reward + healthy_reward) - (ctrl_cost + contact_cost)
                              : (forward_reward + healthy_reward) - ctrl_cost;
    const bool terminated = terminate_when_unhealthy_ && !healthy;

    Slot out = Allocate();
    observation_.Write(*m_, *d_, ObsRow(out, obs_));
    WritePositions(out, xy_after);
    info_.SetVelocity(out, x_velocity, y_velocity);
    Set(out, info_[kRewardLinvel], forward_reward);
    Set(out, info_[kForwardReward], forward_reward);
    Set(out, info_[kRewardForward], forward_reward);
    Set(out, info_[kRewardQuadctrl], -ctrl_cost);
    Set(out, info_[kRewardCtrl], -ctrl_cost);
    Set(out, info_[kRewardAlive], healthy_reward);
    Set(out, info_[kRewardSurvive], healthy_reward);
    Set(out, info_[kRewardContact], -contact_cost);
    FinishOutput(out, /*reset=*/false);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

 private:
  // Every scalar info key either version has (v4: reward_linvel ... forward_reward; v5:
  // reward_survive ... reward_contact; both: positions and velocities).
  enum InfoKey {
    kRewardLinvel = kNumPlanarInfo,
    kRewardQuadctrl,
    kRewardAlive,
    kForwardReward,
    kRewardSurvive,
    kRewardForward,
    kRewardCtrl,
    kRewardContact,
    kNumInfo
  };
  static constexpr const char* kInfoNames[kNumInfo] = {
      "x_position",     "y_position",      "distance_from_origin", "x_velocity",     "y_velocity",
      "reward_linvel",  "reward_quadctrl", "reward_alive",         "forward_reward", "reward_survive",
      "reward_forward", "reward_ctrl",     "reward_contact"};

  // Gymnasium's mass_center: np.einsum("b,bj->j", body_mass, xipos) (a sequential sum over
  // bodies, checked against NumPy's einsum) / body_mass.sum() (pairwise), its x and y.
  std::array<double, 2> MassCenter() const {
    double x = 0.0, y = 0.0;
    for (int64_t b = 0; b < m_->nbody; ++b) {
      x += m_->body_mass[b] * d_->xipos[3 * b];
      y += m_->body_mass[b] * d_->xipos[3 * b + 1];
    }
    return {x / body_mass_sum_, y / body_mass_sum_};
  }

  // min_z < qpos[2] < max_z (no finiteness check, unlike Ant).
  bool IsHealthy() const { return healthy_z_range_.first < d_->qpos[2] && d_->qpos[2] < healthy_z_range_.second; }

  // np.clip(contact_cost_weight * np.sum(np.square(cfrc_ext)), *contact_cost_range)
  double ContactCost() const {
    const double cost = contact_cost_weight_ * SumOfSquares(d_->cfrc_ext, kSpatialDim * m_->nbody);
    return std::min(std::max(cost, contact_cost_range_.first), contact_cost_range_.second);
  }

  // v4: the mass center's x, y and their norm; v5: qpos[0], qpos[1], their norm and the tendons.
  void WritePositions(const Slot& out, const std::array<double, 2>& mass_center) const {
    const double* xy = v5_ ? d_->qpos : mass_center.data();
    Set(out, info_[kXPosition], xy[0]);
    Set(out, info_[kYPosition], xy[1]);
    Set(out, info_[kDistanceFromOrigin], Norm2(xy[0], xy[1]));
    if (v5_) WriteTendonInfo(out, tendon_length_, tendon_velocity_, *m_, *d_);
  }

  const bool v5_;
  const int obs_;
  const HumanoidObservation observation_;
  const double forward_reward_weight_, ctrl_cost_weight_, contact_cost_weight_, healthy_reward_;
  const bool terminate_when_unhealthy_;
  const std::pair<double, double> healthy_z_range_, contact_cost_range_;
  const double reset_noise_scale_, body_mass_sum_;
  const int tendon_length_, tendon_velocity_;
  const PlanarInfoFields<kNumInfo> info_;
};

}  // namespace pp::mujoco
