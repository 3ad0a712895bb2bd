// Tests of WorkerPool: every job runs exactly once, jobs run in parallel, RunOne on the caller,
// sleeping workers wake on Wake(), Stop() with jobs still queued, and pinning.
#include "core/worker_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Polls `done` until it holds or `timeout` passes; the tests fail instead of hanging.
template <typename Pred>
bool WaitFor(Pred done, milliseconds timeout = milliseconds(10000)) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Runs while the test body runs: the queue, the per-id counters and the threads that ran jobs.
struct Counters {
  explicit Counters(int n) : runs(static_cast<std::size_t>(n)) {
    for (auto& r : runs) r.store(0);
  }
  void Record(int id) {
    runs[static_cast<std::size_t>(id)].fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    total.fetch_add(1);
  }
  std::vector<std::atomic<int>> runs;
  std::atomic<int> total{0};
  std::mutex mu;
  std::set<std::thread::id> threads;
};

TEST(EveryJobRunsExactlyOnce) {
  constexpr int kJobs = 1024, kRounds = 100;
  pp::LaneQueues queue(kJobs, 1);
  Counters c(kJobs);
  pp::WorkerPool pool(4, -1, &queue, 0, [&](int id, int) { c.Record(id); });
  CHECK_EQ(pool.num_threads(), 4);
  for (int round = 1; round <= kRounds; ++round) {
    for (int id = 0; id < kJobs; ++id) {
      if (!CHECK(queue.TryPush(0, id))) return;
    }
    pool.Wake(kJobs);
    if (!CHECK(WaitFor([&] { return c.total.load() == round * kJobs; }))) {
      std::fprintf(stderr, "round %d: %d of %d jobs ran\n", round, c.total.load(), round * kJobs);
      return;
    }
    for (int id = 0; id < kJobs; ++id) {
      if (!CHECK_EQ(c.runs[static_cast<std::size_t>(id)].load(), round)) return;
    }
  }
  // A few more moments: no job runs twice late.
  std::this_thread::sleep_for(milliseconds(20));
  CHECK_EQ(c.total.load(), kRounds * kJobs);
  CHECK(queue.EmptyApprox());
}

// Four jobs that can only finish when all four run at the same time: proves the pool runs jobs on
// several threads (sleeping in a job does not need a core each).
TEST(JobsRunInParallel) {
  constexpr int kThreads = 4;
  pp::LaneQueues queue(kThreads, 1);
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::atomic<int> timed_out{0};
  Counters c(kThreads);
  pp::WorkerPool pool(kThreads, -1, &queue, 0, [&](int id, int) {
    std::unique_lock<std::mutex> lock(mu);
    ++arrived;
    cv.notify_all();
    if (!cv.wait_for(lock, std::chrono::seconds(10), [&] { return arrived == kThreads; })) timed_out.fetch_add(1);
    lock.unlock();
    c.Record(id);
  });
  for (int id = 0; id < kThreads; ++id) queue.TryPush(0, id);
  pool.Wake(kThreads);
  CHECK(WaitFor([&] { return c.total.load() == kThreads; }, milliseconds(20000)));
  CHECK_EQ(timed_out.load(), 0);
  CHECK_EQ(c.threads.size(), static_cast<std::size_t>(kThreads));
}

TEST(RunOneRunsOnTheCaller) {
  pp::LaneQueues queue(8, 1);
  Counters c(8);
  pp::WorkerPool pool(0, -1, &queue, 0, [&](int id, int) { c.Record(id); });  // no workers: only the caller runs jobs
  CHECK_EQ(pool.num_threads(), 0);
  CHECK(!pool.RunOne(0));  // empty queue
  for (int id = 0; id < 5; ++id) queue.TryPush(0, id);
  pool.Wake(5);  // nobody to wake: must not block
  for (int k = 0; k < 5; ++k) CHECK(pool.RunOne(0));
  CHECK(!pool.RunOne(0));
  CHECK_EQ(c.total.load(), 5);
  for (int id = 0; id < 5; ++id) CHECK_EQ(c.runs[static_cast<std::size_t>(id)].load(), 1);
  CHECK_EQ(c.threads.size(), 1u);
  CHECK(c.threads.count(std::this_thread::get_id()) == 1);

  // With workers present, RunOne still runs a job on the caller when it gets one.
  pp::LaneQueues queue2(4, 1);
  std::atomic<bool> ran_on_caller{false};
  const auto caller = std::this_thread::get_id();
  pp::WorkerPool busy(1, -1, &queue2, 0, [&](int, int) {
    if (std::this_thread::get_id() == caller) ran_on_caller.store(true);
  });
  std::this_thread::sleep_for(milliseconds(50));  // the worker goes to sleep; nothing wakes it
  queue2.TryPush(0, 0);
  CHECK(busy.RunOne(0));
  CHECK(ran_on_caller.load());
  CHECK(!busy.RunOne(0));
}

