// Timing of the pool's jobs against kSlowJob, for the policy that decides whether a caller that
// must return now and then (poll_s: the Python main thread, for Ctrl-C) may run jobs itself.
#pragma once

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>

namespace pp {

// A job that holds its thread longer than this is slow: a caller with poll_s stops running jobs
// after one. Well under Ctrl-C's 100 ms budget, and long enough that a job of a fast env (MuJoCo,
// Atari: under 1 ms) is never taken for slow on a busy machine: its wall time, less the time its
// thread waited to run (preempted), is what counts (JobClock).
inline constexpr std::chrono::milliseconds kSlowJob{10};

// Times jobs against kSlowJob: the coarse clock costs a fraction of steady_clock's read (the
// per-step cost that matters here), and its resolution (a scheduler tick, 1-10 ms) is added to the
// threshold, so a quick job that straddles a tick is never taken for slow.
inline int64_t CoarseNanos() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

inline int64_t SlowJobNanos() {
  static const int64_t nanos = [] {
    timespec res;
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    return std::chrono::nanoseconds(kSlowJob).count() + static_cast<int64_t>(res.tv_sec) * 1'000'000'000 + res.tv_nsec;
  }();
  return nanos;
}

// One thread's timing of its jobs. A job over SlowJobNanos() of wall time is slow only if its
// thread held on to it that long: the time the thread waited to run (preempted on a busy
// machine: the host's other work, a neighbour's burst) is not the job's, time it ran or blocked is.
// The kernel counts that wait per thread (the run delay in /proc/thread-self/schedstat). Reading it
// costs a system call, so Start reads it at most once per tick of the coarse clock, and Slow again
// only when a job's wall time is over the threshold. Start's reading predates the job by at most a
// tick, so at most a tick of earlier waiting is taken off the job's time. Where the file cannot be
// read, no waiting is taken off (a preempted job counts as slow, as it did before).
class JobClock {
 public:
  JobClock() : fd_(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~JobClock() {
    if (fd_ >= 0) close(fd_);
  }
  JobClock(const JobClock&) = delete;
  JobClock& operator=(const JobClock&) = delete;

  // The calling thread's clock.
  static JobClock& ThisThread() {
    static thread_local JobClock clock;
    return clock;
  }

  // Before a job: the coarse time now (the job's start).
  int64_t Start() {
    const int64_t now = CoarseNanos();
    if (now != mark_wall_) {
      mark_wall_ = now;
      mark_delay_ = RunDelay();
    }
    return now;
  }

  // Whether the job that started at `start` (Start) and ended at `end` (coarse time) was slow; for
  // `jobs` jobs run one after another, whether they took more than that many slow jobs' time.
  bool Slow(int64_t start, int64_t end, int jobs = 1) const {
    const int64_t limit = SlowJobNanos() + (jobs - 1) * std::chrono::nanoseconds(kSlowJob).count();
    if (end - start <= limit) return false;
    return end - start - (RunDelay() - mark_delay_) > limit;
  }

 private:
  // Nanoseconds this thread has waited on a run queue since it started, or 0 if unknown.
  int64_t RunDelay() const {
    if (fd_ < 0) return 0;
    char buf[96];
    const ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = '\0';
    // "<ns on the CPU> <ns waiting on a run queue> <time slices>"
    char* end = nullptr;
    std::strtoll(buf, &end, 10);
    if (end == buf) return 0;
    return std::strtoll(end, nullptr, 10);
  }

  int fd_;
  int64_t mark_wall_ = -1;  // the coarse time of the last run-delay reading
  int64_t mark_delay_ = 0;  // that reading
};

}  // namespace pp
