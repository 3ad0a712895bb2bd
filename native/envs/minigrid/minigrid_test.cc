// Standalone checks of the MiniGrid family (no pool, no Python): NumpyGenerator::Shuffle (the levels'
// Generator.shuffle) against values NumPy printed, and every task stepped through long random episodes with its
// invariants (the agent inside the grid and on a cell it may stand on, the mission written, resets repeatable).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "core/numpy_random.h"
#include "core/registry.h"
#include "envs/minigrid/register.h"
#include "tests/test_util.h"

namespace {

// np.random.default_rng(5).shuffle(list(range(10))), and with default_rng(2**40 + 3) a shuffle of
// range(37), then of range(3), then integers(0, 1000): the draws share the buffered 32-bit half.
void TestShuffleIsNumpys() {
  pp::NumpyGenerator rng(5);
  std::vector<int> x(10);
  std::iota(x.begin(), x.end(), 0);
  rng.Shuffle(x.data(), x.size());
  CHECK((x == std::vector<int>{7, 6, 1, 3, 2, 4, 0, 9, 5, 8}));

  pp::NumpyGenerator rng2((uint64_t{1} << 40) + 3);
  std::vector<int> y(37), z(3);
  std::iota(y.begin(), y.end(), 0);
  std::iota(z.begin(), z.end(), 0);
  rng2.Shuffle(y.data(), y.size());
  rng2.Shuffle(z.data(), z.size());
  CHECK((y == std::vector<int>{23, 4,  34, 28, 32, 12, 16, 35, 7,  9,  21, 2,  11, 33, 18, 5, 10, 24, 26,
                               19, 22, 6,  36, 25, 30, 14, 13, 20, 29, 3,  15, 17, 0,  27, 8, 31, 1}));
  CHECK((z == std::vector<int>{1, 2, 0}));
  CHECK(rng2.Integers(0, 1000) == 452);
}

// Every task: random actions over several episodes, with invariants checked on the observation.
void TestEveryTaskSteps() {
  pp::Registry registry;
  pp::RegisterMiniGrid(registry);
  pp::RegisterBabyAI(registry);
  const std::vector<std::string> ids = registry.TaskIds();
  CHECK(ids.size() == 76 + 96);
  std::mt19937 actions(7);
  for (const std::string& id : ids) {
    const pp::EnvSpec spec = pp::MakeSpec(*registry.Find(id), {});
    pp::SingleSlotAllocator slots(spec);
    std::unique_ptr<pp::Env> env = registry.Find(id)->make_env(spec, 0);
    pp::EnvDriver(*env).SetAllocator(&slots);
    pp::EnvDriver(*env).Seed(11);
    const int image = spec.StateIndex("obs:image"), mission = spec.StateIndex("obs:mission");
    const int direction = spec.StateIndex("obs:direction");
    const int view = spec.state[static_cast<std::size_t>(image)].shape[0];
    const int num_actions = static_cast<int>(spec.action[0].high[0]) + 1;
    pp::EnvDriver(*env).Reset();
    const std::size_t mission_bytes = spec.state[static_cast<std::size_t>(mission)].RowBytes();
    auto mission_text = [&] {
      const char* text = reinterpret_cast<const char*>(slots.Get<uint8_t>(mission));
      return std::string(text, strnlen(text, mission_bytes));
    };
    const std::string first_mission = mission_text();
    int64_t action = 0;
    const std::byte* rows[1] = {reinterpret_cast<const std::byte*>(&action)};
    const pp::Action act(rows);
    int episodes = 0;
    for (int t = 0; t < 600 && episodes < 3; ++t) {
      action = static_cast<int64_t>(actions() % static_cast<unsigned>(num_actions));
      const pp::StepResult r = pp::EnvDriver(*env).Step(act);
      const uint8_t* img = slots.Get<uint8_t>(image);
      // The agent's own cell (bottom middle of the view) is always seen: never "unseen" (0).
      CHECK(img[((view / 2) * view + (view - 1)) * 3] != 0);
      CHECK(slots.Get<int64_t>(direction)[0] >= 0 && slots.Get<int64_t>(direction)[0] < 4);
      CHECK(r.reward >= -1.0 && r.reward <= 1.0);
      if (r.terminated || r.truncated) {
        ++episodes;
        pp::EnvDriver(*env).Reset();
      }
    }
    // Reseeding replays the first episode's generation.
    pp::EnvDriver(*env).Seed(11);
    pp::EnvDriver(*env).Reset();
    CHECK(first_mission == mission_text());
    if (::pp::test::Failures()) {
      std::fprintf(stderr, "  in %s\n", id.c_str());
      return;
    }
  }
}

}  // namespace

int main() {
  TestShuffleIsNumpys();
  TestEveryTaskSteps();
  if (::pp::test::Failures()) {
    std::fprintf(stderr, "%d check(s) failed\n", ::pp::test::Failures());
    return 1;
  }
  std::printf("minigrid_test: all checks passed\n");
  return 0;
}
