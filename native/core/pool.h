// The env pool: num_envs envs stepped by a worker pool, results gathered batch_size at a time.
// Sync when batch_size == num_envs (row i is the i-th env sent); async otherwise (first finished).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "action_check.h"
#include "batch_ring.h"
#include "env.h"
#include "env_driver.h"
#include "episode.h"
#include "job_runner.h"
#include "output_block.h"
#include "output_layout.h"
#include "pool_options.h"
#include "registry.h"
#include "scheduler.h"
#include "spec.h"

namespace pp {

// Errors the Python layer maps to its own exception types.
struct TimeoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ClosedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A call on a pool in a process forked after the pool was made: its threads exist only in the
// parent, so the child's copy is inert (Close and the destructor leave its threads and envs alone).
struct ForkedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Pool final {
 public:
  Pool(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Every call below but Close throws ClosedError once the pool is closed, before any other check,
  // and ForkedError in a process forked after the pool was made, before taking any lock (a thread
  // of the parent may have held it at the fork).
  // Env ids must be in [0, num_envs), distinct, and not in flight (sent and not yet received).
  // Every call may come from any thread, several at once: the pool's state is guarded, and a call
  // that conflicts with another (an env sent twice, a batch another thread received) throws as a
  // single thread's would. Only one thread receives at a time; the others wait for it.
  //
  // `poll_s` (Recv, Step), for a caller that must regain control now and then while it waits (the
  // Python main thread, to run signal handlers: Ctrl-C): > 0 makes a wait that has not ended after
  // about poll_s seconds return nullptr with nothing received (call Recv again to go on waiting;
  // the batch stays in flight), and the calling thread then runs only jobs the pool has seen to be
  // quick (kSlowJob), so no env step holds it for long: a stand-in worker steps envs in its place.

  // Queue a step for each env in `env_ids`. `actions[k]` points at n rows of action field k (rows
  // in env_ids order; per-player fields have max_num_players rows per env), already of the
  // field's dtype and shape. Validates everything before queueing anything.
  void Send(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  // Send, then Recv without a timeout, the caller stepping envs while it waits. Refuses (before
  // queueing anything) a step that cannot complete a batch, which would leave its envs in flight
  // with nobody to receive them. In async mode the batch returned is the first to finish, which
  // need not hold the envs just sent. With poll_s, nullptr means sent and not yet received: Recv next.
  // `rows` (optional) receives the block's row count. With it, a sync-mode step of some envs with
  // nothing in flight (EnvPool's partial step) is run at once and returns just their rows (row k is
  // env_ids[k]) in a block of its own, as ResetNow does; without it, such a step is refused.
  OutputBlock* Step(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, double poll_s = -1.0,
                    int* rows = nullptr);
  // Queue a reset for each env. `seeds`: empty, or one per env of the pool (num_envs), env i being
  // re-seeded with seeds[i] before its reset.
  // `caller_waits`: the caller will recv right away and help, so in sync mode one fewer worker is
  // woken.
  void Reset(const int32_t* env_ids, int n, std::span<const uint64_t> seeds, bool caller_waits = false);
  // Reset these envs now and return their rows (row k is env_ids[k]) in a block of its own, outside
  // the batch order, with room for every env: for partial resets, and for resets of chosen envs in
  // async mode (any number of them). Other envs may be in flight meanwhile. `seeds` as in Reset.
  OutputBlock* ResetNow(const int32_t* env_ids, int n, std::span<const uint64_t> seeds);
  // Wait for the next complete batch. timeout_s < 0 waits for ever. The caller owns the block and
  // gives it back with BlockFreeList::Release. nullptr only with poll_s > 0 (see above).
  OutputBlock* Recv(double timeout_s, double poll_s = -1.0);
  // Writes the current RGB frame of each env, render_shape() bytes apart, on the caller's thread.
  // The envs must have been reset and have no step in flight (received).
  void Render(const int32_t* env_ids, int n, uint8_t* frames);
  // Each env's Env::DebugState(), on the caller's thread; the same conditions as Render.
  std::vector<Config> DebugStates(const int32_t* env_ids, int n);
  // Joins every thread, even with jobs in flight, and waits for a thread inside Recv to leave it
  // (after the job it is running). Idempotent.
  void Close();

  // Throws ClosedError when the pool is closed, ForkedError in a forked child: for a caller that
  // has work of its own to do before calling in (converting arguments), so that such a pool does
  // none of it.
  void CheckOpen() const;
  // Whether this process is a fork of the one that made the pool (the copy is inert here).
  bool forked() const;
  // Throws ForkedError in a forked child: each call asks before it takes a lock.
  void CheckNotForked() const;
  // (height, width, 3) of a frame; throws std::invalid_argument when the task does not render.
  const std::vector<int>& RenderShape() const;

  const EnvSpec& spec() const { return spec_; }
  // With batch_size resolved and num_threads the number of threads actually stepping envs.
  const PoolOptions& options() const { return options_; }
  int batch_size() const { return ring_.batch_size(); }
  const BlockLayout& layout() const { return ring_.layout(); }
  const OutputFields& output_fields() const { return fields_; }
  // Threads stepping envs: the workers, plus the caller in sync mode.
  int num_threads() const { return options_.num_threads; }
  bool closed() const { return closed_; }
  // Sent but not yet returned by Recv.
  int outstanding() const {
    return static_cast<int>(sent_.load(std::memory_order_acquire) - received_.load(std::memory_order_acquire));
  }
  // Resets that stopped halfway to go on on another thread (Scheduler), for tests.
  int64_t resets_paused() const { return scheduler_->resets_paused(); }
  int blocks_allocated() const { return ring_.blocks_allocated() + (reset_blocks_ ? reset_blocks_->allocated() : 0); }

 private:
  Pool(std::shared_ptr<const TaskEntry> task, PreparedPool prepared);

  void CheckEnvIds(const int32_t* env_ids, int n, const char* what);
  // Under api_mu_: the pool is open and each env id is valid, received and was reset (for a call
  // that reads the envs themselves: render, debug_states).
  void CheckReceived(const int32_t* env_ids, int n, const char* what);
  void CheckSeeds(std::span<const uint64_t> seeds) const;
  void ValidateSend(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  // Pushes the jobs set up in envs_ (under api_mu_), each writing row k of a block of its own, and
  // runs jobs on the caller's thread until all n rows are written.
  OutputBlock* RunNow(const int32_t* env_ids, int n, const char* what);
  // Copies each env's action rows and marks its job a step (under api_mu_).
  void SetStepJobs(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  // Checks the env ids and seeds, and marks each env's job a reset (under api_mu_).
  void SetResetJobs(const int32_t* env_ids, int n, std::span<const uint64_t> seeds);
  [[noreturn]] void ThrowCannotFill(int n, int in_flight) const;
  void QueueSteps(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, bool caller_waits);
  // Marks the envs in flight, assigns their output indices (sync mode) and pushes their jobs.
  void Enqueue(const int32_t* env_ids, int n, bool caller_waits);
  // In a forked child: lets go of the threads (which exist only in the parent) and the envs (whose
  // destructors would end the parent's engines and worker processes) without joining or freeing.
  void Abandon();

  std::shared_ptr<const TaskEntry> task_;  // keeps make_env alive
  const int fork_generation_;              // ForkGeneration() when made
  const pid_t creator_pid_;                // for ForkedError's message
  EnvSpec spec_;
  PoolOptions options_;
  OutputFields fields_;
  ActionCheck action_check_;
  BatchRing ring_;
  std::shared_ptr<BlockFreeList> reset_blocks_;  // async mode only: ResetNow's blocks
  std::vector<EnvState> envs_;
  std::vector<uint32_t> seen_;  // CheckEnvIds' duplicate stamps
  uint32_t seen_generation_ = 0;

  std::atomic<bool> closed_{false};
  // Envs sent (written under api_mu_) and received (written under recv_mu_): one writer each, so
  // plain loads and stores; in flight = sent_ - received_.
  std::atomic<int64_t> sent_{0};
  std::atomic<int64_t> received_{0};
  // Serialises the calls that change which envs are in flight (Send, Step's send, Reset, ResetNow,
  // Render, Close); each holds it briefly, never while it waits for a batch.
  std::mutex api_mu_;
  // Serialises receivers (Recv, Step's receive), held while waiting for the batch. A caller with
  // poll_s or a timeout waits for another receiver no longer than it would wait for a batch.
  std::mutex recv_mu_;
  // Read by every job (its references to the members above), written never: a cache line of its
  // own, away from the locks and counters that other threads write.
  alignas(64) JobRunner runner_;
  // Made after the envs; destroyed before them (its threads run their jobs).
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace pp
