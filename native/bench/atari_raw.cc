// A raw single-thread loop over one Atari env: no pool, no threads, no Python. Two modes:
//   --mode emulation   ALE alone: frame_skip act() calls per agent step, reset_game on game over;
//   --mode preprocess  the full AtariEnv step (emulation + max-pool, grey, resize, frame stack).
// Their difference is what our preprocessing costs per step. Two copies pinned to two cores
// (--cpu 0 and --cpu 1, started together) measure the machine's 2-core limit.
//
//   atari_raw --rom-dir DIR [--task Pong-v5] [--mode preprocess] [--seconds 5] [--warmup 1] [--cpu N]
//
// The last line is machine-readable: `steps_per_s=<float> frames_per_s=<float>`.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench/raw_cli.h"
#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "core/rng.h"
#include "envs/atari/atari_env.h"
#include "envs/atari/register.h"

namespace {

constexpr int kActionRows = 1024;  // pre-drawn random actions, cycled
constexpr long kCheckEvery = 200;  // iterations between clock reads

struct Options {
  std::string task = "Pong-v5";
  std::string mode = "preprocess";
  std::string rom_dir;
  double seconds = 5.0;
  double warmup = 1.0;
  int cpu = -1;
};

const pp::raw::Cli kCli("atari_raw", "a raw single-thread loop over one Atari env",
                        "--rom-dir DIR [--task ID] [--mode emulation|preprocess] [--seconds S] [--warmup S] [--cpu N]");

Options Parse(int argc, char** argv) {
  Options o;
  kCli.Parse(argc, argv,
             {{"--task", &o.task},
              {"--mode", &o.mode},
              {"--rom-dir", &o.rom_dir},
              {"--seconds", &o.seconds},
              {"--warmup", &o.warmup},
              {"--cpu", &o.cpu}});
  if (o.mode != "emulation" && o.mode != "preprocess") kCli.Usage("--mode is emulation or preprocess");
  if (o.rom_dir.empty()) kCli.Usage("--rom-dir is required (python -c 'import ale_py.roms, os; ...')");
  return o;
}

// Runs `step` for `seconds`; returns (agent steps, elapsed seconds).
template <typename StepFn>
std::pair<long, double> Run(double seconds, StepFn step) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  long iterations = 0;
  double elapsed = 0.0;
  while (elapsed < seconds) {
    for (long i = 0; i < kCheckEvery; ++i) step();
    iterations += kCheckEvery;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return {iterations, elapsed};
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  return kCli.Run(o.cpu, [&] {
    pp::Registry registry;
    pp::atari::RegisterAtari(registry, o.rom_dir);
    auto task = registry.Find(o.task);
    if (!task) kCli.Usage("unknown task " + o.task + " (no such ROM in --rom-dir?)");
    const pp::EnvSpec spec = pp::MakeSpec(*task, {});
    const int frame_skip = static_cast<int>(spec.config.GetInt("frame_skip"));
    pp::SingleSlotAllocator allocator(spec);
    auto env_base = task->make_env(spec, 0);
    auto& env = static_cast<pp::atari::AtariEnv&>(*env_base);
    pp::EnvDriver(env).SetAllocator(&allocator);
    pp::EnvDriver(env).Seed(0);

    const int64_t num_actions = static_cast<int64_t>(spec.action.at(0).high.at(0)) + 1;
    std::vector<int64_t> actions(kActionRows);
    pp::Rng rng(1);
    for (auto& a : actions) a = rng.UniformInt(0, num_actions - 1);
    std::vector<const std::byte*> rows(kActionRows);
    for (int r = 0; r < kActionRows; ++r) rows[r] = reinterpret_cast<const std::byte*>(&actions[r]);
    const ale::ActionVect action_set = env.ale().getMinimalActionSet();

    std::size_t next = 0;
    bool done = true;
    auto preprocess_step = [&] {
      if (done) {
        pp::EnvDriver(env).Reset();
        done = false;
      } else {
        const pp::StepResult r = pp::EnvDriver(env).Step(pp::Action(&rows[next]));
        done = r.terminated || r.truncated;
        next = (next + 1) % rows.size();
      }
    };
    ale::ALEInterface& ale = env.ale();
    auto emulation_step = [&] {
      const ale::Action a = action_set[static_cast<std::size_t>(actions[next])];
      for (int t = 0; t < frame_skip; ++t) {
        ale.act(a);
        if (ale.game_over()) {
          ale.reset_game();
          break;
        }
      }
      next = (next + 1) % rows.size();
    };
    std::pair<long, double> result;
    if (o.mode == "emulation") {
      Run(o.warmup, emulation_step);
      result = Run(o.seconds, emulation_step);
    } else {
      Run(o.warmup, preprocess_step);
      result = Run(o.seconds, preprocess_step);
    }
    const double rate = static_cast<double>(result.first) / result.second;
    std::printf("%s (%s): %ld agent steps in %.3f s on cpu %d, one thread\nsteps_per_s=%.1f frames_per_s=%.1f\n",
                o.task.c_str(), o.mode.c_str(), result.first, result.second, o.cpu, rate, rate * frame_skip);
    return 0;
  });
}
