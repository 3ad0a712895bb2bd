// Standalone checks of the classic-control envs through the env-author API (no pool, no Python):
// specs, reset distributions, determinism, time limits, dynamics relations visible in the obs, render();
// and, through a pool, that their out-of-range actions are refused before reaching them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "core/pool.h"
#include "core/registry.h"
#include "envs/classic_control/register.h"
#include "envs/common/numpy_trig.h"
#include "tests/env_runner.h"
#include "tests/test_util.h"

namespace {

// Counts heap allocations while armed: Reset() and Step() must not allocate.
bool g_count_allocations = false;
long g_allocations = 0;

}  // namespace

[[gnu::noinline]] void* operator new(std::size_t size) {
  if (g_count_allocations) ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Kept out of line so the compiler pairs new with delete, not malloc-from-new with free.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr double kPi = 3.14159265358979323846;

// One env driven by hand (EnvRunner), its resets and steps counted by the allocation check.
class Runner : public pp::test::EnvRunner {
 public:
  Runner(const pp::Registry& registry, const std::string& task_id,
         const std::map<std::string, pp::ConfigValue>& overrides = {}, uint64_t seed = 0, int env_id = 0)
      : EnvRunner(registry, task_id, seed, overrides, env_id) {}

  std::vector<float> Reset() {
    g_count_allocations = true;
    EnvRunner::Reset();
    g_count_allocations = false;
    return Obs();
  }
  pp::StepResult StepDiscrete(int64_t a) { return CountedStep(a); }
  pp::StepResult StepContinuous(float a) { return CountedStep(a); }
  std::vector<float> Obs() const { return Values<float>("obs"); }

 private:
  template <typename T>
  pp::StepResult CountedStep(T a) {
    g_count_allocations = true;
    const pp::StepResult r = EnvRunner::Step(a);
    g_count_allocations = false;
    return r;
  }
};

struct TaskInfo {
  std::string id;
  int max_episode_steps;
  bool has_threshold;
  double threshold;
  std::vector<int> obs_shape;
  bool discrete;
  int num_actions;      // Discrete n
  double action_bound;  // Box: symmetric bound
};

const std::vector<TaskInfo>& Tasks() {
  static const std::vector<TaskInfo> tasks = {
      {"CartPole-v0", 200, true, 195.0, {4}, true, 2, 0},
      {"CartPole-v1", 500, true, 475.0, {4}, true, 2, 0},
      {"MountainCar-v0", 200, true, -110.0, {2}, true, 3, 0},
      {"MountainCarContinuous-v0", 999, true, 90.0, {2}, false, 0, 1.0},
      {"Pendulum-v1", 200, false, 0.0, {3}, false, 0, 2.0},
      {"Pendulum-v0", 200, false, 0.0, {3}, false, 0, 2.0},
      {"Acrobot-v1", 500, true, -100.0, {6}, true, 3, 0},
  };
  return tasks;
}

// A random action for the task, drawn from `rng`.
pp::StepResult RandomStep(Runner& r, const TaskInfo& t, pp::Rng& rng) {
  if (t.discrete) return r.StepDiscrete(rng.UniformInt(0, t.num_actions - 1));
  return r.StepContinuous(static_cast<float>(rng.Uniform(-t.action_bound, t.action_bound)));
}

void CheckObsInSpace(const pp::EnvSpec& spec, const std::vector<float>& obs) {
  const pp::FieldSpec& f = spec.state[static_cast<std::size_t>(spec.StateIndex("obs"))];
  for (std::size_t i = 0; i < obs.size(); ++i) {
    CHECK(std::isfinite(obs[i]));
    CHECK(obs[i] >= static_cast<float>(f.low[i]) && obs[i] <= static_cast<float>(f.high[i]));
  }
}

void TestSpecs(const pp::Registry& registry) {
  for (const TaskInfo& t : Tasks()) {
    auto task = registry.Find(t.id);
    CHECK(task != nullptr);
    if (!task) continue;
    CHECK(task->family == "classic_control");
    const pp::EnvSpec spec = pp::MakeSpec(*task, {});
    CHECK(spec.task_id == t.id);
    CHECK(spec.max_episode_steps == t.max_episode_steps);
    CHECK(spec.reward_threshold.has_value() == t.has_threshold);
    if (t.has_threshold) CHECK(*spec.reward_threshold == t.threshold);
    // The observation; Acrobot also has EnvPool's info:state (its joint angles).
    CHECK(spec.state.size() == (t.id == "Acrobot-v1" ? 2U : 1U));
    if (t.id == "Acrobot-v1") {
      const pp::FieldSpec& angles = spec.state[static_cast<std::size_t>(spec.StateIndex("info:state"))];
      CHECK(angles.dtype == pp::Dtype::kFloat32 && angles.shape == std::vector<int>{2});
      CHECK(angles.presence == pp::InfoPresence::kExtra);
    }
    const pp::FieldSpec& obs = spec.state[static_cast<std::size_t>(spec.StateIndex("obs"))];
    CHECK(obs.dtype == pp::Dtype::kFloat32);
    CHECK(obs.shape == t.obs_shape);
    CHECK(obs.space == pp::SpaceKind::kBox);
    CHECK(obs.low.size() == obs.NumElements() && obs.high.size() == obs.NumElements());
    for (std::size_t i = 0; i < obs.low.size(); ++i) {
      if (t.id.rfind("MountainCar", 0) != 0) CHECK(obs.low[i] == -obs.high[i]);
      CHECK(obs.low[i] == static_cast<double>(static_cast<float>(obs.low[i])));  // float32 values
      CHECK(obs.high[i] == static_cast<double>(static_cast<float>(obs.high[i])));
    }
    CHECK(spec.action.size() == 1);
    const pp::FieldSpec& action = spec.action[static_cast<std::size_t>(spec.ActionIndex("action"))];
    if (t.discrete) {
      CHECK(action.space == pp::SpaceKind::kDiscrete);
      CHECK(action.dtype == pp::Dtype::kInt64);
      CHECK(action.low == std::vector<double>{0.0});
      CHECK(action.high == std::vector<double>{static_cast<double>(t.num_actions - 1)});
    } else {
      CHECK(action.space == pp::SpaceKind::kBox);
      CHECK(action.dtype == pp::Dtype::kFloat32);
      CHECK(action.shape == std::vector<int>{1});
      CHECK(action.low == std::vector<double>{-t.action_bound});
      CHECK(action.high == std::vector<double>{t.action_bound});
      CHECK(!action.allow_nan);
    }
    // Unknown keys and wrong types are rejected.
    bool threw = false;
    try {
      pp::MakeSpec(*task, {{"no_such_key", 1.0}});
    } catch (const std::invalid_argument&) {
      threw = true;
    }
    CHECK(threw);
  }
  // Gymnasium's exact observation bounds (float32 of the Python values).
  const pp::EnvSpec cartpole = pp::MakeSpec(*registry.Find("CartPole-v1"), {});
  const std::vector<double>& high = cartpole.state[0].high;
  CHECK(high[0] == static_cast<double>(4.8f));
  CHECK(std::isinf(high[1]) && std::isinf(high[3]));
  CHECK(high[2] == static_cast<double>(static_cast<float>(12 * 2 * kPi / 360 * 2)));
  const pp::EnvSpec acrobot = pp::MakeSpec(*registry.Find("Acrobot-v1"), {});
  CHECK(acrobot.state[0].high[4] == static_cast<double>(static_cast<float>(4 * kPi)));
  CHECK(acrobot.state[0].high[5] == static_cast<double>(static_cast<float>(9 * kPi)));
  const pp::EnvSpec pendulum = pp::MakeSpec(*registry.Find("Pendulum-v1"), {});
  CHECK(pendulum.state[0].high == (std::vector<double>{1.0, 1.0, 8.0}));
  const pp::EnvSpec car = pp::MakeSpec(*registry.Find("MountainCar-v0"), {});
  CHECK(car.state[0].low == (std::vector<double>{static_cast<float>(-1.2), static_cast<float>(-0.07)}));
}

// Reset observations lie in the support of Gymnasium's reset distribution and cover it.
void TestResetDistribution(const pp::Registry& registry) {
  constexpr int kResets = 2000;
  for (const TaskInfo& t : Tasks()) {
    // Expected support [a, b] per reset variable (angles recovered from cos/sin where observed so).
    std::vector<std::pair<double, double>> support;
    if (t.id.rfind("CartPole", 0) == 0) support.assign(4, {-0.05, 0.05});
    if (t.id.rfind("MountainCar", 0) == 0) support = {{-0.6, -0.4}, {0.0, 0.0}};
    if (t.id.rfind("Pendulum", 0) == 0) support = {{-kPi, kPi}, {-1.0, 1.0}};
    if (t.id == "Acrobot-v1") support.assign(4, {-0.1, 0.1});
    CHECK(!support.empty());
    Runner r(registry, t.id, {}, /*seed=*/7);
    std::vector<double> lo(support.size(), 1e9), hi(support.size(), -1e9), sum(support.size(), 0.0);
    for (int n = 0; n < kResets; ++n) {
      std::vector<float> obs = r.Reset();
      CHECK(r.elapsed_step() == 0);
      std::vector<double> v(obs.begin(), obs.end());
      if (t.id.rfind("Pendulum", 0) == 0) {
        CHECK_NEAR(v[0] * v[0] + v[1] * v[1], 1.0, 1e-6);
        v = {std::atan2(v[1], v[0]), v[2]};
      } else if (t.id == "Acrobot-v1") {
        CHECK_NEAR(v[0] * v[0] + v[1] * v[1], 1.0, 1e-6);
        CHECK_NEAR(v[2] * v[2] + v[3] * v[3], 1.0, 1e-6);
        v = {std::atan2(v[1], v[0]), std::atan2(v[3], v[2]), v[4], v[5]};
      }
      CHECK(v.size() == support.size());
      for (std::size_t i = 0; i < v.size() && i < support.size(); ++i) {
        lo[i] = std::min(lo[i], v[i]);
        hi[i] = std::max(hi[i], v[i]);
        sum[i] += v[i];
      }
    }
    for (std::size_t i = 0; i < support.size(); ++i) {
      const auto [a, b] = support[i];
      const double width = b - a, tol = 1e-6;
      CHECK(lo[i] >= a - tol && hi[i] <= b + tol);
      if (width > 0) {
        // Uniform: extremes within 1% of the ends (P(miss) ~ exp(-20)), mean within 5 standard errors.
        CHECK(lo[i] < a + 0.01 * width && hi[i] > b - 0.01 * width);
        const double se = width / std::sqrt(12.0 * kResets);
        CHECK_NEAR(sum[i] / kResets, (a + b) / 2, 5 * se);
      }
    }
  }
}

// Same seed, same actions: bit-identical trajectory; a different seed gives a different one.
void TestDeterminism(const pp::Registry& registry) {
  for (const TaskInfo& t : Tasks()) {
    Runner a(registry, t.id, {}, 42), b(registry, t.id, {}, 42), c(registry, t.id, {}, 43);
    const std::vector<float> obs_a = a.Reset(), obs_b = b.Reset(), obs_c = c.Reset();
    CHECK(obs_a == obs_b);
    CHECK(obs_a != obs_c);
    pp::Rng actions_a(1), actions_b(1);
    for (int i = 0; i < 300; ++i) {
      const pp::StepResult ra = RandomStep(a, t, actions_a);
      const pp::StepResult rb = RandomStep(b, t, actions_b);
      CHECK(a.Obs() == b.Obs());
      CHECK(ra.reward == rb.reward && ra.terminated == rb.terminated && ra.truncated == rb.truncated);
      if (ra.terminated || ra.truncated) {
        CHECK(a.Reset() == b.Reset());
      }
    }
  }
}

// Every episode ends by termination or by truncation at exactly max_episode_steps; obs stay in the
// observation space; rewards take Gymnasium's values.
void TestEpisodes(const pp::Registry& registry) {
  for (const TaskInfo& t : Tasks()) {
    for (int limit : {t.max_episode_steps, 5}) {
      Runner r(registry, t.id, {{"max_episode_steps", int64_t{limit}}}, 3);
      pp::Rng actions(11);
      int episodes = 0, truncations = 0;
      long steps = 0;
      while (episodes < 20 && steps < 40000) {
        CheckObsInSpace(r.spec(), r.Reset());
        for (int k = 1;; ++k) {
          const pp::StepResult res = RandomStep(r, t, actions);
          ++steps;
          CHECK(r.elapsed_step() == k);
          CheckObsInSpace(r.spec(), r.Obs());
          CHECK(res.truncated == (k == limit));
          if (t.id.rfind("CartPole", 0) == 0) CHECK(res.reward == 1.0);
          if (t.id == "MountainCar-v0") CHECK(res.reward == -1.0);
          if (t.id == "Acrobot-v1") CHECK(res.reward == (res.terminated ? 0.0 : -1.0));
          if (t.id.rfind("Pendulum", 0) == 0) {
            CHECK(!res.terminated);
            CHECK(res.reward <= 0.0 && res.reward >= -(kPi * kPi + 0.1 * 64 + 0.001 * 4) - 1e-9);
          }
          if (t.id == "MountainCarContinuous-v0" && !res.terminated) CHECK(res.reward <= 0.0 && res.reward >= -0.1);
          if (res.terminated || res.truncated) {
            truncations += res.truncated ? 1 : 0;
            break;
          }
          CHECK(k < limit);
          if (k >= limit) break;
        }
        ++episodes;
      }
      CHECK(episodes == 20);
      if (limit == 5) CHECK(truncations > 0);
    }
  }
  CHECK(g_allocations == 0);
}

// Relations between consecutive observations that Gymnasium's equations imply.
void TestDynamics(const pp::Registry& registry) {
  {  // CartPole: Euler, so x' = x + tau * x_dot and theta' = theta + tau * theta_dot; force sign.
    Runner r(registry, "CartPole-v1", {}, 5);
    std::vector<float> o = r.Reset();
    const pp::StepResult res = r.StepDiscrete(1);
    std::vector<float> n = r.Obs();
    CHECK(!res.terminated);
    CHECK_NEAR(n[0], o[0] + 0.02 * o[1], 1e-7);
    CHECK_NEAR(n[2], o[2] + 0.02 * o[3], 1e-7);
    CHECK(n[1] > o[1]);  // pushed right
    r.StepDiscrete(0);
    CHECK(r.Obs()[1] < n[1]);
    // The textbook equations of motion (Florian 2007, as in Gymnasium) recomputed from the obs.
    o = r.Obs();
    r.StepDiscrete(1);
    n = r.Obs();
    const double f = 10.0, mc = 1.0, mp = 0.1, l = 0.5, g = 9.8;
    const double s = std::sin(o[2]), c = std::cos(o[2]);
    const double temp = (f + mp * l * o[3] * o[3] * s) / (mc + mp);
    const double thacc = (g * s - c * temp) / (l * (4.0 / 3.0 - mp * c * c / (mc + mp)));
    const double xacc = temp - mp * l * thacc * c / (mc + mp);
    CHECK_NEAR(n[1], o[1] + 0.02 * xacc, 1e-6);
    CHECK_NEAR(n[3], o[3] + 0.02 * thacc, 1e-6);
  }
  {  // CartPole with Sutton-Barto reward: 0 per step, -1 on termination.
    Runner r(registry, "CartPole-v1", {{"sutton_barto_reward", true}}, 5);
    r.Reset();
    for (int k = 0; k < 500; ++k) {
      const pp::StepResult res = r.StepDiscrete(1);  // always push right: falls over quickly
      CHECK(res.reward == (res.terminated ? -1.0 : 0.0));
      if (res.terminated) break;
      CHECK(k < 100);
    }
  }
  {  // MountainCar: v' = clip(v + (a-1)*0.001 - 0.0025 cos(3p)), p' = p + v' (away from the walls).
    Runner r(registry, "MountainCar-v0", {}, 9);
    std::vector<float> o = r.Reset();
    for (int k = 0; k < 50; ++k) {
      const int64_t a = k % 3;
      r.StepDiscrete(a);
      std::vector<float> n = r.Obs();
      const double v = o[1] + (a - 1) * 0.001 - 0.0025 * std::cos(3.0 * o[0]);
      CHECK_NEAR(n[1], v, 1e-7);
      CHECK_NEAR(n[0], o[0] + v, 1e-6);
      o = n;
    }
  }
  {  // MountainCar: pushing along the velocity reaches the goal before the time limit.
    for (const char* id : {"MountainCar-v0", "MountainCarContinuous-v0"}) {
      Runner r(registry, id, {}, 1);
      std::vector<float> o = r.Reset();
      bool reached = false;
      for (int k = 0; k < 200 && !reached; ++k) {
        const bool right = o[1] >= 0;
        const pp::StepResult res = std::string(id) == "MountainCar-v0" ? r.StepDiscrete(right ? 2 : 0)
                                                                       : r.StepContinuous(right ? 1.0f : -1.0f);
        o = r.Obs();
        if (res.terminated) {
          reached = true;
          CHECK(o[0] >= (std::string(id) == "MountainCar-v0" ? 0.5f : 0.45f) && o[1] >= 0);
          CHECK_NEAR(res.reward, std::string(id) == "MountainCar-v0" ? -1.0 : 100.0 - 0.1, 1e-12);
        }
      }
      CHECK(reached);
      // A goal velocity above the maximum speed can never be met.
      Runner never(registry, id, {{"goal_velocity", 0.5}}, 1);
      o = never.Reset();
      for (int k = 0; k < 300; ++k) {
        const bool right = o[1] >= 0;
        const pp::StepResult res = std::string(id) == "MountainCar-v0" ? never.StepDiscrete(right ? 2 : 0)
                                                                       : never.StepContinuous(right ? 1.0f : -1.0f);
        o = never.Obs();
        CHECK(!res.terminated);
        if (res.truncated) break;
      }
    }
  }
  {  // MountainCarContinuous: actions beyond [-1, 1] act as clipped but cost unclipped (as Gymnasium).
    // The clipped force is a Python float (float64 arithmetic) and 1.0f a float32 one, so the two can
    // differ by a float32 rounding, in Gymnasium too (reset with seed 4 they do); from seed 0 they agree.
    Runner a(registry, "MountainCarContinuous-v0", {}, 0), b(registry, "MountainCarContinuous-v0", {}, 0);
    a.Reset();
    b.Reset();
    const pp::StepResult ra = a.StepContinuous(5.0f), rb = b.StepContinuous(1.0f);
    CHECK(a.Obs() == b.Obs());
    CHECK_NEAR(ra.reward, -2.5, 1e-12);
    CHECK_NEAR(rb.reward, -0.1, 1e-12);
  }
  for (double g : {10.0, 9.81}) {  // Pendulum: thdot' = thdot + (3g/2 sin(th) + 3u) dt, th' = th + thdot' dt
    Runner r(registry, "Pendulum-v1", {{"g", g}}, 2);
    std::vector<float> o = r.Reset();
    pp::Rng actions(5);
    for (int k = 0; k < 100; ++k) {
      const float u = static_cast<float>(actions.Uniform(-3.0, 3.0));  // also exercises clipping
      const double uc = std::fmin(std::fmax(u, -2.0), 2.0);
      const pp::StepResult res = r.StepContinuous(u);
      std::vector<float> n = r.Obs();
      const double th = std::atan2(o[1], o[0]);
      const double thdot = std::fmin(std::fmax(o[2] + (3 * g / 2 * std::sin(th) + 3 * uc) * 0.05, -8.0), 8.0);
      const double nth = th + thdot * 0.05;
      CHECK_NEAR(n[2], thdot, 1e-5);
      CHECK_NEAR(n[0], std::cos(nth), 1e-5);
      CHECK_NEAR(n[1], std::sin(nth), 1e-5);
      CHECK_NEAR(res.reward, -(th * th + 0.1 * o[2] * o[2] + 0.001 * uc * uc), 1e-5);
      o = n;
    }
  }
  {  // Acrobot: termination iff the tip is above height 1. Torque along the second joint's
     // velocity pumps energy in and gets there in ~80 steps.
    Runner r(registry, "Acrobot-v1", {}, 8);
    std::vector<float> o = r.Reset();
    int terminations = 0;
    for (int k = 0; k < 5000; ++k) {
      const pp::StepResult res = r.StepDiscrete(o[5] > 0 ? 2 : 0);
      o = r.Obs();
      const double height = -o[0] - (o[0] * o[2] - o[1] * o[3]);  // -cos(t1) - cos(t1 + t2)
      if (std::fabs(height - 1.0) > 1e-5) CHECK(res.terminated == (height > 1.0));
      if (res.terminated || res.truncated) {
        terminations += res.terminated ? 1 : 0;
        o = r.Reset();
      }
    }
    CHECK(terminations >= 20);
  }
}

// envs/common/numpy_trig.h: np.sin and np.cos of float32 values (Acrobot's and MountainCarContinuous's
// frames use them), to the bit, at values where they differ from libm's sinf and cosf. The table is
// NumPy 2.4's output on x86-64-v4 (its SIMD loop, which CPUs below x86-64-v3 do not take).
void TestNumpyTrig() {
  struct Case {
    float x, sin, cos;
  };
  const Case cases[] = {
      {0x1.d337bap+1f, -0x1.f297d2p-2f, -0x1.bf3552p-1f}, {0x1.09e74cp-1f, 0x1.fc389cp-2f, 0x1.bc7d94p-1f},
      {-0x1.2ccdf4p+0f, -0x1.d86bb0p-1f, 0x1.8ac78ep-2f}, {-0x1.f38e32p+1f, 0x1.612ac2p-1f, -0x1.72b2b4p-1f},
      {0x1.4306d0p+0f, 0x1.e7c13cp-1f, 0x1.376106p-2f},   {-0x1.f53d98p+1f, 0x1.660440p-1f, -0x1.6e043cp-1f},
      {-0x1.9caf5ep-1f, -0x1.716dd4p-1f, 0x1.627e8ap-1f}, {-0x1.1c32ccp+1f, -0x1.97bfa2p-1f, -0x1.35a738p-1f},
  };
  if (!pp::numpy_trig::SimdFloat32()) return;  // NumPy takes libm's there too
  for (const Case& c : cases) {
    CHECK(pp::numpy_trig::Sin(c.x) == c.sin);
    CHECK(pp::numpy_trig::Cos(c.x) == c.cos);
  }
}

// render(): every task draws Gymnasium's frame size (tests/envs/classic_control/test_classic_control_render.py compares
// the pixels with Gymnasium's); the same state draws the same frame; a new state another. Registered without
// Gymnasium's assets folder (""), Pendulum draws its frames until one needs the arrow image.
void TestRender(const pp::Registry& registry) {
  const std::map<std::string, std::vector<int>> shapes = {
      {"CartPole-v0", {400, 600, 3}},    {"CartPole-v1", {400, 600, 3}},
      {"MountainCar-v0", {400, 600, 3}}, {"MountainCarContinuous-v0", {400, 600, 3}},
      {"Pendulum-v1", {500, 500, 3}},    {"Pendulum-v0", {500, 500, 3}},
      {"Acrobot-v1", {500, 500, 3}}};
  for (const TaskInfo& t : Tasks()) {
    Runner a(registry, t.id, {}, 3), b(registry, t.id, {}, 3);
    CHECK(a.spec().render_shape == shapes.at(t.id));
    a.Reset();
    b.Reset();
    const std::vector<uint8_t> first = a.Render();
    CHECK(first == b.Render());
    CHECK(std::count(first.begin(), first.end(), uint8_t{255}) > static_cast<long>(first.size() / 2));  // white ground
    CHECK(std::count(first.begin(), first.end(), uint8_t{0}) > 0);
    for (int k = 0; k < 10; ++k) {  // enough to move the mountain car by a pixel
      if (t.discrete) {
        a.StepDiscrete(0);
      } else if (t.id.rfind("Pendulum", 0) == 0) {
        a.StepContinuous(0.0f);  // an arrow of 0 pixels: none drawn, no image needed
      } else {
        a.StepContinuous(-1.0f);
      }
    }
    CHECK(a.Render() != first);
  }
  Runner pendulum(registry, "Pendulum-v1", {}, 3);
  pendulum.Reset();
  pendulum.StepContinuous(1.0f);
  bool threw = false;
  try {
    pendulum.Render();
  } catch (const std::runtime_error& e) {
    threw = std::string(e.what()).find("Pendulum-v1 render()") != std::string::npos;
  }
  CHECK(threw);
}

// The envs rely on their actions being in the spec's range: the pool checks them before queueing.
void TestBadActions(const pp::Registry& registry) {
  for (const TaskInfo& t : Tasks()) {
    if (!t.discrete) continue;
    const auto task = registry.Find(t.id);
    pp::PoolOptions options;
    options.num_envs = 1;
    options.num_threads = 1;
    options.seeds = {0};
    pp::Pool pool(task, pp::MakeSpec(*task, {}), options);
    const int32_t id = 0;
    pool.Reset(&id, 1, {});
    pp::BlockFreeList::Release(pool.Recv(10.0));
    for (int64_t bad : {int64_t{-1}, int64_t{t.num_actions}}) {
      const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(&bad)};
      bool threw = false;
      try {
        pool.Send(&id, 1, actions);
      } catch (const std::invalid_argument&) {
        threw = true;
      }
      CHECK(threw);
    }
    CHECK(pool.outstanding() == 0);
  }
}

}  // namespace

int main() {
  pp::Registry registry;
  pp::RegisterClassicControl(registry, "");
  CHECK(registry.TaskIds().size() == Tasks().size());
  TestSpecs(registry);
  TestResetDistribution(registry);
  TestDeterminism(registry);
  TestEpisodes(registry);
  TestDynamics(registry);
  TestBadActions(registry);
  TestRender(registry);
  TestNumpyTrig();
  if (::pp::test::Failures() != 0) {
    std::fprintf(stderr, "classic_control_test: %d check(s) failed\n", ::pp::test::Failures());
    return 1;
  }
  std::printf("classic_control_test: all checks passed\n");
  return 0;
}
