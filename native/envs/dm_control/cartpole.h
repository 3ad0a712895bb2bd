// dm_control's cartpole domain (suite/cartpole.py): CartpoleBalance-v1, CartpoleBalanceSparse-v1,
// CartpoleSwingup-v1, CartpoleSwingupSparse-v1, CartpoleTwoPoles-v1, CartpoleThreePoles-v1.
#pragma once

#include <string>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"
#include "envs/dm_control/xml_text.h"

namespace pp::dm_control {

enum class CartpoleTask { kBalance, kBalanceSparse, kSwingup, kSwingupSparse, kTwoPoles, kThreePoles };

class CartpoleEnv final : public SuiteEnv<CartpoleEnv, CartpoleTask> {
 public:
  static TaskInfo Info(Task task) {
    static const char* const kNames[] = {"balance",        "balance_sparse", "swingup",
                                         "swingup_sparse", "two_poles",      "three_poles"};
    return {"cartpole", kNames[static_cast<int>(task)], 10, 0};
  }
  static int NumPoles(Task task) { return task == Task::kTwoPoles ? 2 : task == Task::kThreePoles ? 3 : 1; }
  static bool SwingUp(Task task) { return task != Task::kBalance && task != Task::kBalanceSparse; }
  static bool Sparse(Task task) { return task == Task::kBalanceSparse || task == Task::kSwingupSparse; }

  static ModelPtr Model(const Config& config, Task task) {
    const int n = NumPoles(task);
    if (n == 1) return SuiteModel(config, "cartpole.xml");
    const std::string& suite_dir = config.GetString("suite_dir");
    return CompileModel(suite_dir, "cartpole.xml", MakeModelXml(suite_dir, n));
  }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) {
    return {{"position", {1 + 2 * (m.nbody - 2)}}, {"velocity", {m.nv}}};
  }

  CartpoleEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        slider_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "slider")]),
        hinge_1_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "hinge_1")]) {}

 protected:
  void InitializeEpisode() override {
    const int nv = m_->nv;
    if (SwingUp(task_)) {
      d_->qpos[slider_] = .01 * random().StandardNormal();
      d_->qpos[hinge_1_] = M_PI + .01 * random().StandardNormal();
      for (int i = 2; i < nv; ++i) d_->qpos[i] = .1 * random().StandardNormal();
    } else {
      d_->qpos[slider_] = random().Uniform(-.1, .1);
      for (int i = 1; i < nv; ++i) d_->qpos[i] = random().Uniform(-.034, .034);
    }
    for (int i = 0; i < nv; ++i) d_->qvel[i] = 0.01 * random().StandardNormal();
  }
  void Observe(double* out) override {
    *out++ = d_->qpos[slider_];
    for (int b = 2; b < m_->nbody; ++b) {  // xmat[2:, ['zz', 'xz']].ravel()
      *out++ = d_->xmat[9 * b + 8];
      *out++ = d_->xmat[9 * b + 2];
    }
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  double GetReward() override {
    const int poles = m_->nbody - 2;
    const double cart_position = d_->qpos[slider_];
    auto pole_cosine = [this](std::ptrdiff_t p) { return d_->xmat[9 * (2 + p) + 8]; };
    if (Sparse(task_)) {
      const double cart_in_bounds = Tolerance{-.25, .25}(cart_position);
      double angle_in_bounds = 1.0;  // .prod() of 0s and 1s
      for (int p = 0; p < poles; ++p) angle_in_bounds *= Tolerance{.995, 1}(pole_cosine(p), Operand::kArray);
      return cart_in_bounds * angle_in_bounds;
    }
    const double upright = Mean([&](std::ptrdiff_t p) { return (pole_cosine(p) + 1) / 2; }, poles);
    const double centered = (1 + Tolerance{0, 0, 2}(cart_position)) / 2;
    const double small_control = (4 + Tolerance{0, 0, 1, Sigmoid::kQuadratic, 0}(d_->ctrl[0], Operand::kArray)) / 5;
    double small_velocity = Tolerance{0, 0, 5}(d_->qvel[1], Operand::kArray);  // .min() over qvel[1:]
    for (int i = 2; i < m_->nv; ++i)
      small_velocity = std::min(small_velocity, Tolerance{0, 0, 5}(d_->qvel[i], Operand::kArray));
    small_velocity = (1 + small_velocity) / 2;
    return upright * small_control * small_velocity * centered;
  }

 private:
  // _make_model(n_poles): cartpole.xml with poles 2..n nested in pole 1, the floor lowered and the
  // two cameras moved back, as the suite edits it with lxml (the same elements and attributes).
  static std::string MakeModelXml(const std::string& suite_dir, int n) {
    std::string xml = ReadText(suite_dir + "/cartpole.xml");
    std::string poles;
    for (int p = 2; p <= n; ++p) {
      const std::string i = std::to_string(p);
      poles += "<body name=\"pole_" + i + "\" pos=\"0 0 1\" childclass=\"pole\"><joint name=\"hinge_" + i +
               "\"/><geom name=\"pole_" + i + "\"/>";
    }
    for (int p = 2; p <= n; ++p) poles += "</body>";
    ReplaceFirst(xml, "<geom name=\"pole_1\"/>", "<geom name=\"pole_1\"/>" + poles);
    // '0 0 {}'.format(1 - n_poles - .05)
    ReplaceFirst(xml, "<geom name=\"floor\" pos=\"0 0 -.05\"",
                 "<geom name=\"floor\" pos=\"0 0 " + PyFloat(1 - n - .05) + "\"");
    ReplaceFirst(xml, "<camera name=\"fixed\" pos=\"0 -4 1\"",
                 "<camera name=\"fixed\" pos=\"0 " + std::to_string(-1 - 2 * n) + " 1\"");
    ReplaceFirst(xml, "target=\"cart\" pos=\"0 -2 2\"", "target=\"cart\" pos=\"0 " + std::to_string(-2 * n) + " 2\"");
    return xml;
  }

  const int slider_, hinge_1_;
};

}  // namespace pp::dm_control
