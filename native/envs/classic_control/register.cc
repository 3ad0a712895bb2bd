// Registers Gymnasium's classic-control tasks: per task id, its defaults (time limit included),
// Gymnasium's reward threshold, and the functions that build its spec and its envs.
#include "envs/classic_control/register.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/task_maker.h"
#include "envs/classic_control/acrobot.h"
#include "envs/classic_control/cartpole.h"
#include "envs/classic_control/mountain_car.h"
#include "envs/classic_control/mountain_car_continuous.h"
#include "envs/classic_control/pendulum.h"

namespace pp {
namespace {

// `threshold` is Gymnasium's registered reward threshold (std::nullopt where it registers none).
template <typename EnvT>
TaskEntry ClassicTask(std::string task_id, Config defaults, SpecMaker spec_fn, std::optional<double> threshold) {
  return pp::MakeTask<EnvT>(std::move(task_id), "classic_control", std::move(defaults), std::move(spec_fn), threshold);
}

}  // namespace

void RegisterClassicControl(Registry& registry, const std::string& classic_control_dir) {
  using namespace classic_control;
  // One arrow image for every Pendulum env of this registration, decoded at its first render().
  auto arrow = std::make_shared<ClockwiseArrow>(
      classic_control_dir.empty() ? std::string() : classic_control_dir + "/assets/clockwise.png");
  // Time limits and thresholds from gymnasium/envs/__init__.py.
  registry.Add(ClassicTask<CartPoleEnv>("CartPole-v0", CartPoleDefaults(200), CartPoleSpec, 195.0));
  registry.Add(ClassicTask<CartPoleEnv>("CartPole-v1", CartPoleDefaults(500), CartPoleSpec, 475.0));
  registry.Add(ClassicTask<MountainCarEnv>("MountainCar-v0", MountainCarDefaults(200), MountainCarSpec, -110.0));
  registry.Add(ClassicTask<MountainCarContinuousEnv>("MountainCarContinuous-v0", MountainCarContinuousDefaults(999),
                                                     MountainCarContinuousSpec, 90.0));
  registry.Add(pp::MakeTask<PendulumEnv>("Pendulum-v1", "classic_control", PendulumDefaults(200), PendulumSpec,
                                         std::nullopt, arrow));
  // gym 0.21's (EnvPool's) Pendulum-v0: Pendulum-v1 but for the order of the speed's clip.
  registry.Add(pp::MakeTask<PendulumEnv>("Pendulum-v0", "classic_control", PendulumDefaults(200), PendulumSpec,
                                         std::nullopt, arrow, true));
  registry.Add(ClassicTask<AcrobotEnv>("Acrobot-v1", AcrobotDefaults(500), AcrobotSpec, -100.0));
}

}  // namespace pp
