// The MuJoCo task table: per task id, its env class, Gymnasium version, time limit and reward
// threshold (from gymnasium/envs/__init__.py). A new task is one header and one line here.
#include "envs/mujoco/register.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/hopper.h"
#include "envs/mujoco/humanoid.h"
#include "envs/mujoco/humanoid_standup.h"
#include "envs/mujoco/inverted_double_pendulum.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/pusher.h"
#include "envs/mujoco/reacher.h"
#include "envs/mujoco/swimmer.h"
#include "envs/mujoco/walker2d.h"

namespace pp::mujoco {
namespace {

// No reward threshold: Gymnasium registers the task without one (spec.reward_threshold is None).
constexpr std::optional<double> kNoThreshold = std::nullopt;

// EnvT provides Defaults(Version), MakeSpec(Version, const Config&) and EnvT(spec, env_id, Version).
template <typename EnvT>
TaskEntry MakeTask(std::string task_id, Version version, std::optional<double> reward_threshold,
                   const std::string& assets_dir, int64_t max_episode_steps = kDefaultMaxEpisodeSteps) {
  TaskEntry task;
  task.task_id = std::move(task_id);
  task.family = "mujoco";
  task.defaults = EnvT::Defaults(version);
  task.defaults.Set("max_episode_steps", max_episode_steps);
  task.defaults.Set("assets_dir", assets_dir);
  task.reward_threshold = reward_threshold;
  task.make_spec = [version](const std::string& /*id*/, const Config& config) {
    return EnvT::MakeSpec(version, config);
  };
  task.make_env = [version](const EnvSpec& spec, int env_id) -> std::unique_ptr<Env> {
    return std::make_unique<EnvT>(spec, env_id, version);
  };
  return task;
}

}  // namespace

void RegisterMujoco(Registry& registry, const std::string& assets_dir) {
  constexpr Version v4 = Version::kV4, v5 = Version::kV5;
  registry.Add(MakeTask<AntEnv>("Ant-v4", v4, 6000.0, assets_dir));
  registry.Add(MakeTask<AntEnv>("Ant-v5", v5, 6000.0, assets_dir));
  registry.Add(MakeTask<HalfCheetahEnv>("HalfCheetah-v4", v4, 4800.0, assets_dir));
  registry.Add(MakeTask<HalfCheetahEnv>("HalfCheetah-v5", v5, 4800.0, assets_dir));
  registry.Add(MakeTask<HopperEnv>("Hopper-v4", v4, 3800.0, assets_dir));
  registry.Add(MakeTask<HopperEnv>("Hopper-v5", v5, 3800.0, assets_dir));
  registry.Add(MakeTask<Walker2dEnv>("Walker2d-v4", v4, kNoThreshold, assets_dir));
  registry.Add(MakeTask<Walker2dEnv>("Walker2d-v5", v5, kNoThreshold, assets_dir));
  registry.Add(MakeTask<SwimmerEnv>("Swimmer-v4", v4, 360.0, assets_dir));
  registry.Add(MakeTask<SwimmerEnv>("Swimmer-v5", v5, 360.0, assets_dir));
  registry.Add(MakeTask<HumanoidEnv>("Humanoid-v4", v4, kNoThreshold, assets_dir));
  registry.Add(MakeTask<HumanoidEnv>("Humanoid-v5", v5, kNoThreshold, assets_dir));
  registry.Add(MakeTask<HumanoidStandupEnv>("HumanoidStandup-v4", v4, kNoThreshold, assets_dir));
  registry.Add(MakeTask<HumanoidStandupEnv>("HumanoidStandup-v5", v5, kNoThreshold, assets_dir));
  registry.Add(MakeTask<InvertedPendulumEnv>("InvertedPendulum-v4", v4, 950.0, assets_dir));
  registry.Add(MakeTask<InvertedPendulumEnv>("InvertedPendulum-v5", v5, 950.0, assets_dir));
  registry.Add(MakeTask<InvertedDoublePendulumEnv>("InvertedDoublePendulum-v4", v4, 9100.0, assets_dir));
  registry.Add(MakeTask<InvertedDoublePendulumEnv>("InvertedDoublePendulum-v5", v5, 9100.0, assets_dir));
  registry.Add(MakeTask<ReacherEnv>("Reacher-v4", v4, -3.75, assets_dir, ReacherEnv::kMaxEpisodeSteps));
  registry.Add(MakeTask<ReacherEnv>("Reacher-v5", v5, -3.75, assets_dir, ReacherEnv::kMaxEpisodeSteps));
  registry.Add(MakeTask<PusherEnv>("Pusher-v4", v4, 0.0, assets_dir, PusherEnv::kMaxEpisodeSteps));
  registry.Add(MakeTask<PusherEnv>("Pusher-v5", v5, 0.0, assets_dir, PusherEnv::kMaxEpisodeSteps));
}

}  // namespace pp::mujoco
