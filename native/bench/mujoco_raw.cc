// A raw single-thread loop over one MuJoCo env: no pool, no threads, no Python. Its steps/s is
// the per-core limit the pool's numbers are compared with; two copies pinned to two cores
// (--cpu 0 and --cpu 1, started together) measure the machine's 2-core limit.
//
//   mujoco_raw [--task Ant-v5] [--seconds 5] [--warmup 1] [--cpu N] [--seed 0] [--num-envs 1]
//              [--assets-dir DIR]
//
// Each iteration is one env step with a pre-drawn uniform random action, or, after an episode
// ended, one reset (the pool's next-step autoreset), so it counts what a pool step counts. With
// --num-envs N the thread steps N envs round robin, as a pool's worker does: what N envs' state
// costs in cache, without any pool. The last line is machine-readable: `steps_per_s=<float>`.
//
// Built with PP_RAW_DM_CONTROL (the dm_control_raw target), the same loop runs dm_control's suite
// tasks (--task CheetahRun-v1 ...), and --assets-dir is the installed dm_control/suite.
//
// --threads T (T > 1) measures what an env's moving between cores costs: T threads pinned to CPUs
// cpu .. cpu + T - 1 (--cpu, default 0), the envs in T equal groups; in each pass every thread
// steps one group's envs once, round robin, then all meet at a barrier. Thread t steps group t in
// every pass, or with --swap group (t + pass) % T, so that every env is stepped on another core
// than its last step's (a pool's envs go to whichever thread is free). The two modes differ only
// in that; the line before the last says which ran (`--threads 2 --num-envs 32 [--swap]`).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/raw_cli.h"
#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "core/rng.h"
#include "core/spin.h"
#ifdef PP_RAW_DM_CONTROL
#include "envs/dm_control/register.h"
#else
#include "envs/mujoco/register.h"
#endif

#ifndef PP_GYMNASIUM_ASSETS_DIR
#define PP_GYMNASIUM_ASSETS_DIR ""
#endif

