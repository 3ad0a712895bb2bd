// Registers the tutorial env: its task id, its config keys with defaults, and its factories.
#include "envs/tutorial/register.h"

#include <memory>

#include "core/task_maker.h"
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
}

}  // namespace pp
