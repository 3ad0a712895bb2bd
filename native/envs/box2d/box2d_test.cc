// Standalone checks of the Box2D envs through the env-author API (no pool, no Python), for the
// sanitizer builds: worlds built, stepped, torn down and rebuilt over many episodes, determinism,
// render() and CarRacing's observation (frames in bounds and deterministic; their pixels are
// checked against Gymnasium's in tests/envs/box2d/test_box2d_render.py and tests/envs/box2d/test_car_racing.py), and
// worlds stepped on several threads at once, as the pool's workers step them.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "envs/box2d/register.h"
#include "tests/env_runner.h"
#include "tests/test_util.h"

namespace {

// One env driven by hand (EnvRunner), stepped with deterministic actions.
class Runner : public pp::test::EnvRunner {
 public:
  using EnvRunner::EnvRunner;

  // A deterministic action from `k`: every discrete action, or a sweep of the continuous box.
  pp::StepResult Step(int k) {
    if (action().dtype == pp::Dtype::kInt64) return EnvRunner::Step(k % static_cast<int64_t>(action().high[0] + 1));
    auto* a = reinterpret_cast<float*>(action_row());
    for (std::size_t j = 0; j < action().NumElements(); ++j) a[j] = static_cast<float>(std::sin(0.37 * k + j));
    return EnvRunner::Step();
  }
  // A state field as float64 values (CarRacing's world, under expose_physics_state).
  std::vector<double> Field(const std::string& name) const { return Values<double>(name); }
  // A uint8 state field's bytes (CarRacing's frame).
  std::vector<uint8_t> Bytes(const std::string& name) const { return Values<uint8_t>(name); }
  std::vector<float> Obs() const { return Values<float>("obs"); }
};

// Two runners of seed 7, which must agree throughout, and one of seed 8, which must differ; reset.
struct Trio {
  Trio(const pp::Registry& registry, const std::string& task_id, const std::map<std::string, pp::ConfigValue>& config)
      : runners{Runner(registry, task_id, 7, config), Runner(registry, task_id, 7, config),
                Runner(registry, task_id, 8, config)} {
    for (Runner& r : runners) r.Reset();
  }
  std::array<Runner, 3> runners;
};

void CheckTask(const pp::Registry& registry, const std::string& task_id, int steps) {
  // LunarLander's flame particles exist only when rendering is asked for, as in Gymnasium.
  std::map<std::string, pp::ConfigValue> config;
  if (task_id.rfind("LunarLander", 0) == 0) config["render_mode"] = std::string("rgb_array");
  Trio trio(registry, task_id, config);
  auto& [a, b, other] = trio.runners;
  CHECK(a.Obs() == b.Obs());
  CHECK(a.Obs() != other.Obs() || task_id.rfind("BipedalWalker", 0) == 0);  // the walker starts level
  int episodes = 0;
  for (int k = 0; k < steps; ++k) {
    const pp::StepResult ra = a.Step(k);
    const pp::StepResult rb = b.Step(k);
    const std::vector<float> obs = a.Obs();
    CHECK(obs == b.Obs());
    CHECK(ra.reward == rb.reward && ra.terminated == rb.terminated && ra.truncated == rb.truncated);
    CHECK(std::all_of(obs.begin(), obs.end(), [](float x) { return std::isfinite(x); }));
    if (k % 7 == 0) {
      const std::vector<uint8_t> frame = a.Render();
      CHECK(frame == b.Render());
      CHECK(std::any_of(frame.begin(), frame.end(), [&](uint8_t v) { return v != frame[0]; }));
    }
    if (ra.terminated || ra.truncated) {
      ++episodes;
      a.Reset();
      b.Reset();
      CHECK(a.Obs() == b.Obs());
    }
  }
  std::printf("%s: %d steps, %d episodes\n", task_id.c_str(), steps, episodes);
  CHECK(episodes >= 2);  // worlds were torn down and rebuilt
}

bool NotUniform(const std::vector<uint8_t>& frame) {
  return std::any_of(frame.begin(), frame.end(), [&](uint8_t v) { return v != frame[0]; });
}

constexpr const char* kCarRacing = "CarRacing-v3";

// CarRacing: its world (hull and wheels) and its frames (the observation every step, render()
// every 7th), two envs of one seed in lockstep. Every discrete action in turn drives the car on and
// off the road; short episodes tear the track and the car down (with their live contacts) and
// rebuild them many times.
void CheckCarRacing(const pp::Registry& registry, bool continuous, bool domain_randomize, int steps) {
  const std::map<std::string, pp::ConfigValue> config = {{"expose_physics_state", true},
                                                         {"continuous", continuous},
                                                         {"domain_randomize", domain_randomize},
                                                         {"max_episode_steps", int64_t{60}}};
  Trio trio(registry, kCarRacing, config);
  auto& [a, b, other] = trio.runners;
  // The track is NaN-padded: compared bit for bit.
  const std::vector<double> track_a = a.Field("info:track");
  const std::vector<double> track_b = b.Field("info:track");
  CHECK(std::memcmp(track_a.data(), track_b.data(), track_a.size() * sizeof(double)) == 0);
  CHECK(a.Field("info:hull") == b.Field("info:hull"));
  CHECK(a.Field("info:hull") != other.Field("info:hull"));
  CHECK(a.Bytes("obs") == b.Bytes("obs") && a.Bytes("obs") != other.Bytes("obs") && NotUniform(a.Bytes("obs")));
  int episodes = 0;
  for (int k = 0; k < steps; ++k) {
    const pp::StepResult ra = a.Step(k / 7);
    const pp::StepResult rb = b.Step(k / 7);
    CHECK(a.Field("info:hull") == b.Field("info:hull") && a.Field("info:wheels") == b.Field("info:wheels"));
    CHECK(ra.reward == rb.reward && ra.terminated == rb.terminated && ra.truncated == rb.truncated);
    const std::vector<double> hull = a.Field("info:hull");
    CHECK(std::all_of(hull.begin(), hull.end(), [](double x) { return std::isfinite(x); }));
    const std::vector<uint8_t> obs = a.Bytes("obs");
    CHECK(obs == b.Bytes("obs") && NotUniform(obs));
    if (k % 7 == 0) {
      const std::vector<uint8_t> frame = a.Render();
      CHECK(frame == b.Render() && NotUniform(frame));
    }
    if (ra.terminated || ra.truncated) {
      ++episodes;
      a.Reset();
      b.Reset();
      CHECK(a.Field("info:colors") == b.Field("info:colors"));
      CHECK(a.Bytes("obs") == b.Bytes("obs"));
    }
  }
  std::printf("%s (continuous=%d, domain_randomize=%d): %d steps, %d episodes\n", kCarRacing, continuous,
              domain_randomize, steps, episodes);
  CHECK(episodes >= steps / 70);
}

}  // namespace

