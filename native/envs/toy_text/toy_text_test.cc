// Standalone checks of the toy-text envs' render() through the env-author API (no pool, no Python):
// frames deterministic per seed, the shapes and fixed pixels Gymnasium's layout gives (in the art of the
// gymnasium found when configuring: 1.1 to 1.3's or 1.4's), envs made and rendered on several threads
// at once from one registration's shared sprites and fonts (the sanitizer presets run this). Their
// pixels are checked against Gymnasium's in tests/envs/toy_text/test_toy_text_render.py.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "envs/toy_text/register.h"
#include "envs/toy_text/sprites.h"
#include "tests/env_runner.h"
#include "tests/test_util.h"

namespace {

using Overrides = std::map<std::string, pp::ConfigValue>;

// One env driven by hand (EnvRunner); its observation is the state (Blackjack's: the player's sum).
class Runner : public pp::test::EnvRunner {
 public:
  Runner(const pp::Registry& registry, const std::string& task_id, uint64_t seed, const Overrides& config)
      : EnvRunner(registry, task_id, seed, config), obs_(task_id == "Blackjack-v1" ? "obs:0" : "obs") {}
  pp::StepResult Step(int64_t a) { return EnvRunner::Step(a); }
  int64_t Obs() const { return Values<int64_t>(obs_)[0]; }

 private:
  const std::string obs_;
};

struct Case {
  std::string task_id;
  Overrides config;
  int height, width;  // render_shape
  int num_actions;
};

bool Starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<uint8_t> Pixel(const std::vector<uint8_t>& frame, int width, int row, int col) {
  const std::size_t at = (static_cast<std::size_t>(row) * width + col) * 3;
  return {frame[at], frame[at + 1], frame[at + 2]};
}

void CheckCase(const pp::Registry& registry, const Case& c, int steps) {
  Runner a(registry, c.task_id, 11, c.config);
  Runner b(registry, c.task_id, 11, c.config);
  CHECK((a.spec().render_shape == std::vector<int>{c.height, c.width, 3}));
  a.Reset();
  b.Reset();
  int episodes = 0, frames = 0;
  std::vector<uint8_t> first;
  for (int k = 0; k < steps; ++k) {
    const std::vector<uint8_t> frame = a.Render();
    CHECK(frame == b.Render());
    CHECK(std::any_of(frame.begin(), frame.end(), [&](uint8_t v) { return v != frame[0]; }));
    if (first.empty()) first = frame;
    ++frames;
    if (Starts(c.task_id, "FrozenLake")) {
      // Every cell's top-left pixel is its (180, 200, 230) frame.
      CHECK((Pixel(frame, c.width, 0, 0) == std::vector<uint8_t>{180, 200, 230}));
    }
    // Pseudo-random actions, the same for both runners.
    const int64_t action = static_cast<int64_t>((k * 7919 + k / 3) % c.num_actions);
    const pp::StepResult ra = a.Step(action);
    const pp::StepResult rb = b.Step(action);
    CHECK(a.Obs() == b.Obs() && ra.reward == rb.reward && ra.terminated == rb.terminated);
    if (ra.terminated || ra.truncated) {
      ++episodes;
      a.Reset();
      b.Reset();
      // Back at the start with no last action, a grid walker draws as after its first reset (the
      // taxi starts anywhere, the cards are new).
      if (!Starts(c.task_id, "Taxi") && c.task_id != "Blackjack-v1") CHECK(a.Render() == first);
    }
  }
  std::printf("%s: %d frames, %d episodes\n", c.task_id.c_str(), frames, episodes);
}

// A gymnasium whose envs/toy_text lacks the files the frames are drawn from: every task still
// registers, resets and steps, and only render() fails, naming the file.
void CheckWithoutSprites(const std::vector<Case>& cases) {
  pp::Registry registry;
  pp::RegisterToyText(registry, "/nonexistent/toy_text/img", "/nonexistent/toy_text/font");
  CHECK(pp::toy_text::DetectArt("/nonexistent/toy_text/img") == pp::toy_text::Art::kGymnasium1_1);
  for (const Case& c : cases) {
    Runner runner(registry, c.task_id, 3, c.config);
    runner.Reset();
    for (int k = 0; k < 5; ++k) runner.Step(k % c.num_actions);
    bool threw = false;
    try {
      runner.Render();
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      threw =
          what.find("/nonexistent/toy_text/") != std::string::npos && what.find("is not there") != std::string::npos;
      if (!threw) std::fprintf(stderr, "%s: unexpected message: %s\n", c.task_id.c_str(), what.c_str());
    }
    CHECK(threw);
  }
}

}  // namespace

