// Which thread runs which job. The pool sets up each env's job (EnvState), pushes it, and waits
// through the scheduler for the rows it needs; how jobs are spread over threads, batched into runs,
// timed and handed over is the scheduler's alone. DefaultScheduler composes the policies of
// scheduling_policies.h.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "batch_ring.h"
#include "job_queue.h"
#include "job_runner.h"
#include "output_block.h"
#include "scheduling_policies.h"
#include "worker_pool.h"

namespace pp {

class Scheduler {
 public:
  virtual ~Scheduler() = default;

  // What the caller of Push does next: how many threads the pushed jobs need woken.
  enum class Caller {
    kReturns,        // leaves the jobs to the workers (send, reset)
    kWaitsForBatch,  // waits for the next batch next (WaitForBatch), running jobs while it waits
    kRunsThemAll,    // runs jobs until these are done (RunUntilRows)
  };
  // Queues the jobs of these envs, set up in their EnvState, and wakes threads to run them.
  virtual void Push(const int32_t* env_ids, int n, Caller caller) = 0;

  struct Wait {
    bool forever = true;                             // no deadline
    std::chrono::steady_clock::time_point deadline;  // unless forever
    // > 0: the caller must regain control about this often (Pool::Recv's poll_s); it then runs
    // only jobs seen to be quick, so that no env step holds it for long.
    double poll_s = -1.0;
  };
  enum class Outcome { kReady, kPolled, kTimedOut, kClosed };
  // Runs jobs on the calling thread, or waits, until `block` has `rows` rows finished (kReady),
  // the pool closes (kClosed), the deadline passes (kTimedOut), or poll_s passes (kPolled).
  virtual Outcome WaitForBatch(const OutputBlock& block, int rows, const Wait& wait) = 0;
  // Runs jobs on the calling thread until `block` has `rows` rows finished. False when the pool
  // closed first: every thread that could still write a row of `block` has then been stopped.
  virtual bool RunUntilRows(const OutputBlock& block, int rows) = 0;

  // Joins every thread, after the job each is running; jobs still queued are not run. Idempotent.
  virtual void Stop() = 0;
  // In a forked child, where the threads do not exist: lets go of them without joining.
  virtual void Abandon() = 0;

  // Resets that stopped halfway to go on on another thread (for tests; 0 where none pause).
  virtual int64_t resets_paused() const = 0;
};

// Today's policies: per-thread lanes with affinity (LaneQueues, StepGauge), guided runs in sync
// mode (GuidedRun), posted runs for split-phase envs, long resets handed to a worker and paused
// resets in async mode (LongResetRule), and for a caller with poll_s the quick streak (QuickStreak)
// and the stand-in worker (StandIn).
class DefaultScheduler final : public Scheduler {
 public:
  // The references must outlive the scheduler (the pool's members). Sets each env's first lane.
  // `num_threads`: the threads stepping envs, the caller included (PoolOptions::num_threads).
  DefaultScheduler(std::vector<EnvState>& envs, JobRunner& runner, BatchRing& ring, const std::atomic<bool>& closed,
                   int num_threads, int thread_affinity_offset);
  ~DefaultScheduler() override { Stop(); }

  void Push(const int32_t* env_ids, int n, Caller caller) override;
  Outcome WaitForBatch(const OutputBlock& block, int rows, const Wait& wait) override;
  bool RunUntilRows(const OutputBlock& block, int rows) override;
  void Stop() override;
  void Abandon() override;
  int64_t resets_paused() const override { return resets_paused_.load(std::memory_order_relaxed); }

 private:
  // The caller's lane and its stand-in's; worker i's is 1 + i.
  static constexpr int kCallerLane = 0;

  // Queues env_id's job on its lane; `stamp`: LaneQueues::Now() (one reading per batch of pushes).
  void PushJob(int env_id, int64_t stamp);
  // Queues env_id's job on a worker's lane (env ids spread them) and wakes one.
  void PushToWorker(int env_id);
  // Runs env_id's job and returns the block it wrote its row of, not yet counted as finished
  // (BatchRing::FinishRow). nullptr: its reset paused (an async caller's, whose batch completed
  // meanwhile) and the job is queued again on a worker's lane to go on there; never for a
  // split-phase env.
  OutputBlock* RunJob(int env_id, int lane);
  struct Ran {
    int steps = 0;   // how many of the jobs run were steps (not resets)
    int serial = 1;  // how many ran one after another on this thread (a posted run's jobs overlap: 1)
  };
  // Runs env_id's job and, when its env posts its work (SplitPhaseEnv::Post), the jobs of further
  // queued envs that post too, up to a batch of them: all posted, then all finished in order.
  // Otherwise a guided run (RunRun). `lane`: the running thread's; each env run takes it as its own.
  Ran RunJobs(int env_id, int lane, int64_t stop_at = 0);
  // Runs env_id's job and, when it was cheap, a run of the next queued ones (GuidedRun). With
  // `stop_at` (CoarseNanos; 0: none), the run stops once that time has passed and queues its
  // remaining jobs again (their rows are assigned, so any thread may run them): a caller with
  // poll_s returns about on time.
  Ran RunRun(int env_id, int lane, int64_t stop_at);
  // Starts s's job through SplitPhaseEnv::Post; false when its env posted nothing (or is not
  // split-phase).
  bool PostJob(EnvState& s);
  // A worker's job: while jobs are not known to be quick (QuickStreak), also timed.
  void RunWorkerJob(int env_id, int lane);
  // Async mode, the caller having popped env_id's job from its own lane: hands it to a worker when
  // LongResetRule says so.
  bool HandOffLongReset(int env_id);

  // Set by an async caller in WaitForBatch while it runs jobs: a long reset it runs may stop
  // halfway (Env::PauseReset) once the batch it waits for is complete, and go on on a worker
  // (RunJob). Null on every other thread and call. (Inline, with a constant initializer: read
  // without a TLS wrapper call.)
  static inline thread_local const PauseSignal* t_pause_signal = nullptr;
  friend class PauseScope;

  // Read by every job, written never after construction.
  std::vector<EnvState>& envs_;
  JobRunner& runner_;
  BatchRing& ring_;
  const std::atomic<bool>& closed_;
  const int num_threads_;
  LaneQueues queue_;
  std::unique_ptr<WorkerPool> workers_;
  StandIn stand_in_;
  // Written by the threads that run jobs: a cache line of their own.
  alignas(64) QuickStreak quick_;
  StepGauge step_gauge_;
  // Workers running a reset now (LongResetRule hands one over only while some worker is not).
  std::atomic<int> workers_in_reset_{0};
  std::atomic<int64_t> resets_paused_{0};
};

}  // namespace pp
