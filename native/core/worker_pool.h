// A fixed set of worker threads that run jobs popped from LaneQueues (each worker its own lane
// first), optionally pinned.
// Idle workers spin briefly, then sleep until woken; the caller can help by running jobs itself.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "job_queue.h"
#include "spin.h"

namespace pp {

class WorkerPool {
 public:
  // Runs the job of env `env_id`, popped by a thread whose lane is `lane`.
  using Job = std::function<void(int env_id, int lane)>;

  // `affinity_offset` < 0: no pinning; else worker i is pinned to CPU (offset + i) % num_cpus.
  // Worker i's lane is first_lane + i.
  WorkerPool(int num_threads, int affinity_offset, LaneQueues* queue, int first_lane, Job run_job)
      : queue_(queue), run_job_(std::move(run_job)) {
    const int num_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int i = 0; i < num_threads; ++i) {
      threads_.emplace_back([this, lane = first_lane + i] { Loop(lane); });
      if (affinity_offset >= 0) Pin(threads_.back(), (affinity_offset + i) % num_cpus);
    }
  }
  ~WorkerPool() { Stop(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int num_threads() const { return static_cast<int>(threads_.size()); }

  // Wake up to `n` sleeping workers (jobs were pushed). Cheap when nobody sleeps.
  void Wake(int n) {
    if (n <= 0) return;
    // Pairs with the sleeper's increment: both are read-modify-writes of sleepers_, so one reads
    // the other's write. Either this reads the sleeper's count (and wakes it), or the sleeper's
    // increment reads this one's, which releases the pushed job to the sleeper's re-check of the
    // queue. (A seq_cst fence and a load do the same, but ThreadSanitizer does not model fences.)
    if (sleepers_.fetch_add(0, std::memory_order_acq_rel) == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    wake_tokens_ = std::min(sleepers_.load(std::memory_order_relaxed), wake_tokens_ + n);
    if (wake_tokens_ >= sleepers_.load(std::memory_order_relaxed)) {
      cv_.notify_all();
    } else {
      for (int i = 0; i < n; ++i) cv_.notify_one();
    }
  }

  // Run one queued job on the calling thread, whose lane is `lane`. Returns false when the queue
  // was empty.
  bool RunOne(int lane) {
    int id;
    if (!queue_->TryPop(lane, &id)) return false;
    run_job_(id, lane);
    return true;
  }

  // Joins every worker; jobs still queued are not run.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      stop_ = true;
      stop_flag_.store(true, std::memory_order_relaxed);
      cv_.notify_all();
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  // Spinning keeps hand-off latency low between back-to-back steps, but on a machine with few
  // cores a spinning worker steals time from the Python thread, so the spin is kept short.
  static constexpr int kSpinIterations = 256;

  void Loop(int lane) {
    for (;;) {
      int id;
      if (stopping()) return;
      if (queue_->TryPop(lane, &id)) {
        run_job_(id, lane);
        continue;
      }
      bool found = false;
      for (int i = 0; i < kSpinIterations && !stopping(); ++i) {
        if (!queue_->EmptyApprox()) {
          found = true;
          break;
        }
        CpuRelax();
      }
      if (found) continue;
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1, std::memory_order_seq_cst);
      cv_.wait(lock, [this] { return stop_ || wake_tokens_ > 0 || !queue_->EmptyApprox(); });
      sleepers_.fetch_sub(1, std::memory_order_relaxed);
      if (wake_tokens_ > 0) --wake_tokens_;
      if (stop_) return;
    }
  }

  bool stopping() const { return stop_flag_.load(std::memory_order_relaxed); }

  static void Pin(std::thread& t, int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(t.native_handle(), sizeof(set), &set);
  }

  LaneQueues* queue_;
  Job run_job_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> stop_flag_{false};
  int wake_tokens_ = 0;
  std::atomic<int> sleepers_{0};
};

}  // namespace pp