int main() {
  const std::string dir = PP_TOY_TEXT_DIR;
  if (dir.empty()) {
    std::fprintf(stderr, "toy_text_test: gymnasium was not found when configuring (its toy_text has the sprites)\n");
    return 1;
  }
  pp::Registry registry;
  pp::RegisterToyText(registry, dir + "/img", dir + "/font");
  // The windows of Gymnasium 1.1-1.3, or 1.4's where its art is installed (FrozenLake's is the same).
  const bool art14 = pp::toy_text::DetectArt(dir + "/img") == pp::toy_text::Art::kGymnasium1_4;
  std::printf("toy_text_test: the art of Gymnasium %s\n", art14 ? "1.4" : "1.1 to 1.3");
  const int taxi_h = art14 ? 456 : 350, taxi_w = art14 ? 536 : 550;
  const int cliff_h = art14 ? 256 : 240, cliff_w = art14 ? 768 : 720;
  const int blackjack_h = art14 ? 376 : 500, blackjack_w = art14 ? 384 : 600;
  const std::vector<Case> cases = {
      {"FrozenLake-v1", {}, 256, 256, 4},
      {"FrozenLake8x8-v1", {}, 512, 512, 4},
      {"FrozenLake-v1", {{"desc", std::string("SFFHF\nFHFFG\nFFFFH")}}, 192, 320, 4},
      {"FrozenLake-v1", {{"desc", std::string("SFFFFFFFFH\nFFFFFFFFFG")}}, 128, 512, 4},  // 51-pixel cells
      {"FrozenLake-v1", {{"map_name", std::string()}}, 512, 512, 4},                      // a random map
      {"Taxi-v3", {}, taxi_h, taxi_w, 6},
      {"Taxi-v3", {{"is_rainy", true}, {"fickle_passenger", true}}, taxi_h, taxi_w, 6},
      {"Taxi-v4", {{"is_rainy", true}, {"fickle_passenger", true}, {"rainy_probability", 0.6}}, taxi_h, taxi_w, 6},
      {"CliffWalking-v1", {}, cliff_h, cliff_w, 4},
      {"CliffWalkingSlippery-v1", {}, cliff_h, cliff_w, 4},
      {"Blackjack-v1", {}, blackjack_h, blackjack_w, 2},
      {"Blackjack-v1", {{"natural", true}, {"sab", false}}, blackjack_h, blackjack_w, 2},
  };
  // Every case at once, each on its own thread, first: the sprites and fonts are decoded, scaled and
  // made while other envs are made and render (the TSan preset checks the sheet's locking). Then
  // longer runs one by one on the same registration (its sprites now shared). Short runs: under the
  // sanitizers each frame costs milliseconds; the pixels are checked in tests/envs/toy_text/test_toy_text_render.py.
  {
    std::vector<std::thread> threads;
    for (const Case& c : cases) threads.emplace_back([&registry, &c] { CheckCase(registry, c, 8); });
    for (std::thread& t : threads) t.join();
  }
  for (const Case& c : cases) CheckCase(registry, c, 40);
  CheckWithoutSprites(cases);
  if (::pp::test::Failures() != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", ::pp::test::Failures());
    return 1;
  }
  std::printf("toy_text_test: all checks passed\n");
  return 0;
}
