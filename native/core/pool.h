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
#include "job_queue.h"
#include "job_runner.h"
#include "output_block.h"
#include "output_layout.h"
#include "pool_options.h"
#include "registry.h"
#include "spec.h"
#include "worker_pool.h"

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
  // Resets that stopped halfway to go on on a worker (RunJob), for tests.
  int64_t resets_paused() const { return resets_paused_.load(std::memory_order_relaxed); }
  int blocks_allocated() const { return ring_.blocks_allocated() + (reset_blocks_ ? reset_blocks_->allocated() : 0); }

  // Consecutive quick steps the workers must see before a caller with poll_s runs jobs; doubled
  // each time such a caller then runs a slow one (up to kMaxQuickStreak), so that an env whose
  // steps are now and then slow (a long reset every episode) ends up stepped by the workers alone.
  static constexpr int kQuickStreak = 16;
  static constexpr int kMaxQuickStreak = 1 << 16;

 private:
  Pool(std::shared_ptr<const TaskEntry> task, PreparedPool prepared);

  void CheckEnvIds(const int32_t* env_ids, int n, const char* what);
  void CheckSeeds(std::span<const uint64_t> seeds) const;
  void ValidateSend(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  // Pushes the jobs set up in envs_ (under api_mu_), each writing row k of a block of its own, and
  // runs jobs on the caller's thread until all n rows are written.
  OutputBlock* RunNow(const int32_t* env_ids, int n, const char* what);
  // Copies each env's action rows and marks its job a step (under api_mu_).
  void SetStepJobs(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  [[noreturn]] void ThrowCannotFill(int n, int in_flight) const;
  void QueueSteps(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, bool caller_waits);
  void Enqueue(const int32_t* env_ids, int n, bool caller_waits);
  // Queues env_id's job on its lane; `stamp`: LaneQueues::Now() (one reading per batch of pushes).
  void PushJob(int env_id, int64_t stamp);
  // Runs env_id's job and returns the block it wrote its row of; the row is not counted as
  // finished yet (BatchRing::FinishRow). nullptr: its reset paused (an async caller's, whose batch
  // completed meanwhile: Recv) and the job is queued again on a worker's lane to go on there;
  // never for a split-phase env.
  OutputBlock* RunJob(int env_id, int lane);
  // Runs env_id's job, and when its env posts its work (SplitPhaseEnv::Post), the jobs of
  // further queued envs that post too, up to a batch of them: all posted, then all finished in
  // order. Otherwise, in sync mode, a run of the next queued jobs too when there are more than the
  // stepping threads would share one at a time (RunRun).
  struct Ran {
    int steps = 0;   // how many of the jobs run were steps (not resets)
    int serial = 1;  // how many ran one after another on this thread (a posted run's jobs overlap: 1)
  };
  // `lane`: the running thread's (LaneQueues); each env run takes it as its own.
  Ran RunJobs(int env_id, int lane, int64_t stop_at = 0);
  // Sync mode: runs env_id's job and, when it took less than kCheapJob, the next queued ones,
  // popped at once: at most a 2 * num_threads-th of the queue, so that the threads still share it
  // (guided self-scheduling), at most kMaxRun. A run's envs are neighbours in the queue, hence in
  // the batch: one thread writes neighbouring rows, and counts them finished once (the batch needs
  // every row anyway). On many cores this keeps the queue's head, the row counter and the output
  // rows' cache lines from moving between cores once per env (BENCHMARKS.md, "Thread scaling"):
  // worth it for cheap envs only. Async
  // mode runs one job at a time: a batch is whichever envs finish first, and a run would hold
  // back envs that an idle thread could step. With `stop_at` (CoarseNanos; 0: none), the run
  // stops once that time has passed and queues its remaining jobs again (their rows are assigned,
  // so any thread may run them): a caller with poll_s returns about on time.
  Ran RunRun(int env_id, int lane, int64_t stop_at);
  static constexpr int kMaxRun = 32;
  static constexpr std::chrono::microseconds kCheapJob{20};
  // Starts s's job through Env::Post; false when its env posted nothing (or is not split-phase).
  bool PostJob(EnvState& s);
  // A worker's job: while the pool is not known to be quick (quick_jobs_), also timed.
  void RunWorkerJob(int env_id, int lane);
  // Async mode, the caller in Recv having popped env_id's job from its own lane: whether to hand it
  // to a worker's lane instead (HandOffLongReset's rule), and doing so.
  bool HandOffLongReset(int env_id);
  // A timed step's time, into step_nanos_ and the lanes' affinity.
  void SampleStep(std::chrono::steady_clock::duration took);
  // The caller's lane and its stand-in's; worker i's is 1 + i.
  static constexpr int kCallerLane = 0;
  // A reset at least this long (the env's last one) is one an async caller hands to a free worker.
  static constexpr std::chrono::microseconds kLongReset{50};
  // Env steps shorter than this (a running mean of every 256th step's time per thread) turn the
  // lanes' affinity off (LaneQueues::SetAffinity): BENCHMARKS.md, "per-thread job lanes", "Cheap envs".
  static constexpr std::chrono::nanoseconds kAffinityMinStep{1000};
  // Set by an async caller in Recv while it runs jobs: a long reset it runs may stop halfway
  // (Env::PauseReset) once the batch it waits for is complete, and go on on a worker (RunJob).
  // Null on every other thread and call. (Inline, with a constant initializer: read without a
  // TLS wrapper call in each file that uses it.)
  static inline thread_local const PauseSignal* t_pause_signal = nullptr;
  friend class PauseScope;
  // Wakes the stand-in worker (made on first use) to step envs for a caller that does not.
  void WakeStandIn();
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

  LaneQueues queue_;
  std::unique_ptr<WorkerPool> workers_;
  // One thread that runs jobs in place of a caller that only waits (poll_s and not quick), so the
  // pool keeps num_threads threads stepping; made on first use, under api_mu_.
  std::unique_ptr<WorkerPool> stand_in_;
  std::atomic<bool> stand_in_made_{false};
  // Whether a caller with poll_s may run jobs: the workers have seen quick_target_ quick steps in
  // a row, and no such caller has run a slow job since.
  std::atomic<bool> quick_jobs_{false};
  // Workers running a reset now (HandOffLongReset hands one over only while some worker is not).
  std::atomic<int> workers_in_reset_{0};
  // The running mean of the sampled steps' time (ns; 0: none sampled yet), for kAffinityMinStep.
  std::atomic<int64_t> step_nanos_{0};
  std::atomic<int64_t> resets_paused_{0};
  std::atomic<int> quick_streak_{0};
  std::atomic<int> quick_target_{kQuickStreak};
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
};

}  // namespace pp
