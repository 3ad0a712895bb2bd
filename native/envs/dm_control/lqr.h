// dm_control's lqr domain (suite/lqr.py): LqrLqr21-v1, LqrLqr62-v1: a chain of springs whose
// stiffnesses suite.load draws from the task's RandomState, before any episode.
#pragma once

#include <cmath>
#include <string>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class LqrTask { kLqr21, kLqr62 };

class LqrEnv final : public SuiteEnv<LqrEnv, LqrTask> {
 public:
  static constexpr bool kEditsModel = true;        // the joints' stiffness and damping, per episode
  static constexpr double kControlCostCoef = 0.1;  // _CONTROL_COST_COEF
  static constexpr double kTerminalTol = 1e-6;     // LQRLevel._TERMINAL_TOL
  static constexpr double kStiffnessLow = 15, kStiffnessHigh = 25, kDampingLow = 0, kDampingHigh = 0;

  static int NumBodies(Task task) { return task == Task::kLqr21 ? 2 : 6; }
  static int NumActuators(Task task) { return task == Task::kLqr21 ? 1 : 2; }
  static TaskInfo Info(Task task) { return {"lqr", task == Task::kLqr21 ? "lqr_2_1" : "lqr_6_2", kInfinity, 0}; }
  // The chain with placeholder stiffnesses: each env writes the ones its seed draws (Seeded()).
  static ModelPtr Model(const Config& config, Task task) {
    const std::string& suite_dir = config.GetString("suite_dir");
    return CompileModel(suite_dir, "lqr.xml", MakeModelXml(suite_dir, NumBodies(task), NumActuators(task)));
  }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) { return {{"position", {m.nq}}, {"velocity", {m.nv}}}; }
  // The model the seed drew: each joint's stiffness.
  static ObsLayout TaskStateLayout(Task task) { return {{"stiffness", {NumBodies(task)}}}; }

  LqrEnv(const EnvSpec& spec, int env_id, Task task) : SuiteEnv(spec, env_id, task) {}

 protected:
  // _make_model's draws, joint by joint: stiffness, then damping (always 0, still drawn).
  void Seeded() override {
    for (int j = 0; j < m_->njnt; ++j) {
      m_->jnt_stiffness[j] = random().Uniform(kStiffnessLow, kStiffnessHigh);
      m_->dof_damping[m_->jnt_dofadr[j]] = random().Uniform(kDampingLow, kDampingHigh);
    }
  }
  // qpos = sqrt(2) * unit / |unit| for a Gaussian unit vector (|.| as BLAS's ddot: fused).
  void InitializeEpisode() override {
    const int n = m_->nq;
    for (int i = 0; i < n; ++i) d_->qpos[i] = random().StandardNormal();
    const double norm = std::sqrt(Dot(d_->qpos, d_->qpos, n));
    const double sqrt2 = std::sqrt(2.0);
    for (int i = 0; i < n; ++i) d_->qpos[i] = sqrt2 * d_->qpos[i] / norm;
  }
  void Observe(double* out) override {
    for (int i = 0; i < m_->nq; ++i) *out++ = d_->qpos[i];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const double state_cost = 0.5 * Dot(d_->qpos, d_->qpos, m_->nq);
    const double control_l2_norm = 0.5 * Dot(d_->ctrl, d_->ctrl, m_->nu);
    return 1 - (state_cost + control_l2_norm * kControlCostCoef);
  }
  // np.linalg.norm(physics.state()) < _TERMINAL_TOL: state is qpos, qvel (and act: none here).
  bool GetTermination() override {
    double sum = d_->qpos[0] * d_->qpos[0];
    for (int i = 1; i < m_->nq; ++i) sum = std::fma(d_->qpos[i], d_->qpos[i], sum);
    for (int i = 0; i < m_->nv; ++i) sum = std::fma(d_->qvel[i], d_->qvel[i], sum);
    return std::sqrt(sum) < kTerminalTol;
  }
  void TaskState(double* out) override {
    for (int j = 0; j < m_->njnt; ++j) out[j] = m_->jnt_stiffness[j];
  }

 private:
  static constexpr double kInfinity = kInf;  // _DEFAULT_TIME_LIMIT = float('inf')

  // np.dot of two float64 vectors shorter than 16: OpenBLAS's ddot tail loop, one fused
  // multiply-add per element after the first product.
  static double Dot(const double* x, const double* y, int n) {
    if (n == 0) return 0.0;
    double sum = x[0] * y[0];
    for (int i = 1; i < n; ++i) sum = std::fma(x[i], y[i], sum);
    return sum;
  }

  // _make_model(n_bodies, n_actuators): lqr.xml with a chain of bodies (a slide joint, a sphere and
  // a site each) in the worldbody, a motor on each of the first n_actuators joints, and a spatial
  // tendon between consecutive sites.
  static std::string MakeModelXml(const std::string& suite_dir, int n_bodies, int n_actuators) {
    std::string xml = ReadText(suite_dir + "/lqr.xml");
    std::string bodies, closing, actuators, tendons;
    for (int b = 0; b < n_bodies; ++b) {
      const std::string i = std::to_string(b);
      bodies += "<body name=\"body_" + i + "\" pos=\"" + (b == 0 ? ".25 0 .1" : ".25 0 0") + "\"><joint name=\"joint_" +
                i + "\" stiffness=\"20\" damping=\"0\"/><geom name=\"geom_" + i + "\"/><site name=\"site_" + i + "\"/>";
      closing += "</body>";
      if (b < n_actuators) actuators += "<motor name=\"motor_" + i + "\" joint=\"joint_" + i + "\"/>";
      if (b < n_bodies - 1) {
        tendons += "<spatial name=\"tendon_" + i + "\"><site site=\"site_" + i + "\"/><site site=\"site_" +
                   std::to_string(b + 1) + "\"/></spatial>";
      }
    }
    ReplaceFirst(xml, "</worldbody>", bodies + closing + "</worldbody>");
    ReplaceFirst(xml, "</mujoco>", "<actuator>" + actuators + "</actuator><tendon>" + tendons + "</tendon></mujoco>");
    return xml;
  }
};

}  // namespace pp::dm_control