namespace {

// Distinct pre-drawn action rows cycled through: enough to look random, small enough for L1/L2.
constexpr int kActionRows = 1024;
// Iterations between clock reads.
constexpr long kCheckEvery = 1000;

struct Options {
#ifdef PP_RAW_DM_CONTROL
  std::string task = "CheetahRun-v1";
#else
  std::string task = "Ant-v5";
#endif
  double seconds = 5.0;
  double warmup = 1.0;
  int cpu = -1;
  uint64_t seed = 0;
  int num_envs = 1;
  int threads = 1;
  bool swap = false;
  std::string assets_dir = PP_GYMNASIUM_ASSETS_DIR;
};

const pp::raw::Cli kCli("mujoco_raw", "a raw single-thread loop over one MuJoCo env",
                        "[--task ID] [--seconds S] [--warmup S] [--cpu N] [--seed N] [--num-envs N] "
                        "[--assets-dir DIR] [--threads T [--swap]]");

Options Parse(int argc, char** argv) {
  Options o;
  kCli.Parse(argc, argv,
             {{"--swap", pp::raw::Cli::Switch{&o.swap}},
              {"--task", &o.task},
              {"--seconds", &o.seconds},
              {"--warmup", &o.warmup},
              {"--cpu", &o.cpu},
              {"--seed", &o.seed},
              {"--num-envs", &o.num_envs},
              {"--assets-dir", &o.assets_dir},
              {"--threads", &o.threads}});
  if (o.num_envs < 1) kCli.Usage("--num-envs must be >= 1");
  if (o.threads < 1) kCli.Usage("--threads must be >= 1");
  if (o.num_envs % o.threads != 0) kCli.Usage("--num-envs must be a multiple of --threads");
  if (o.swap && o.threads < 2) kCli.Usage("--swap needs --threads 2 or more");
  return o;
}

// One env step (or, after an episode ended, its reset), with action row `row`.
void StepOnce(pp::Env& env, const std::byte* row, char& done) {
  if (done) {
    pp::EnvDriver(env).Reset();
    done = false;
  } else {
    const pp::StepResult r = pp::EnvDriver(env).Step(pp::Action(&row));
    done = r.terminated || r.truncated;
  }
}

// Runs the loop for `seconds`; returns (iterations, elapsed seconds). `done[i]`: env i resets next.
std::pair<long, double> Run(const std::vector<std::unique_ptr<pp::Env>>& envs,
                            const std::vector<const std::byte*>& rows, double seconds, std::vector<char>& done) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  long iterations = 0;
  double elapsed = 0.0;
  std::size_t next_row = 0, next_env = 0;
  while (elapsed < seconds) {
    for (long i = 0; i < kCheckEvery; ++i) {
      char& env_done = done[next_env];
      const bool stepping = !env_done;
      StepOnce(*envs[next_env], rows[next_row], env_done);
      if (stepping) next_row = (next_row + 1) % rows.size();
      next_env = (next_env + 1) % envs.size();
    }
    iterations += kCheckEvery;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return {iterations, elapsed};
}

// --threads: passes of every group stepped once by its thread of the pass, with a barrier between
// passes, for `seconds` after `warmup`; returns (iterations, elapsed seconds) of the timed part.
std::pair<long, double> RunThreads(const Options& o, const std::vector<std::unique_ptr<pp::Env>>& envs,
                                   const std::vector<const std::byte*>& rows, std::vector<char>& done) {
  using Clock = std::chrono::steady_clock;
  const int num_threads = o.threads;
  const std::size_t group = envs.size() / static_cast<std::size_t>(num_threads);
  std::atomic<int> arrived{0};
  std::atomic<long> pass{0};  // the pass the threads run; bumped by the last to arrive
  std::atomic<int> phase{0};  // 0 warm-up, 1 timed, 2 stop: set by the last to arrive
  long timed_from = 0;        // the first timed pass (written by the last to arrive)
  Clock::time_point start, end;
  const auto warm_until =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  Clock::time_point stop_at;
  auto body = [&](int t) {
    pp::raw::PinToCpu((std::max(o.cpu, 0) + t) % static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    std::size_t next_row = static_cast<std::size_t>(t) * 97;
    for (long p = 0;; ++p) {
      if (phase.load(std::memory_order_acquire) == 2) return;
      const std::size_t g = o.swap ? static_cast<std::size_t>((t + p) % num_threads) : static_cast<std::size_t>(t);
      for (std::size_t i = g * group; i < (g + 1) * group; ++i) {
        StepOnce(*envs[i], rows[next_row], done[i]);
        next_row = (next_row + 1) % rows.size();
      }
      if (arrived.fetch_add(1, std::memory_order_acq_rel) == num_threads - 1) {
        arrived.store(0, std::memory_order_relaxed);
        const auto now = Clock::now();
        if (phase.load(std::memory_order_relaxed) == 0 && now >= warm_until) {
          start = now;
          stop_at = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
          timed_from = p + 1;
          phase.store(1, std::memory_order_relaxed);
        } else if (phase.load(std::memory_order_relaxed) == 1 && now >= stop_at) {
          end = now;
          timed_from = p + 1 - timed_from;  // now: the timed passes
          phase.store(2, std::memory_order_relaxed);
        }
        pass.store(p + 1, std::memory_order_release);
      } else {
        while (pass.load(std::memory_order_acquire) <= p) {
          pp::CpuRelax();
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < num_threads; ++t) threads.emplace_back(body, t);
  for (auto& th : threads) th.join();
  return {timed_from * static_cast<long>(envs.size()), std::chrono::duration<double>(end - start).count()};
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  // With threads, each pins itself (RunThreads); alone, this thread takes --cpu.
  return kCli.Run(o.threads == 1 ? o.cpu : -1, [&] {
    pp::Registry registry;
#ifdef PP_RAW_DM_CONTROL
    pp::dm_control::RegisterDmControl(registry, o.assets_dir);
#else
    pp::mujoco::RegisterMujoco(registry, o.assets_dir);
#endif
    auto task = registry.Find(o.task);
    if (!task) kCli.Usage("unknown task " + o.task);
    const pp::EnvSpec spec = pp::MakeSpec(*task, {});
    // Every env writes the same row (outputs are dropped); with --threads one row per group, which
    // one thread at a time steps.
    std::vector<std::unique_ptr<pp::SingleSlotAllocator>> allocators;
    for (int t = 0; t < o.threads; ++t) allocators.push_back(std::make_unique<pp::SingleSlotAllocator>(spec));
    std::vector<std::unique_ptr<pp::Env>> envs;
    for (int i = 0; i < o.num_envs; ++i) {
      envs.push_back(task->make_env(spec, i));
      pp::EnvDriver(*envs.back())
          .SetAllocator(allocators[static_cast<std::size_t>(i / (o.num_envs / o.threads))].get());
      pp::EnvDriver(*envs.back()).Seed(o.seed + static_cast<uint64_t>(i));
    }

    // Uniform random actions within the action Box, as action_space.sample() draws them, in the
    // action's dtype (Gymnasium's MuJoCo tasks take float32, dm_control's float64).
    const pp::FieldSpec& action = spec.action.at(0);
    const std::size_t dim = action.NumElements();
    const bool float64 = action.dtype == pp::Dtype::kFloat64;
    std::vector<float> actions32(float64 ? 0 : kActionRows * dim);
    std::vector<double> actions64(float64 ? kActionRows * dim : 0);
    pp::Rng rng(o.seed + 1);
    for (std::size_t i = 0; i < kActionRows * dim; ++i) {
      const std::size_t j = i % dim;
      const double value = rng.Uniform(action.low[j], action.high[j]);
      if (float64) {
        actions64[i] = value;
      } else {
        actions32[i] = static_cast<float>(value);
      }
    }
    std::vector<const std::byte*> rows(kActionRows);
    for (int r = 0; r < kActionRows; ++r) {
      rows[r] = float64 ? reinterpret_cast<const std::byte*>(&actions64[r * dim])
                        : reinterpret_cast<const std::byte*>(&actions32[r * dim]);
    }

    std::vector<char> done(envs.size(), true);  // each env's first iteration resets it
    if (o.threads > 1) {
      const auto [iterations, elapsed] = RunThreads(o, envs, rows, done);
      const double rate = static_cast<double>(iterations) / elapsed;
      std::printf("%s: %ld steps of %d env(s) in %.3f s, %d threads from cpu %d, %s\nsteps_per_s=%.1f\n",
                  o.task.c_str(), iterations, o.num_envs, elapsed, o.threads, std::max(o.cpu, 0),
                  o.swap ? "groups swapped every pass" : "each thread its own group", rate);
      return 0;
    }
    Run(envs, rows, o.warmup, done);
    const auto [iterations, elapsed] = Run(envs, rows, o.seconds, done);
    const double rate = static_cast<double>(iterations) / elapsed;
    std::printf("%s: %ld steps of %d env(s) in %.3f s on cpu %d, one thread\nsteps_per_s=%.1f\n", o.task.c_str(),
                iterations, o.num_envs, elapsed, o.cpu, rate);
    return 0;
  });
}
