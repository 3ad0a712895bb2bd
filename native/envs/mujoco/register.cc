// The MuJoCo task table: per task id, its env class, Gymnasium version, time limit and reward
// threshold (from gymnasium/envs/__init__.py). A new task is one header and one line here.
#include "envs/mujoco/register.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/task_maker.h"
#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/humanoid.h"
#include "envs/mujoco/humanoid_standup.h"
#include "envs/mujoco/inverted_double_pendulum.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/planar_walker.h"
#include "envs/mujoco/pusher.h"
#include "envs/mujoco/reacher.h"
#include "envs/mujoco/swimmer.h"

namespace pp::mujoco {
namespace {

// No reward threshold: Gymnasium registers the task without one (spec.reward_threshold is None).
constexpr std::optional<double> kNoThreshold = std::nullopt;

// EnvT provides Defaults(Version), MakeSpec(Version, const Config&) and EnvT(spec, env_id, Version).
template <typename EnvT>
TaskEntry MujocoTask(std::string task_id, Version version, std::optional<double> reward_threshold,
                     const std::string& assets_dir, int64_t max_episode_steps = kDefaultMaxEpisodeSteps) {
  Config defaults = EnvT::Defaults(version);
  defaults.Set("max_episode_steps", max_episode_steps);
  defaults.Set("assets_dir", assets_dir);
  return pp::MakeTask<EnvT>(
      std::move(task_id), "mujoco", std::move(defaults),
      [version](const std::string& /*id*/, const Config& config) { return EnvT::MakeSpec(version, config); },
      reward_threshold, version);
}

}  // namespace

void RegisterMujoco(Registry& registry, const std::string& assets_dir) {
  constexpr Version v4 = Version::kV4, v5 = Version::kV5;
  registry.Add(MujocoTask<AntEnv>("Ant-v4", v4, 6000.0, assets_dir));
  registry.Add(MujocoTask<AntEnv>("Ant-v5", v5, 6000.0, assets_dir));
  registry.Add(MujocoTask<HalfCheetahEnv>("HalfCheetah-v4", v4, 4800.0, assets_dir));
  registry.Add(MujocoTask<HalfCheetahEnv>("HalfCheetah-v5", v5, 4800.0, assets_dir));
  registry.Add(MujocoTask<HopperEnv>("Hopper-v4", v4, 3800.0, assets_dir));
  registry.Add(MujocoTask<HopperEnv>("Hopper-v5", v5, 3800.0, assets_dir));
  registry.Add(MujocoTask<Walker2dEnv>("Walker2d-v4", v4, kNoThreshold, assets_dir));
  registry.Add(MujocoTask<Walker2dEnv>("Walker2d-v5", v5, kNoThreshold, assets_dir));
  registry.Add(MujocoTask<SwimmerEnv>("Swimmer-v4", v4, 360.0, assets_dir));
  registry.Add(MujocoTask<SwimmerEnv>("Swimmer-v5", v5, 360.0, assets_dir));
  registry.Add(MujocoTask<HumanoidEnv>("Humanoid-v4", v4, kNoThreshold, assets_dir));
  registry.Add(MujocoTask<HumanoidEnv>("Humanoid-v5", v5, kNoThreshold, assets_dir));
  registry.Add(MujocoTask<HumanoidStandupEnv>("HumanoidStandup-v4", v4, kNoThreshold, assets_dir));
  registry.Add(MujocoTask<HumanoidStandupEnv>("HumanoidStandup-v5", v5, kNoThreshold, assets_dir));
  registry.Add(MujocoTask<InvertedPendulumEnv>("InvertedPendulum-v4", v4, 950.0, assets_dir));
  registry.Add(MujocoTask<InvertedPendulumEnv>("InvertedPendulum-v5", v5, 950.0, assets_dir));
  registry.Add(MujocoTask<InvertedDoublePendulumEnv>("InvertedDoublePendulum-v4", v4, 9100.0, assets_dir));
  registry.Add(MujocoTask<InvertedDoublePendulumEnv>("InvertedDoublePendulum-v5", v5, 9100.0, assets_dir));
  registry.Add(MujocoTask<ReacherEnv>("Reacher-v4", v4, -3.75, assets_dir, ReacherEnv::kMaxEpisodeSteps));
  registry.Add(MujocoTask<ReacherEnv>("Reacher-v5", v5, -3.75, assets_dir, ReacherEnv::kMaxEpisodeSteps));
  registry.Add(MujocoTask<PusherEnv>("Pusher-v4", v4, 0.0, assets_dir, PusherEnv::kMaxEpisodeSteps));
  registry.Add(MujocoTask<PusherEnv>("Pusher-v5", v5, 0.0, assets_dir, PusherEnv::kMaxEpisodeSteps));
}

}  // namespace pp::mujoco
