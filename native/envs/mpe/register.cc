// Registers the MPE tasks: per task id (mpe2's module names), the kwargs its env()/parallel_env()
// takes with mpe2's defaults, and the scenario that builds its world.
#include "envs/mpe/register.h"

#include <string>
#include <utility>

#include "core/task_maker.h"
#include "envs/mpe/mpe_env.h"

namespace pp {

namespace {

// The kwargs every MPE task takes. max_cycles is mpe2's episode length (truncation); the core's
// max_episode_steps, 0 by default, is the same limit and overrides it when positive.
// dynamic_rescaling only changes how mpe2 draws a frame; it is accepted for compatibility.
Config Common() {
  Config c;
  c.Set("max_episode_steps", int64_t{0});
  c.Set("max_cycles", int64_t{25});
  c.Set("continuous_actions", false);
  c.Set("dynamic_rescaling", true);
  return c;
}

// mpe2's "positive int or None" neighbour counts (partial observability), 0 being None.
void AddNeighbors(Config& c) {
  c.Set("num_agent_neighbors", int64_t{0});
  c.Set("num_landmark_neighbors", int64_t{0});
}

// Curriculum: mpe2's `curriculum` kwarg, in its stage 0 (mpe2 1.1.1's set_curriculum_stage and
// advance_curriculum change nothing: its BaseScenario's curriculum_stage property drops the value);
// and terminate_on_success.
void AddCurriculum(Config& c) {
  c.Set("curriculum", false);
  c.Set("terminate_on_success", false);
}

void Add(Registry& registry, const std::string& id, const std::string& scenario, Config defaults) {
  SpecMaker spec = [scenario](const std::string& /*task_id*/, const Config& config) {
    return mpe::MpeEnv::MakeSpec(scenario, config);
  };
  // mpe2 registers no reward threshold.
  registry.Add(MakeTask<mpe::MpeEnv>(id, "mpe", std::move(defaults), std::move(spec), std::nullopt, scenario));
}

}  // namespace

void RegisterMpe(Registry& registry) {
  Add(registry, "simple_v3", "simple", Common());

  Config spread = Common();
  spread.Set("N", int64_t{3});
  spread.Set("local_ratio", 0.5);
  AddCurriculum(spread);
  AddNeighbors(spread);
  Add(registry, "simple_spread_v3", "simple_spread", std::move(spread));

  Config tag = Common();
  tag.Set("num_good", int64_t{1});
  tag.Set("num_adversaries", int64_t{3});
  tag.Set("num_obstacles", int64_t{2});
  AddCurriculum(tag);
  AddNeighbors(tag);
  Add(registry, "simple_tag_v3", "simple_tag", std::move(tag));

  Config adversary = Common();
  adversary.Set("N", int64_t{2});
  AddNeighbors(adversary);
  Add(registry, "simple_adversary_v3", "simple_adversary", std::move(adversary));

  Config reference = Common();
  reference.Set("local_ratio", 0.5);
  Add(registry, "simple_reference_v3", "simple_reference", std::move(reference));

  Add(registry, "simple_speaker_listener_v4", "simple_speaker_listener", Common());
  Add(registry, "simple_push_v3", "simple_push", Common());
  Add(registry, "simple_crypto_v3", "simple_crypto", Common());

  Config world_comm = Common();
  world_comm.Set("num_good", int64_t{2});
  world_comm.Set("num_adversaries", int64_t{4});
  world_comm.Set("num_obstacles", int64_t{1});
  world_comm.Set("num_food", int64_t{2});
  world_comm.Set("num_forests", int64_t{2});
  Add(registry, "simple_world_comm_v3", "simple_world_comm", std::move(world_comm));
}

}  // namespace pp