int main() {
  pp::Registry registry;
  // PP_FONTS_DIR: the build tree's fonts/, empty when the build leaves pygame's font out.
  const std::string fonts_dir = PP_FONTS_DIR;
  pp::RegisterBox2d(registry, fonts_dir);
  CheckTask(registry, "LunarLander-v3", 600);
  CheckTask(registry, "LunarLanderContinuous-v3", 600);
  CheckTask(registry, "BipedalWalker-v3", 600);
  CheckTask(registry, "BipedalWalkerHardcore-v3", 600);
  const bool car_racing = !fonts_dir.empty();
  if (car_racing) {
    // Each step draws two 1000x800 frames: a few hundred steps keep the sanitizer runs short.
    CheckCarRacing(registry, true, false, 180);
    CheckCarRacing(registry, false, true, 180);
  } else {  // without the score's font, the task is left out
    CHECK(registry.Find(kCarRacing) == nullptr);
    std::printf("%s: left out (no font in this build)\n", kCarRacing);
  }
  // Every task at once, one thread each, as a pool's workers step envs: Box2D's globals (its lazily
  // filled tables, its call counters) must not be shared unsynchronised (the TSan preset checks).
  {
    std::vector<std::thread> threads;
    for (const char* task :
         {"LunarLander-v3", "LunarLanderContinuous-v3", "BipedalWalker-v3", "BipedalWalkerHardcore-v3"}) {
      threads.emplace_back([&registry, task] { CheckTask(registry, task, 400); });
    }
    if (car_racing) threads.emplace_back([&registry] { CheckCarRacing(registry, false, false, 140); });
    for (std::thread& t : threads) t.join();
  }
  if (::pp::test::Failures() != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", ::pp::test::Failures());
    return 1;
  }
  std::printf("box2d_test: all checks passed\n");
  return 0;
}
