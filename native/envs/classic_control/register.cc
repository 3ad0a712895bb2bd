// Registers Gymnasium's classic-control tasks: per task id, its defaults (time limit included),
// Gymnasium's reward threshold, and the functions that build its spec and its envs.
#include "envs/classic_control/register.h"

#include <memory>
#include <string>
#include <utility>

#include "envs/classic_control/acrobot.h"
#include "envs/classic_control/cartpole.h"
#include "envs/classic_control/mountain_car.h"
#include "envs/classic_control/mountain_car_continuous.h"
#include "envs/classic_control/pendulum.h"

namespace pp {
namespace {

using SpecFn = EnvSpec (*)(const std::string&, const Config&);

// `reward_threshold` is Gymnasium's registered value; has_threshold is false where it registers none.
template <typename EnvT>
TaskEntry MakeTask(std::string task_id, Config defaults, SpecFn spec_fn, bool has_threshold,
                   double reward_threshold) {
  TaskEntry task;
  task.task_id = std::move(task_id);
  task.family = "classic_control";
  task.defaults = std::move(defaults);
  if (has_threshold) task.reward_threshold = reward_threshold;
  task.make_spec = spec_fn;
  task.make_env = [](const EnvSpec& spec, int env_id) -> std::unique_ptr<Env> {
    return std::make_unique<EnvT>(spec, env_id);
  };
  return task;
}

}  // namespace

void RegisterClassicControl(Registry& registry) {
  using namespace classic_control;
  // Time limits and thresholds from gymnasium/envs/__init__.py.
  registry.Add(MakeTask<CartPoleEnv>("CartPole-v0", CartPoleDefaults(200), CartPoleSpec, true, 195.0));
  registry.Add(MakeTask<CartPoleEnv>("CartPole-v1", CartPoleDefaults(500), CartPoleSpec, true, 475.0));
  registry.Add(MakeTask<MountainCarEnv>("MountainCar-v0", MountainCarDefaults(200), MountainCarSpec, true, -110.0));
  registry.Add(MakeTask<MountainCarContinuousEnv>("MountainCarContinuous-v0", MountainCarContinuousDefaults(999),
                                                  MountainCarContinuousSpec, true, 90.0));
  registry.Add(MakeTask<PendulumEnv>("Pendulum-v1", PendulumDefaults(200), PendulumSpec, false, 0.0));
  registry.Add(MakeTask<AcrobotEnv>("Acrobot-v1", AcrobotDefaults(500), AcrobotSpec, true, -100.0));
}

}  // namespace pp
