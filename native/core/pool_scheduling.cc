// The pool's scheduling: which thread runs which job, in runs or one at a time, and the policies
// that decide it (quick streaks for a polling caller, the stand-in worker, long resets handed to a
// worker, paused resets, the lanes' affinity, guided self-scheduling). pool.cc has the API.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "job_clock.h"
#include "pool.h"

namespace pp {

bool Pool::HandOffLongReset(int env_id) {
  // A caller that starts a long job (a dm_control task's reset settles its physics for 200 steps,
  // ~1.3 ms; an Atari reset plays its no-op starts) while the batch it waits for completes holds
  // that batch until the job ends; meanwhile the workers finish every other env in flight and then
  // idle (BENCHMARKS.md, "long resets handed to a worker"). A worker that is not in a reset itself
  // takes it instead, and the caller goes on with short jobs and returns batches on time; a reset
  // whose length is not known yet, or with every worker in a reset (all envs resetting at once),
  // the caller runs.
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (!queue_.affinity() || s.reset_nanos < std::chrono::nanoseconds(kLongReset).count() || !runner_.ResetDue(s) ||
      workers_in_reset_.load(std::memory_order_relaxed) >= workers_->num_threads()) {
    return false;
  }
  // To the lane of a worker (env ids spread them); a caller whose own lane runs dry takes it back
  // (not handed over again: only its own lane's jobs are), so nothing waits on a sleeping worker.
  s.lane = kCallerLane + 1 + env_id % workers_->num_threads();
  PushJob(env_id, queue_.Now());
  workers_->Wake(1);
  return true;
}

void Pool::SampleStep(std::chrono::steady_clock::duration took) {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
  const int64_t old = step_nanos_.load(std::memory_order_relaxed);
  // A mean over about the last 8 samples (the first sample taken as it is); racing updates may
  // drop one sample: a hint.
  const int64_t mean = old == 0 ? std::max<int64_t>(ns, 1) : old + (ns - old) / 8;
  step_nanos_.store(mean, std::memory_order_relaxed);
  queue_.SetAffinity(mean >= std::chrono::nanoseconds(kAffinityMinStep).count());
}

void Pool::RunWorkerJob(int env_id, int lane) {
  if (quick_jobs_.load(std::memory_order_relaxed)) {
    RunJobs(env_id, lane);
    return;
  }
  // Resets do not count towards a quick streak: an env's reset is often much quicker than its step.
  // A run of posted jobs counts as quick only when the whole run is (a caller with poll_s runs
  // such runs whole).
  JobClock& clock = JobClock::ThisThread();
  const int64_t start = clock.Start();
  const Ran ran = RunJobs(env_id, lane);
  const int steps = ran.steps;
  if (clock.Slow(start, CoarseNanos(), ran.serial)) {
    quick_streak_.store(0, std::memory_order_relaxed);
  } else if (steps > 0 && quick_streak_.fetch_add(steps, std::memory_order_relaxed) + steps >=
                              quick_target_.load(std::memory_order_relaxed)) {
    quick_jobs_.store(true, std::memory_order_relaxed);
  }
}

bool Pool::PostJob(EnvState& s) {
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

Pool::Ran Pool::RunRun(int env_id, int lane, int64_t stop_at) {
  int ids[kMaxRun];
  ids[0] = env_id;
  int count = 1;
  // Sync mode, with enough queued for a run: the first job is timed (two steady_clock reads, ~40
  // ns) to decide on one.
  const std::size_t share =
      ring_.ordered() ? queue_.SizeApprox() / (2 * static_cast<std::size_t>(std::max(1, num_threads()))) : 0;
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
    if (i == 0 && share > 0 && std::chrono::steady_clock::now() - first_start < kCheapJob) {
      count += queue_.TryPopMany(lane, ids + 1, static_cast<int>(std::min<std::size_t>(share, kMaxRun - 1)));
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

Pool::Ran Pool::RunJobs(int env_id, int lane, int64_t stop_at) {
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
  const auto max_posted = static_cast<std::size_t>(batch_size());
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

void Pool::WakeStandIn() {
  if (!stand_in_made_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(api_mu_);
    if (closed_.load()) return;  // the caller's loop throws ClosedError next
    if (!stand_in_) {
      // In the caller's lane: it steps the caller's envs in its place.
      stand_in_ = std::make_unique<WorkerPool>(1, -1, &queue_, kCallerLane,
                                               [this](int id, int lane) { RunWorkerJob(id, lane); });
    }
    stand_in_made_.store(true, std::memory_order_release);
  }
  stand_in_->Wake(1);
}

OutputBlock* Pool::RunJob(int env_id, int lane) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (s.lane != lane) s.lane = lane;  // the sender reads this line: written only when it changes
  // A split-phase env's reset is collected from elsewhere: it never pauses.
  const PauseSignal* pause = s.split != nullptr ? nullptr : t_pause_signal;
  if (!runner_.ResetDue(s)) {
    // Every 256th step of a thread is timed, for the lanes' affinity (kAffinityMinStep).
    static thread_local unsigned t_steps = 0;
    const bool timed = (t_steps++ & 255u) == 0;
    int64_t nanos = -1;  // stays so when the step raised
    const JobRunner::Result ran = runner_.Run(env_id, false, pause, timed ? &nanos : nullptr);
    if (nanos >= 0) SampleStep(std::chrono::nanoseconds(nanos));
    return ran.block;
  }
  // With the lanes' affinity on (HandOffLongReset's only case): timed (two clock reads per reset;
  // not a reset run in parts), and counted while a worker runs it. Off, neither (a cheap env's
  // reset is ~50 ns).
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
    // Queued again, on a worker's lane (env ids spread them), to go on there; the last touch of s
    // here, since a worker may run it as soon as it is queued.
    s.lane = kCallerLane + 1 + env_id % workers_->num_threads();
    PushJob(env_id, queue_.Now());
    workers_->Wake(1);
  }
  return ran.block;
}

}  // namespace pp
