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
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/registry.h"
#include "core/rng.h"
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
  std::string assets_dir = PP_GYMNASIUM_ASSETS_DIR;
};

[[noreturn]] void Usage(const char* message) {
  std::fprintf(stderr,
               "%s\nusage: mujoco_raw [--task ID] [--seconds S] [--warmup S] [--cpu N] [--seed N] "
               "[--num-envs N] [--assets-dir DIR]\n",
               message);
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") Usage("a raw single-thread loop over one MuJoCo env");
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--task") {
      o.task = value;
    } else if (flag == "--seconds") {
      o.seconds = std::atof(value);
    } else if (flag == "--warmup") {
      o.warmup = std::atof(value);
    } else if (flag == "--cpu") {
      o.cpu = std::atoi(value);
    } else if (flag == "--seed") {
      o.seed = std::strtoull(value, nullptr, 10);
    } else if (flag == "--num-envs") {
      o.num_envs = std::atoi(value);
      if (o.num_envs < 1) Usage("--num-envs must be >= 1");
    } else if (flag == "--assets-dir") {
      o.assets_dir = value;
    } else {
      Usage(("unknown flag " + flag).c_str());
    }
  }
  return o;
}

void PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
    std::fprintf(stderr, "cannot pin to cpu %d\n", cpu);
    std::exit(1);
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
      pp::Env& env = *envs[next_env];
      if (done[next_env]) {
        env.BeginReset();
        env.Reset();
        done[next_env] = false;
      } else {
        env.BeginStep();
        const pp::StepResult r = env.Step(pp::Action(&rows[next_row]));
        done[next_env] = r.terminated || r.truncated;
        next_row = (next_row + 1) % rows.size();
      }
      next_env = (next_env + 1) % envs.size();
    }
    iterations += kCheckEvery;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return {iterations, elapsed};
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  if (o.cpu >= 0) PinToCpu(o.cpu);
  try {
    pp::Registry registry;
#ifdef PP_RAW_DM_CONTROL
    pp::dm_control::RegisterDmControl(registry, o.assets_dir);
#else
    pp::mujoco::RegisterMujoco(registry, o.assets_dir);
#endif
    auto task = registry.Find(o.task);
    if (!task) Usage(("unknown task " + o.task).c_str());
    const pp::EnvSpec spec = pp::MakeSpec(*task, {});
    pp::SingleSlotAllocator allocator(spec);  // every env writes the same row: outputs are dropped
    std::vector<std::unique_ptr<pp::Env>> envs;
    for (int i = 0; i < o.num_envs; ++i) {
      envs.push_back(task->make_env(spec, i));
      envs.back()->SetAllocator(&allocator);
      envs.back()->Seed(o.seed + static_cast<uint64_t>(i));
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
    Run(envs, rows, o.warmup, done);
    const auto [iterations, elapsed] = Run(envs, rows, o.seconds, done);
    const double rate = static_cast<double>(iterations) / elapsed;
    std::printf("%s: %ld steps of %d env(s) in %.3f s on cpu %d, one thread\nsteps_per_s=%.1f\n", o.task.c_str(),
                iterations, o.num_envs, elapsed, o.cpu, rate);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mujoco_raw: %s\n", e.what());
    return 1;
  }
  return 0;
}
