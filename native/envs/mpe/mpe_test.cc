// Standalone checks of the MPE family (no pool, no Python; ctest runs it, under the sanitizers in CI):
// every task and action mode stepped through several episodes with its invariants (finite values,
// zero padding past each agent's observation, rewards summed, episodes of max_cycles), resets
// repeatable from a seed, an agent's out-of-range action refused, and frames drawn where declared.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "envs/mpe/register.h"
#include "tests/test_util.h"

namespace {

struct Run {
  std::vector<float> obs;  // every step's observation rows, concatenated
  double reward_sum = 0.0;
  int episodes = 0;
};

// Steps `id` with random actions from `seed`; checks the invariants as it goes.
Run StepTask(const pp::Registry& registry, const std::string& id, bool continuous, uint64_t seed) {
  const pp::TaskEntry& task = *registry.Find(id);
  const pp::EnvSpec spec = pp::MakeSpec(task, {{"continuous_actions", continuous}, {"max_cycles", int64_t{9}}});
  pp::SingleSlotAllocator slots(spec);
  std::unique_ptr<pp::Env> env = task.make_env(spec, 0);
  pp::EnvDriver(*env).SetAllocator(&slots);
  pp::EnvDriver(*env).Seed(seed);
  const int players = spec.max_num_players;
  const int obs = spec.StateIndex("obs"), reward = spec.StateIndex("info:players.reward");
  const int index = spec.StateIndex("info:players.agent_index");
  const int width = spec.state[static_cast<std::size_t>(obs)].shape[0];
  const std::vector<double>& dims = spec.tables.at("obs_dims");
  const std::vector<double>& sizes = spec.tables.at("action_sizes");
  const int action_width = continuous ? spec.action[0].shape[0] : 1;
  std::vector<float> continuous_rows(static_cast<std::size_t>(players * action_width));
  std::vector<int64_t> discrete_rows(static_cast<std::size_t>(players));
  const std::byte* rows[1] = {continuous ? reinterpret_cast<const std::byte*>(continuous_rows.data())
                                         : reinterpret_cast<const std::byte*>(discrete_rows.data())};
  const pp::Action act(rows);
  std::mt19937 draws(static_cast<unsigned>(seed));
  std::uniform_real_distribution<float> unit(-0.2f, 1.2f);  // outside [0, 1] too: clipped
  Run run;
  auto record = [&] {
    const float* o = slots.Get<float>(obs);
    for (int p = 0; p < players; ++p) {
      CHECK(slots.Get<int32_t>(index)[p] == p);
      for (int k = 0; k < width; ++k) {
        const float v = o[p * width + k];
        CHECK(std::isfinite(v));
        if (k >= static_cast<int>(dims[static_cast<std::size_t>(p)])) CHECK(v == 0.0f);
        run.obs.push_back(v);
      }
    }
  };
  pp::EnvDriver(*env).Reset();
  record();
  for (int t = 0; t < 30; ++t) {
    for (int p = 0; p < players; ++p) {
      const auto size = static_cast<unsigned>(sizes[static_cast<std::size_t>(p)]);
      discrete_rows[static_cast<std::size_t>(p)] = static_cast<int64_t>(draws() % size);
      for (int k = 0; k < action_width; ++k)
        continuous_rows[static_cast<std::size_t>(p * action_width + k)] = unit(draws);
    }
    const pp::StepResult r = pp::EnvDriver(*env).Step(act);
    record();
    double sum = 0.0;
    for (int p = 0; p < players; ++p) sum += slots.Get<double>(reward)[p];
    CHECK(sum == r.reward);
    CHECK(std::isfinite(r.reward));
    run.reward_sum += r.reward;
    CHECK(!(r.terminated && r.truncated));
    if (r.truncated) CHECK(env->elapsed_step() == 9);
    if (r.terminated || r.truncated) {
      ++run.episodes;
      pp::EnvDriver(*env).Reset();
      record();
    }
  }
  if (spec.render_shape.size() == 3) {
    std::vector<uint8_t> frame(static_cast<std::size_t>(spec.render_shape[0]) * spec.render_shape[1] * 3);
    env->Render(frame.data());
    bool white = false, other = false;
    for (std::size_t i = 0; i + 2 < frame.size(); i += 3) {
      const bool w = frame[i] == 255 && frame[i + 1] == 255 && frame[i + 2] == 255;
      white = white || w;
      other = other || !w;
    }
    CHECK(white && other);  // a background and the entities drawn on it
  }
  return run;
}

void TestEveryTask() {
  pp::Registry registry;
  pp::RegisterMpe(registry);
  const std::vector<std::string> ids = registry.TaskIds();
  CHECK(ids.size() == 9);
  for (const std::string& id : ids) {
    for (bool continuous : {false, true}) {
      const Run a = StepTask(registry, id, continuous, 5);
      const Run b = StepTask(registry, id, continuous, 5);
      const Run c = StepTask(registry, id, continuous, 6);
      CHECK(a.episodes == 3);                                 // 30 steps of 9-step episodes
      CHECK(a.obs == b.obs && a.reward_sum == b.reward_sum);  // the same seed, the same episodes
      CHECK(a.obs != c.obs);
      if (::pp::test::Failures()) {
        std::fprintf(stderr, "  in %s (%s)\n", id.c_str(), continuous ? "continuous" : "discrete");
        return;
      }
    }
  }
}

// speaker_0 says one of 3 words; the action field is Discrete(5) for listener_0's moves.
void TestOutOfRangeActionIsRefused() {
  pp::Registry registry;
  pp::RegisterMpe(registry);
  const pp::TaskEntry& task = *registry.Find("simple_speaker_listener_v4");
  const pp::EnvSpec spec = pp::MakeSpec(task, {});
  pp::SingleSlotAllocator slots(spec);
  std::unique_ptr<pp::Env> env = task.make_env(spec, 0);
  pp::EnvDriver(*env).SetAllocator(&slots);
  pp::EnvDriver(*env).Reset();
  int64_t actions[2] = {3, 0};
  const std::byte* rows[1] = {reinterpret_cast<const std::byte*>(actions)};
  bool refused = false;
  try {
    pp::EnvDriver(*env).Step(pp::Action(rows));
  } catch (const std::invalid_argument&) {
    refused = true;
  }
  CHECK(refused);
}

}  // namespace

int main() {
  TestEveryTask();
  TestOutOfRangeActionIsRefused();
  if (::pp::test::Failures()) {
    std::fprintf(stderr, "%d check(s) failed\n", ::pp::test::Failures());
    return 1;
  }
  std::printf("mpe_test: all checks passed\n");
  return 0;
}
