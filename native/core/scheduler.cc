// The default scheduler: which thread runs which job, in runs or one at a time, and the wait for a
// batch on the caller's thread. The policies' rules are in scheduling_policies.h.
#include "scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <thread>
#include <vector>

#include "env_driver.h"
#include "job_clock.h"

namespace pp {

namespace {

// The worker threads for num_threads stepping threads: less the caller, which steps envs too while
// it waits; at least one in async mode, where the caller need not be waiting.
int NumWorkers(int num_threads, bool ordered) { return ordered ? num_threads - 1 : std::max(1, num_threads - 1); }

// The batch a receiver waits for is complete: its caller is wanted back.
class BatchComplete final : public PauseSignal {
 public:
  BatchComplete(const OutputBlock& block, int rows) : block_(block), rows_(rows) {}
  bool Wanted() const override { return block_.rows_done.load(std::memory_order_relaxed) >= rows_; }

 private:
  const OutputBlock& block_;
  int rows_;
};

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

// DefaultScheduler::t_pause_signal set for a scope (WaitForBatch), restored whatever it throws.
class PauseScope {
 public:
  explicit PauseScope(const PauseSignal* signal) : saved_(DefaultScheduler::t_pause_signal) {
    DefaultScheduler::t_pause_signal = signal;
  }
  ~PauseScope() { DefaultScheduler::t_pause_signal = saved_; }
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  const PauseSignal* saved_;
};

DefaultScheduler::DefaultScheduler(std::vector<EnvState>& envs, JobRunner& runner, BatchRing& ring,
                                   const std::atomic<bool>& closed, int num_threads, int thread_affinity_offset)
    : envs_(envs),
      runner_(runner),
      ring_(ring),
      closed_(closed),
      num_threads_(num_threads),
      // Twice the most jobs ever queued, so a push rarely meets a cell still being released; a lane
      // for the caller and one per worker.
      queue_(2 * envs.size(), 1 + NumWorkers(num_threads, ring.ordered())),
      stand_in_(&queue_, kCallerLane, [this](int id, int lane) { RunWorkerJob(id, lane); }) {
  // Each lane starts with a contiguous share of the envs (not every lanes()-th env, which would give
  // one thread all envs of a kind when their cost follows their ids).
  const auto num_envs = static_cast<int64_t>(envs_.size());
  for (int64_t i = 0; i < num_envs; ++i) {
    envs_[static_cast<std::size_t>(i)].lane = static_cast<int>(i * queue_.lanes() / num_envs);
  }
  // The calling thread steps envs too while it waits, so it is one of the threads: in sync mode a
  // single env runs entirely on the caller, with no thread hand-off, and while the caller is
  // elsewhere (the policy, in Python) the workers go on with the envs in flight.
  workers_ = std::make_unique<WorkerPool>(NumWorkers(num_threads, ring_.ordered()), thread_affinity_offset, &queue_,
                                          kCallerLane + 1, [this](int id, int lane) { RunWorkerJob(id, lane); });
}

void DefaultScheduler::Stop() {
  if (workers_) workers_->Stop();
  stand_in_.Stop();
}

void DefaultScheduler::Abandon() {
  (void)workers_.release();
  stand_in_.Abandon();
}

void DefaultScheduler::PushJob(int env_id, int64_t stamp) {
  // At most num_envs jobs are queued, but a push can still find its cell taken: a consumer that
  // claimed the item one lap earlier may not have marked the cell free yet (it was preempted).
  // That consumer is running or runnable, so waiting for it always ends.
  while (!queue_.TryPush(envs_[static_cast<std::size_t>(env_id)].lane, env_id, stamp)) std::this_thread::yield();
}

void DefaultScheduler::PushToWorker(int env_id) {
  envs_[static_cast<std::size_t>(env_id)].lane = kCallerLane + 1 + env_id % workers_->num_threads();
  PushJob(env_id, queue_.Now());
  workers_->Wake(1);
}

void DefaultScheduler::Push(const int32_t* env_ids, int n, Caller caller) {
  const int64_t stamp = queue_.Now();
  for (int k = 0; k < n; ++k) PushJob(env_ids[k], stamp);
  // A caller that runs jobs itself needs one worker fewer woken. Waiting for a batch, it is sure to
  // run them only in sync mode, where the batch holds every queued job: an async wait returns the
  // first batch to finish, maybe before the caller ran anything, and a job no woken worker took
  // would stay queued until some later wake-up.
  const bool caller_runs = caller == Caller::kRunsThemAll || (caller == Caller::kWaitsForBatch && ring_.ordered());
  workers_->Wake(caller_runs ? n - 1 : n);
}

bool DefaultScheduler::HandOffLongReset(int env_id) {
  const EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (!LongResetRule::HandOff(queue_.affinity(), s.reset_nanos, workers_in_reset_.load(std::memory_order_relaxed),
                              workers_->num_threads()) ||
      !runner_.ResetDue(s)) {
    return false;
  }
  // A caller whose own lane runs dry takes it back (not handed over again: only its own lane's
  // jobs are), so nothing waits on a sleeping worker.
  PushToWorker(env_id);
  return true;
}

void DefaultScheduler::RunWorkerJob(int env_id, int lane) {
  if (quick_.quick()) {
    RunJobs(env_id, lane);
    return;
  }
  // A run of posted jobs counts as quick only when the whole run is (a caller with poll_s runs such
  // runs whole).
  JobClock& clock = JobClock::ThisThread();
  const int64_t start = clock.Start();
  const Ran ran = RunJobs(env_id, lane);
  quick_.WorkerRan(clock.Slow(start, CoarseNanos(), ran.serial), ran.steps);
}

bool DefaultScheduler::PostJob(EnvState& s) {
  if (s.split == nullptr) return false;
  const bool reset = runner_.ResetDue(s);
  if (reset && s.reseed) {
    // Seeded here, before the post that carries the seed; RunJob must not seed it again.
    EnvDriver(*s.env).Seed(s.seed);
    s.reseed = false;
  }
  try {
    return s.split->Post(reset, Action(s.action_rows.data()));
  } catch (const std::exception&) {
    return false;  // against the contract (Post must not throw): the job runs unposted
  }
}

DefaultScheduler::Ran DefaultScheduler::RunRun(int env_id, int lane, int64_t stop_at) {
  int ids[GuidedRun::kMaxRun];
  ids[0] = env_id;
  int count = 1;
  // With enough queued for a run, the first job is timed (two steady_clock reads, ~40 ns) to decide
  // on one.
  const int share = GuidedRun::Share(ring_.ordered(), queue_.SizeApprox(), num_threads_);
  const auto first_start = share > 0 ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  int steps = 0;
  OutputBlock* held = nullptr;  // the block whose rows this run has written, not yet counted
  int held_rows = 0;
  int i = 0;
  for (; i < count; ++i) {
    if (i > 0 && stop_at != 0 && CoarseNanos() >= stop_at) break;
    steps += envs_[static_cast<std::size_t>(ids[i])].job == JobKind::kStep ? 1 : 0;
    OutputBlock* block = RunJob(ids[i], lane);
    if (block == nullptr) continue;  // its reset paused: queued again
    if (block != held) {
      if (held != nullptr) ring_.FinishRow(held, held_rows);
      held = block;
      held_rows = 0;
    }
    ++held_rows;
    if (i == 0 && share > 0 && std::chrono::steady_clock::now() - first_start < GuidedRun::kCheapJob) {
      count += queue_.TryPopMany(lane, ids + 1, share);
    }
  }
  if (held != nullptr) ring_.FinishRow(held, held_rows);
  if (i < count) {
    const int64_t stamp = queue_.Now();
    for (int k = i; k < count; ++k) PushJob(ids[k], stamp);
    workers_->Wake(count - i);
  }
  return {steps, i};
}

DefaultScheduler::Ran DefaultScheduler::RunJobs(int env_id, int lane, int64_t stop_at) {
  EnvState& first = envs_[static_cast<std::size_t>(env_id)];
  if (first.split == nullptr) return RunRun(env_id, lane, stop_at);
  if (!PostJob(first)) {
    const bool step = first.job == JobKind::kStep;
    ring_.FinishRow(RunJob(env_id, lane));
    return {step ? 1 : 0, 1};
  }
  // The envs posted by this run, in order. One run per thread at a time: RunJobs never nests.
  thread_local std::vector<int> posted;
  posted.clear();
  posted.push_back(env_id);
  // At most a batch: an async batch is written as soon as its rows are, not after more envs'.
  const auto max_posted = static_cast<std::size_t>(ring_.batch_size());
  int unposted = -1;  // a queued env that posted nothing: run after the posted ones
  int id;
  while (posted.size() < max_posted && queue_.TryPop(lane, &id)) {
    if (!PostJob(envs_[static_cast<std::size_t>(id)])) {
      unposted = id;
      break;
    }
    posted.push_back(id);
  }
  // Every posted job must be finished below, whatever Kick and AwaitPosted do: a failure of the
  // hand-off is the posted job's own (its Reset/Step reports it).
  try {
    for (int e : posted) envs_[static_cast<std::size_t>(e)].split->Kick();
    // Wait for the last posted first: a worker runs its requests in turn, so the earlier ones are
    // then mostly done, and the thread sleeps about once per run rather than once per env.
    envs_[static_cast<std::size_t>(posted.back())].split->AwaitPosted();
  } catch (const std::exception&) {
  }
  int steps = 0;
  for (int e : posted) {
    steps += envs_[static_cast<std::size_t>(e)].job == JobKind::kStep ? 1 : 0;
    ring_.FinishRow(RunJob(e, lane));
  }
  if (unposted >= 0) {
    steps += envs_[static_cast<std::size_t>(unposted)].job == JobKind::kStep ? 1 : 0;
    ring_.FinishRow(RunJob(unposted, lane));
  }
  return {steps, 1};  // the posted jobs overlap: timed as one job
}

OutputBlock* DefaultScheduler::RunJob(int env_id, int lane) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (s.lane != lane) s.lane = lane;  // the sender reads this line: written only when it changes
  // A split-phase env's reset is collected from elsewhere: it never pauses.
  const PauseSignal* pause = s.split != nullptr ? nullptr : t_pause_signal;
  if (!runner_.ResetDue(s)) {
    // Every 256th step of a thread is timed, for the lanes' affinity (StepGauge).
    static thread_local unsigned t_steps = 0;
    const bool timed = (t_steps++ & 255u) == 0;
    int64_t nanos = -1;  // stays so when the step raised
    const JobRunner::Result ran = runner_.Run(env_id, false, pause, timed ? &nanos : nullptr);
    if (nanos >= 0) queue_.SetAffinity(step_gauge_.Sample(nanos));
    return ran.block;
  }
  // With the lanes' affinity on (LongResetRule's only case): timed (two clock reads per reset; not
  // a reset run in parts), and counted while a worker runs it. Off, neither (a cheap env's reset is
  // ~50 ns).
  const bool track = queue_.affinity();
  const bool worker = track && lane != kCallerLane;
  const bool timed = track && !s.resuming;
  if (worker) workers_in_reset_.fetch_add(1, std::memory_order_relaxed);
  const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const JobRunner::Result ran = runner_.Run(env_id, true, pause, nullptr);
  if (timed && !ran.paused) {
    s.reset_nanos =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
  }
  if (worker) workers_in_reset_.fetch_sub(1, std::memory_order_relaxed);
  if (ran.paused) {
    resets_paused_.fetch_add(1, std::memory_order_relaxed);
    // Goes on on a worker; the last touch of s here, since a worker may run it once it is queued.
    PushToWorker(env_id);
  }
  return ran.block;
}

bool DefaultScheduler::RunUntilRows(const OutputBlock& block, int rows) {
  while (block.rows_done.load(std::memory_order_acquire) < rows) {
    if (closed_.load()) {
      // The pool's Close waits for the API lock (held by our caller) before it stops the threads,
      // and one of them may still be writing a row of this block: stop them here.
      Stop();
      return false;
    }
    if (!workers_->RunOne(kCallerLane)) std::this_thread::yield();
  }
  return true;
}

Scheduler::Outcome DefaultScheduler::WaitForBatch(const OutputBlock& block, int rows, const Wait& wait) {
  const bool forever = wait.forever;
  const bool polled = wait.poll_s > 0;
  const bool ordered = ring_.ordered();
  // While it waits, the caller runs queued jobs itself rather than sleep: in sync mode it is one of
  // the stepping threads; in async mode its core would otherwise idle, and a job it runs still
  // takes its row in finishing order. With a deadline it only waits (in async mode), so a long
  // step cannot hold it past the deadline. With poll_s it runs only jobs known to be quick, so that
  // it returns within about poll_s; until they are, the stand-in runs them.
  const bool may_help = ordered || forever;
  bool help = may_help && (!polled || quick_.quick());
  auto ready = [&] {
    return block.rows_done.load(std::memory_order_acquire) >= rows || closed_.load() || (help && !queue_.EmptyApprox());
  };
  int64_t slice_end = 0;  // poll_s: when the caller, running jobs, returns (coarse clock)
  // Async: a long reset the caller runs stops halfway once this batch is complete, to go on on a
  // worker (RunJob), rather than hold the batch, and the workers waiting for the next actions,
  // until it ends.
  const BatchComplete batch_complete(block, rows);
  const PauseScope pause_scope(ordered ? nullptr : &batch_complete);
  while (block.rows_done.load(std::memory_order_acquire) < rows) {
    if (closed_.load(std::memory_order_relaxed)) return Outcome::kClosed;
    int env_id;
    bool own = false;
    if (help && queue_.TryPop(kCallerLane, &env_id, &own)) {
      if (own && !ordered && HandOffLongReset(env_id)) continue;
      if (!polled) {
        RunJobs(env_id, kCallerLane);
        continue;
      }
      JobClock& clock = JobClock::ThisThread();
      const int64_t start = clock.Start();
      if (slice_end == 0) slice_end = start + static_cast<int64_t>(wait.poll_s * 1e9);
      // A run of jobs (RunJobs) is timed as a whole, against as many slow jobs as ran one after
      // another: it holds the caller as long. A run of queued jobs (RunRun) ends with the slice.
      const Ran ran = RunJobs(env_id, kCallerLane, slice_end);
      const int64_t end = CoarseNanos();
      if (clock.Slow(start, end, ran.serial)) {
        quick_.CallerRanSlow();
        help = false;
      }
      if (end >= slice_end && block.rows_done.load(std::memory_order_acquire) < rows) return Outcome::kPolled;
      continue;
    }
    if (polled && may_help && !help && !queue_.EmptyApprox()) stand_in_.Wake();
    // The batch is finishing on other threads: spin a little before sleeping on it.
    if (BatchRing::SpinUntil(ready)) continue;
    if (!polled) {
      if (forever) {
        ring_.Wait(ready);
      } else if (!ring_.WaitUntil(wait.deadline, ready)) {
        return Outcome::kTimedOut;
      }
      continue;
    }
    auto until = std::chrono::steady_clock::now() + Seconds(wait.poll_s);
    if (!forever) until = std::min(until, wait.deadline);
    if (!ring_.WaitUntil(until, ready))
      return !forever && until == wait.deadline ? Outcome::kTimedOut : Outcome::kPolled;
    help = may_help && quick_.quick();
  }
  return Outcome::kReady;
}

}  // namespace pp
