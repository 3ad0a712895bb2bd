// Registers the tutorial family's tasks: their ids, their config keys with defaults, their factories.
#include "envs/tutorial/register.h"

#include <memory>
#include <string>

#include "core/task_maker.h"
#include "envs/tutorial/faulty.h"
#include "envs/tutorial/guessing_game.h"

namespace pp {

void RegisterTutorial(Registry& registry) {
  // Every config key the task accepts, with its default; users override them as make() kwargs.
  Config defaults;
  defaults.Set("max_episode_steps", int64_t{100});
  defaults.Set("max_num_players", int64_t{4});
  defaults.Set("num_actions", int64_t{4});
  defaults.Set("episode_length", int64_t{10});
  defaults.Set("raise_on_step", int64_t{-1});  // raise from Step() on this elapsed step (tests errors)
  defaults.Set("step_sleep_us", int64_t{0});   // sleep (1 + env_id % 4) * this per step (tests async)
  auto make_spec = [](const std::string& task_id, const Config& config) {
    EnvSpec spec = tutorial::GuessingGame::MakeSpec(task_id, config);
    if (spec.max_num_players > tutorial::GuessingGame::kMaxPlayersOnStack) {
      throw std::invalid_argument("max_num_players must be <= 64");
    }
    return spec;
  };
  registry.Add(MakeTask<tutorial::GuessingGame>("GuessingGame-v0", "tutorial", std::move(defaults), make_spec));

  // Faulty-v0, the fault-injection env (faulty.h says what each key does); -1 switches a fault off.
  Config faults;
  faults.Set("max_episode_steps", int64_t{100});
  faults.Set("episode_length", int64_t{10});
  faults.Set("num_actions", int64_t{2});
  faults.Set("fault_env_id", int64_t{-1});  // the env the faults apply to; -1: every env
  faults.Set("raise_on_step", int64_t{-1});
  faults.Set("raise_on_reset", int64_t{-1});
  faults.Set("nan_on_step", int64_t{-1});
  faults.Set("nan_in", std::string("both"));
  faults.Set("step_sleep_us", int64_t{0});
  registry.Add(MakeTask<tutorial::Faulty>("Faulty-v0", "tutorial", std::move(faults), tutorial::Faulty::MakeSpec));
}

}  // namespace pp
