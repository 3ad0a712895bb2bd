// The default scheduler's policies, each a small part with its own state and rule, so that each is
// tested alone (native/tests/scheduling_policies_test.cc). DefaultScheduler (scheduler.h) composes
// them; none of them runs a job.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "job_queue.h"
#include "worker_pool.h"

namespace pp {

// Whether a caller with poll_s (one that must return now and then: the Python main thread, for
// Ctrl-C) may run jobs itself: once the workers have seen target() quick steps in a row, and no
// such caller has run a slow job since. Each slow job such a caller runs doubles the target (up to
// kMaxTarget), so that an env whose steps are now and then slow (a long reset every episode) ends
// up stepped by the workers alone. Slow is JobClock's verdict (job_clock.h). The counters are
// hints shared by every thread: relaxed, and a racing update may drop a step.
class QuickStreak {
 public:
  static constexpr int kFirstTarget = 16;
  static constexpr int kMaxTarget = 1 << 16;

  bool quick() const { return quick_.load(std::memory_order_relaxed); }
  int target() const { return target_.load(std::memory_order_relaxed); }

  // A worker ran a job, or a run of jobs timed as one, holding `steps` steps (resets do not count:
  // an env's reset is often much quicker than its step).
  void WorkerRan(bool slow, int steps) {
    if (slow) {
      streak_.store(0, std::memory_order_relaxed);
    } else if (steps > 0 && streak_.fetch_add(steps, std::memory_order_relaxed) + steps >= target()) {
      quick_.store(true, std::memory_order_relaxed);
    }
  }

  // A caller with poll_s ran a slow job: from now on it waits, until the workers see twice as many
  // quick steps in a row as last time.
  void CallerRanSlow() {
    streak_.store(0, std::memory_order_relaxed);
    target_.store(std::min(2 * target(), kMaxTarget), std::memory_order_relaxed);
    quick_.store(false, std::memory_order_relaxed);
  }

 private:
  std::atomic<bool> quick_{false};
  std::atomic<int> streak_{0};
  std::atomic<int> target_{kFirstTarget};
};

// The running mean of sampled step times, and the lanes' affinity it decides (LaneQueues): a job
// goes to the lane of the thread that last ran its env only when steps are long enough for the
// cache lines kept warm to matter (BENCHMARKS.md, "per-thread job lanes on main", its "Cheap
// envs" paragraph).
class StepGauge {
 public:
  static constexpr std::chrono::nanoseconds kAffinityMinStep{1000};

  // Adds one step's time; returns whether the lanes' affinity is to be on. A mean over about the
  // last 8 samples, the first taken as it is; racing updates may drop a sample: a hint.
  bool Sample(int64_t nanos) {
    const int64_t old = mean_.load(std::memory_order_relaxed);
    const int64_t mean = old == 0 ? std::max<int64_t>(nanos, 1) : old + (nanos - old) / 8;
    mean_.store(mean, std::memory_order_relaxed);
    return mean >= kAffinityMinStep.count();
  }
  // 0 until the first sample.
  int64_t mean_nanos() const { return mean_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> mean_{0};
};

// Async mode: whether a reset that the caller in Recv popped from its own lane goes to a worker
// instead. A caller that starts a long job (a dm_control task's reset settles its physics, ~1.3
// ms; an Atari reset plays its no-op starts) while the batch it waits for completes holds that
// batch until the job ends, while the workers finish every other env in flight and then idle
// (BENCHMARKS.md, "long resets handed to a worker"). A worker not in a reset itself takes it
// instead. The caller keeps a reset whose length is not known yet (`last_reset_nanos` 0), and one
// that every worker is busy with a reset of its own for (all envs resetting at once). Only with
// the lanes' affinity on: without it, steps are too cheap for a reset to matter, and resets are
// not timed.
struct LongResetRule {
  static constexpr std::chrono::microseconds kLongReset{50};

  static bool HandOff(bool affinity, int64_t last_reset_nanos, int workers_in_reset, int num_workers) {
    return affinity && last_reset_nanos >= std::chrono::nanoseconds(kLongReset).count() &&
           workers_in_reset < num_workers;
  }
};

// Guided self-scheduling, sync mode: a thread whose job took under kCheapJob pops a run of the next
// queued jobs at once, at most a 2 * num_threads-th of the queue so that the threads still share
// it, and at most kMaxRun in all. A run's envs are neighbours in the queue, hence in the batch: one
// thread writes neighbouring rows and counts them finished once, so the queue's head, the row
// counter and the rows' cache lines stop moving between cores once per env (BENCHMARKS.md, "Thread
// scaling"). Async mode runs one job at a time: a batch is whichever envs finish first, and a run
// would hold back envs that an idle thread could step.
struct GuidedRun {
  static constexpr int kMaxRun = 32;
  static constexpr std::chrono::microseconds kCheapJob{20};

  // How many more jobs a run may pop after a cheap first one; 0: no run (the first job is then not
  // timed either).
  static int Share(bool ordered, std::size_t queued, int num_threads) {
    if (!ordered) return 0;
    const std::size_t share = queued / (2 * static_cast<std::size_t>(std::max(1, num_threads)));
    return static_cast<int>(std::min<std::size_t>(share, kMaxRun - 1));
  }
};

// One thread that runs jobs from `lane` in place of a caller that only waits (poll_s, and jobs not
// known to be quick), so the pool keeps its number of threads stepping. Made on first Wake.
class StandIn {
 public:
  StandIn(LaneQueues* queue, int lane, WorkerPool::Job job) : queue_(queue), lane_(lane), job_(std::move(job)) {}
  StandIn(const StandIn&) = delete;
  StandIn& operator=(const StandIn&) = delete;

  // Wakes it to run a job, making it first if need be; nothing once stopped.
  void Wake() {
    if (!made_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      if (!thread_) thread_ = std::make_unique<WorkerPool>(1, -1, queue_, lane_, job_);
      made_.store(true, std::memory_order_release);
    }
    thread_->Wake(1);
  }
  bool made() const { return made_.load(std::memory_order_acquire); }
  // Joins its thread (after the job it is running); idempotent.
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    if (thread_) thread_->Stop();
  }
  // In a forked child, where the thread does not exist: lets go of it without joining.
  void Abandon() { (void)thread_.release(); }

 private:
  LaneQueues* queue_;
  const int lane_;
  WorkerPool::Job job_;
  std::atomic<bool> made_{false};
  std::mutex mu_;
  bool stopped_ = false;
  std::unique_ptr<WorkerPool> thread_;
};

}  // namespace pp