// Workers spin briefly and then sleep; a push followed by Wake(1) must get the job done without
// the caller's help. Repeated, to give a lost wake-up many chances to show.
TEST(WakeAfterSleep) {
  pp::LaneQueues queue(16, 1);
  Counters c(16);
  pp::WorkerPool pool(2, -1, &queue, 0, [&](int id, int) { c.Record(id); });
  std::this_thread::sleep_for(milliseconds(100));  // long past the spin: both workers asleep
  for (int round = 1; round <= 40; ++round) {
    queue.TryPush(0, round % 16);
    pool.Wake(1);
    if (!CHECK(WaitFor([&] { return c.total.load() == round; }, milliseconds(5000)))) {
      std::fprintf(stderr, "round %d: job not run after Wake(1): lost wake-up\n", round);
      return;
    }
    // Alternate between catching workers mid-spin and fully asleep.
    std::this_thread::sleep_for(round % 2 ? milliseconds(20) : std::chrono::microseconds(50));
  }
  // Two jobs, one Wake(1): the woken worker drains both.
  std::this_thread::sleep_for(milliseconds(50));
  queue.TryPush(0, 1);
  queue.TryPush(0, 2);
  pool.Wake(1);
  CHECK(WaitFor([&] { return c.total.load() == 42; }, milliseconds(5000)));
  CHECK(c.threads.count(std::this_thread::get_id()) == 0);
}

TEST(StopJoinsWithJobsStillQueued) {
  constexpr int kJobs = 100;
  pp::LaneQueues queue(128, 1);
  std::mutex mu;
  std::condition_variable cv;
  bool gate_open = false;
  std::atomic<int> started{0};
  std::atomic<int> finished{0};
  auto pool = std::make_unique<pp::WorkerPool>(2, -1, &queue, 0, [&](int, int) {
    started.fetch_add(1);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(20), [&] { return gate_open; });
    finished.fetch_add(1);
  });
  auto open_gate = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      gate_open = true;
    }
    cv.notify_all();
  };
  for (int id = 0; id < kJobs; ++id) queue.TryPush(0, id);
  pool->Wake(2);
  // Both workers are inside a job; 98 jobs remain queued.
  if (!CHECK(WaitFor([&] { return started.load() == 2; }))) {
    open_gate();
    return;
  }

  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    pool->Stop();
    stopped.store(true);
  });
  std::this_thread::sleep_for(milliseconds(100));
  CHECK(!stopped.load());  // Stop waits for the running jobs (it joins)
  open_gate();
  const bool returned = WaitFor([&] { return stopped.load(); });
  CHECK(returned);
  if (!returned) std::abort();  // joining `stopper` would hang
  stopper.join();
  CHECK_EQ(finished.load(), started.load());
  CHECK_LT(started.load(), kJobs);  // the queued jobs were not drained by Stop
  CHECK_EQ(pool->num_threads(), 0);
  // No job was lost or run twice: the ones not run are still in the queue.
  int left = 0, id;
  while (queue.TryPop(0, &id)) ++left;
  CHECK_EQ(left + started.load(), kJobs);
  pool->Stop();  // idempotent
  CHECK(!pool->RunOne(0));
  pool.reset();  // the destructor after Stop
}

TEST(StopWithSleepingWorkersAndDestructor) {
  pp::LaneQueues queue(4, 1);
  {
    pp::WorkerPool pool(3, -1, &queue, 0, [](int, int) {});
    std::this_thread::sleep_for(milliseconds(50));
    const auto start = Clock::now();
    pool.Stop();
    CHECK_LT(Clock::now() - start, std::chrono::seconds(5));
  }
  {
    pp::WorkerPool pool(3, -1, &queue, 0, [](int, int) {});  // destroyed right away, without Stop()
  }
}

// Pinning with an offset (also one larger than the CPU count) runs jobs; when the process may use
// every CPU, each worker ends up pinned to exactly one.
TEST(PinningWithAffinityOffset) {
  const int num_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  bool all_allowed = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;
  for (int cpu = 0; all_allowed && cpu < num_cpus; ++cpu) all_allowed = CPU_ISSET(cpu, &allowed);

  for (int offset : {0, 1, 1000}) {
    constexpr int kJobs = 256;
    pp::LaneQueues queue(kJobs, 1);
    Counters c(kJobs);
    std::atomic<int> not_single_cpu{0};
    pp::WorkerPool pool(3, offset, &queue, 0, [&](int id, int) {
      cpu_set_t set;
      CPU_ZERO(&set);
      if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1) {
        not_single_cpu.fetch_add(1);
      }
      c.Record(id);
    });
    for (int id = 0; id < kJobs; ++id) queue.TryPush(0, id);
    pool.Wake(kJobs);
    CHECK(WaitFor([&] { return c.total.load() == kJobs; }));
    for (int id = 0; id < kJobs; ++id) CHECK_EQ(c.runs[static_cast<std::size_t>(id)].load(), 1);
    if (all_allowed) CHECK_EQ(not_single_cpu.load(), 0);
  }
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
