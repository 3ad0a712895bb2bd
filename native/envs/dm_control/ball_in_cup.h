// dm_control's ball_in_cup domain (suite/ball_in_cup.py): BallInCupCatch-v1.
#pragma once

#include <cmath>

#include "envs/dm_control/rewards.h"
#include "envs/dm_control/suite_env.h"

namespace pp::dm_control {

class BallInCupEnv final : public SuiteEnv<BallInCupEnv, int> {
 public:
  static TaskInfo Info(Task /*task*/) { return {"ball_in_cup", "catch", 20, .02}; }
  static ModelPtr Model(const Config& config, Task /*task*/) { return SuiteModel(config, "ball_in_cup.xml"); }
  static ObsLayout Layout(const mjModel& m, Task /*task*/) { return {{"position", {m.nq}}, {"velocity", {m.nv}}}; }

  BallInCupEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task),
        ball_x_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "ball_x")]),
        ball_z_(m_->jnt_qposadr[Id(mjOBJ_JOINT, "ball_z")]),
        target_(Id(mjOBJ_SITE, "target")),
        ball_(Id(mjOBJ_BODY, "ball")),
        ball_geom_(Id(mjOBJ_GEOM, "ball")) {}

 protected:
  // The ball anywhere in a box under the cup, redrawn while it penetrates anything.
  void InitializeEpisode() override {
    do {
      d_->qpos[ball_x_] = random().Uniform(-.2, .2);
      d_->qpos[ball_z_] = random().Uniform(.2, .5);
      physics_.AfterReset();
    } while (d_->ncon > 0);
  }
  void Observe(double* out) override {
    for (int i = 0; i < m_->nq; ++i) *out++ = d_->qpos[i];
    for (int i = 0; i < m_->nv; ++i) *out++ = d_->qvel[i];
  }
  // in_target(): 1 if the ball is inside the target box in x and z.
  double GetReward() override {
    const double ball_size = m_->geom_size[3 * ball_geom_];
    const int axes[2] = {0, 2};
    for (int k : axes) {
      const double ball_to_target = std::abs(d_->site_xpos[3 * target_ + k] - d_->xpos[3 * ball_ + k]);
      if (!(ball_to_target < m_->site_size[3 * target_ + k] - ball_size)) return 0.0;
    }
    return 1.0;
  }

 private:
  const int ball_x_, ball_z_, target_, ball_, ball_geom_;
};

}  // namespace pp::dm_control
