// A raw single-thread loop over one CarRacing-v3 env: no pool, no threads, no Python. It measures the
// thread's CPU time per step (physics, the 1000x800 frame and its smoothscale), which the shared host's
// other load does not inflate the way it does wall time, over several repetitions of the same steps.
// It also prints a hash of every observation and of every 50th render() frame, so that two builds
// can be checked to draw the same frames over those steps.
//
//   car_racing_raw --fonts-dir DIR [--steps 2000] [--repeats 5] [--seed 0] [--continuous 1]
//                  [--domain-randomize 0] [--cpu N]
//
// The last line is machine-readable: `cpu_us_per_step_min=<float> cpu_us_per_step_median=<float> hash=<hex>`.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/raw_cli.h"
#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "core/rng.h"
#include "envs/box2d/register.h"

namespace {

struct Options {
  std::string fonts_dir;
  int steps = 2000;
  int repeats = 5;
  uint64_t seed = 0;
  bool continuous = true;
  bool domain_randomize = false;
  int cpu = -1;
};

const pp::raw::Cli kCli("car_racing_raw", "a raw single-thread loop over one CarRacing-v3 env",
                        "--fonts-dir DIR [--steps N] [--repeats R] [--seed S] [--continuous 0|1] "
                        "[--domain-randomize 0|1] [--cpu N]");

Options Parse(int argc, char** argv) {
  Options o;
  kCli.Parse(argc, argv,
             {{"--fonts-dir", &o.fonts_dir},
              {"--steps", &o.steps},
              {"--repeats", &o.repeats},
              {"--seed", &o.seed},
              {"--continuous", &o.continuous},
              {"--domain-randomize", &o.domain_randomize},
              {"--cpu", &o.cpu}});
  if (o.fonts_dir.empty()) kCli.Usage("--fonts-dir is required (the folder of pygame's freesansbold.ttf)");
  if (o.steps < 1 || o.repeats < 1) kCli.Usage("--steps and --repeats are at least 1");
  return o;
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// FNV-1a, 64 bits.
void Hash(uint64_t& h, const uint8_t* data, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  return kCli.Run(o.cpu, [&] {
    pp::Registry registry;
    pp::RegisterBox2d(registry, o.fonts_dir);
    auto task = registry.Find("CarRacing-v3");
    if (!task) kCli.Usage("CarRacing-v3 is not registered (no freesansbold.ttf in --fonts-dir?)");
    const pp::EnvSpec spec =
        pp::MakeSpec(*task, {{"continuous", o.continuous}, {"domain_randomize", o.domain_randomize}});
    const int obs_index = spec.StateIndex("obs");
    const std::size_t obs_bytes = spec.state[static_cast<std::size_t>(obs_index)].NumElements();
    std::vector<uint8_t> frame(static_cast<std::size_t>(spec.render_shape.at(0)) * spec.render_shape.at(1) * 3);

    // The same random actions in every repetition (uniform over the action space, as the benchmarks').
    pp::Rng rng(o.seed + 1);
    std::vector<std::vector<std::byte>> actions(static_cast<std::size_t>(o.steps));
    for (auto& row : actions) {
      if (o.continuous) {
        const float a[3] = {static_cast<float>(rng.Uniform(-1, 1)), static_cast<float>(rng.Uniform(0, 1)),
                            static_cast<float>(rng.Uniform(0, 1))};
        row.resize(sizeof a);
        std::memcpy(row.data(), a, sizeof a);
      } else {
        const int64_t a = rng.UniformInt(0, 4);
        row.resize(sizeof a);
        std::memcpy(row.data(), &a, sizeof a);
      }
    }

    std::vector<double> per_step_us;
    uint64_t first_hash = 0;
    for (int r = 0; r < o.repeats; ++r) {
      pp::SingleSlotAllocator allocator(spec);
      auto env = task->make_env(spec, 0);
      pp::EnvDriver(*env).SetAllocator(&allocator);
      pp::EnvDriver(*env).Seed(o.seed);
      uint64_t hash = 0xcbf29ce484222325ull;
      const double start = ThreadCpuSeconds();
      double render_time = 0.0;  // render() is not part of a step: left out of the time
      bool done = true;
      for (int k = 0; k < o.steps; ++k) {
        if (done) {
          pp::EnvDriver(*env).Reset();
          done = false;
        } else {
          const std::byte* rows[1] = {actions[static_cast<std::size_t>(k)].data()};
          const pp::StepResult result = pp::EnvDriver(*env).Step(pp::Action(rows));
          done = result.terminated || result.truncated;
        }
        Hash(hash, allocator.Get<uint8_t>(obs_index), obs_bytes);
        if (k % 50 == 0) {
          const double t0 = ThreadCpuSeconds();
          env->Render(frame.data());
          render_time += ThreadCpuSeconds() - t0;
          Hash(hash, frame.data(), frame.size());
        }
      }
      per_step_us.push_back((ThreadCpuSeconds() - start - render_time) / o.steps * 1e6);
      if (r == 0) first_hash = hash;
      if (hash != first_hash) {
        std::fprintf(stderr, "car_racing_raw: repetition %d drew other frames (hash %016llx, first %016llx)\n", r,
                     static_cast<unsigned long long>(hash), static_cast<unsigned long long>(first_hash));
        return 1;
      }
      std::printf("repetition %d: %.1f us CPU per step\n", r, per_step_us.back());
    }
    std::vector<double> sorted = per_step_us;
    std::sort(sorted.begin(), sorted.end());
    std::printf("CarRacing-v3 (continuous=%d, domain_randomize=%d): %d steps x %d, one thread on cpu %d\n",
                o.continuous, o.domain_randomize, o.steps, o.repeats, o.cpu);
    std::printf("cpu_us_per_step_min=%.1f cpu_us_per_step_median=%.1f hash=%016llx\n", sorted.front(),
                sorted[sorted.size() / 2], static_cast<unsigned long long>(first_hash));
    return 0;
  });
}
