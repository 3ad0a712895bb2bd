// Registers Gymnasium's Box2D tasks: per task id, its defaults (time limit included), Gymnasium's
// reward threshold, and the functions that build its spec and its envs.
#include "envs/box2d/register.h"

#include "core/task_maker.h"
#include "envs/box2d/bipedal_walker.h"
#include "envs/box2d/lunar_lander.h"

namespace pp {

void RegisterBox2d(Registry& registry) {
  using namespace box2d;
  // Time limits and thresholds from gymnasium/envs/__init__.py.
  registry.Add(MakeTask<LunarLanderEnv>("LunarLander-v3", "box2d", LunarLanderDefaults(false), LunarLanderSpec, 200.0));
  registry.Add(
      MakeTask<LunarLanderEnv>("LunarLanderContinuous-v3", "box2d", LunarLanderDefaults(true), LunarLanderSpec, 200.0));
  registry.Add(
      MakeTask<BipedalWalkerEnv>("BipedalWalker-v3", "box2d", BipedalWalkerDefaults(false), BipedalWalkerSpec, 300.0));
  registry.Add(MakeTask<BipedalWalkerEnv>("BipedalWalkerHardcore-v3", "box2d", BipedalWalkerDefaults(true),
                                          BipedalWalkerSpec, 300.0));
}

}  // namespace pp
