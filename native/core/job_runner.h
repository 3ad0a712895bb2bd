// Runs one env's job, a reset or a step, and writes its row: the autoreset, the episode's
// bookkeeping and statistics, and a failed env's row. It holds no scheduling state: which thread
// runs a job, and what is timed and queued again, are the scheduler's (scheduler.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "batch_ring.h"
#include "env.h"
#include "env_driver.h"
#include "episode.h"
#include "output_block.h"
#include "output_layout.h"
#include "pool_options.h"
#include "spec.h"

namespace pp {

enum class JobKind : uint8_t { kStep, kReset };

// One env of a pool: the env, its queued job and the row that job writes. The fields are in two
// groups by who writes them, the second starting a cache line of its own: the sender's (the API
// thread, at send and receive; the running thread reads them once per job) and the running
// thread's (written by each job; a send reads them only in autoreset_mode="disabled", for the
// episode's state), so that the two threads' writes do not move the same cache lines between
// cores on every job (BENCHMARKS.md, "dm_control (issue 15): cache lines").
struct alignas(64) EnvState {
  // Written by the sender (and read by the thread that runs the job), or never after the pool
  // is made.
  std::unique_ptr<Env> env;
  SplitPhaseEnv* split = nullptr;  // the env, when it is split-phase: its jobs are posted first
  // The queued job.
  JobKind job = JobKind::kReset;
  bool reseed = false;
  // Sent, not yet returned by Recv. Set under api_mu_, cleared by the receiver (recv_mu_): the
  // release/acquire pair hands the env's state from the thread that ran its job to the next sender.
  std::atomic<bool> pending{false};
  // The lane (LaneQueues) of the thread that ran its last job, where its next job is queued.
  // Written by the thread that runs its job when it changes (rarely: a job taken by another
  // lane's thread), read by the next sender (after `pending`'s hand-off) and by the thread that
  // pops its job (the queue's hand-off).
  int lane = 0;
  uint64_t seed = 0;
  int64_t assigned_index = -1;  // sync mode: output index fixed at send
  std::vector<const std::byte*> action_rows;
  std::vector<std::byte> action_storage;

  // Written by the thread that runs the job.
  alignas(64) RowRef forced;  // ResetNow: the row is fixed by the caller (under api_mu_, before the push)
  // The output row of the running job.
  RowRef out;
  int player_row = -1;
  int num_players = 0;
  std::vector<std::byte*> slot_rows;
  Episode episode;
  // How long its last reset took (0: none timed yet); read by the caller that pops its job
  // (LongResetRule, after the queue's hand-off).
  int64_t reset_nanos = 0;
  // Its reset stopped halfway (Env::PauseReset), and its queued job goes on with it: not seeded
  // again.
  bool resuming = false;
};

class JobRunner final : private SlotAllocator {
 public:
  // The references must outlive the runner (the pool's members).
  JobRunner(const EnvSpec& spec, const PoolOptions& options, const OutputFields& fields, BatchRing& ring,
            std::vector<EnvState>& envs)
      : spec_(spec), options_(options), fields_(fields), ring_(ring), envs_(envs) {}
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Makes `env` write its outputs through this runner's rows.
  void Attach(Env& env) { EnvDriver(env).SetAllocator(this); }
  // Whether s's queued job resets its env (asked for, or its episode is over), rather than steps it.
  bool ResetDue(const EnvState& s) const {
    return s.episode.ResetDue(s.job == JobKind::kReset, options_.autoreset_mode);
  }

  struct Result {
    // The block whose row the job wrote, not yet counted as finished (BatchRing::FinishRow);
    // nullptr when the reset paused.
    OutputBlock* block = nullptr;
    // The reset stopped halfway (Env::PauseReset, when `pause` said so): the job must run again
    // to go on, on any thread.
    bool paused = false;
  };
  // Runs env_id's job, a reset when `reset` (ResetDue, which the caller asked first). `pause`: the
  // signal a long reset asks (nullptr: it never pauses).
  // `step_nanos` (non-null): the env's Step() is timed into it, when the job is a step.
  Result Run(int env_id, bool reset, const PauseSignal* pause, int64_t* step_nanos);

 private:
  Slot Allocate(int env_id, int num_players) override;
  void ClaimRow(EnvState& s);
  void WriteRow(EnvState& s, const StepResult& r, bool episode_done);
  void WriteFailedRow(EnvState& s, const char* message);

  const EnvSpec& spec_;
  const PoolOptions& options_;
  const OutputFields& fields_;
  BatchRing& ring_;
  std::vector<EnvState>& envs_;
};

inline void JobRunner::WriteRow(EnvState& s, const StepResult& r, bool episode_done) {
  WriteStepFields(*s.out.block, fields_, s.out.row, s.env->env_id(), s.env->elapsed_step(), r);
  if (options_.episode_stats) s.episode.WriteStats(*s.out.block, fields_, s.out.row, episode_done);
}

// Inline: it is every job's path, called from the scheduler (scheduler.cc).
inline JobRunner::Result JobRunner::Run(int env_id, bool reset, const PauseSignal* pause, int64_t* step_nanos) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  EnvDriver env(*s.env);
  const AutoresetMode mode = options_.autoreset_mode;
  s.out.block = nullptr;
  bool paused = false;
  try {
    if (reset) {
      const bool resuming = s.resuming;
      s.resuming = false;
      if (s.reseed && !resuming) env.Seed(s.seed);
      paused = !env.Reset(pause);
      if (paused) {
        if (s.out.block != nullptr) {
          paused = false;
          throw std::logic_error("Reset() paused after Allocate()");
        }
        s.resuming = true;
      } else {
        if (s.out.block == nullptr) throw std::logic_error("Reset() did not write its outputs (call Allocate())");
        s.episode.Begin(options_.episode_stats);
        WriteRow(s, StepResult{}, false);
      }
    } else {
      const auto start =
          step_nanos != nullptr ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      const StepResult r = env.Step(Action(s.action_rows.data()));
      if (step_nanos != nullptr) {
        *step_nanos =
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
      }
      if (s.out.block == nullptr) throw std::logic_error("Step() did not write its outputs (call Allocate())");
      const bool done = r.terminated || r.truncated;
      s.episode.Count(r.reward);
      WriteRow(s, r, done);
      if (Episode::ResetsInStep(done, mode)) {
        CopyFinalRow(*s.out.block, fields_, ring_.layout(), s.out.row);
        env.Reset();  // writes its observation into the same row
        At<int32_t>(*s.out.block, fields_.elapsed_step, s.out.row) = 0;
        s.episode.Begin(options_.episode_stats);
      } else {
        s.episode.SetOver(done);
      }
    }
  } catch (const std::exception& e) {
    // The env's state is unknown now: its result is this error, and its next step resets it.
    try {
      WriteFailedRow(s, e.what());
    } catch (...) {
      // Only allocation failure can land here; the row is still counted by the caller.
    }
    s.episode.Fail();
  }
  OutputBlock* block = s.out.block;
  s.out.block = nullptr;
  return Result{block, paused};
}

}  // namespace pp
