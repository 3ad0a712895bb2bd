// A bounded lock-free multi-producer multi-consumer queue of jobs: the ids of the envs to run (Vyukov's design).
// Every env has at most one job in flight, so a capacity of num_envs can never overflow. LaneQueues:
// one such queue per stepping thread, so that an env's jobs stay on one core.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

namespace pp {

class JobQueue {
 public:
  explicit JobQueue(std::size_t min_capacity) {
    std::size_t capacity = 2;
    while (capacity < min_capacity) capacity <<= 1;
    mask_ = capacity - 1;
    cells_ = std::make_unique<Cell[]>(capacity);
    for (std::size_t i = 0; i < capacity; ++i) cells_[i].sequence.store(i, std::memory_order_relaxed);
  }

  std::size_t capacity() const { return mask_ + 1; }

  // Returns false when full, or when the cell to write still awaits a consumer that claimed its
  // previous item but has not released it yet (so callers that know the queue cannot be full
  // must retry, not drop the value).
  // `stamp`: any number kept with the item (LaneQueues: when it was queued), read by HeadStamp.
  bool TryPush(int value, int64_t stamp = 0) {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      const std::size_t seq = cell.sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = value;
          cell.stamp.store(stamp, std::memory_order_relaxed);
          cell.sequence.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (diff < 0) {
        return false;
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  // Pops up to `max` items at once into `out` (in queue order) with one claim of the queue's head;
  // returns how many (0 when empty). Only items already published are taken: a run stops at the
  // first cell a producer has not finished writing.
  int TryPopMany(int* out, int max) {
    std::size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      int count = 0;
      std::ptrdiff_t first_diff = 0;  // the head cell's sequence against this lap's, when not ready
      while (count < max) {
        const std::size_t want = pos + static_cast<std::size_t>(count) + 1;
        const std::size_t seq = cells_[(want - 1) & mask_].sequence.load(std::memory_order_acquire);
        if (seq != want) {
          if (count == 0) first_diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(want);
          break;
        }
        ++count;
      }
      if (count == 0) {
        if (first_diff < 0) return 0;                 // empty
        pos = head_.load(std::memory_order_relaxed);  // another consumer took it: look again
        continue;
      }
      // Whoever moves the head from pos owns the cells [pos, pos + count): every one of them was
      // published for this lap (its sequence read above), and none can be taken by another
      // consumer while the head stays at pos.
      if (head_.compare_exchange_weak(pos, pos + static_cast<std::size_t>(count), std::memory_order_relaxed)) {
        for (int i = 0; i < count; ++i) {
          Cell& cell = cells_[(pos + static_cast<std::size_t>(i)) & mask_];
          out[i] = cell.value;
          cell.sequence.store(pos + static_cast<std::size_t>(i) + mask_ + 1, std::memory_order_release);
        }
        return count;
      }
    }
  }

  // Returns false when empty.
  bool TryPop(int* value) { return TryPopMany(value, 1) == 1; }

  // How many items are queued: a hint only, exact when no push or pop runs concurrently.
  std::size_t SizeApprox() const {
    const std::size_t head = head_.load(std::memory_order_acquire);
    const std::size_t tail = tail_.load(std::memory_order_acquire);
    return tail > head ? tail - head : 0;
  }

  // The stamp of the item at the head, or INT64_MAX when there is none: a hint only, as another
  // consumer may take that item meanwhile.
  int64_t HeadStamp() const {
    const std::size_t pos = head_.load(std::memory_order_acquire);
    const Cell& cell = cells_[pos & mask_];
    if (cell.sequence.load(std::memory_order_acquire) != pos + 1) return INT64_MAX;
    return cell.stamp.load(std::memory_order_relaxed);
  }

  // A hint only: exact when no push or pop runs concurrently.
  bool EmptyApprox() const { return head_.load(std::memory_order_acquire) >= tail_.load(std::memory_order_acquire); }

 private:
  struct Cell {
    std::atomic<std::size_t> sequence;
    int value;
    std::atomic<int64_t> stamp{0};  // atomic: HeadStamp may read it while a producer writes it
  };
  static constexpr std::size_t kCacheLine = 64;

  std::unique_ptr<Cell[]> cells_;
  std::size_t mask_ = 0;
  alignas(kCacheLine) std::atomic<std::size_t> head_{0};
  alignas(kCacheLine) std::atomic<std::size_t> tail_{0};
};

// One JobQueue per lane, a lane being a stepping thread's own queue (a pool's: lane 0 the caller's
// and its stand-in's, then one per worker). An env's job is pushed to the lane of the thread that
// ran its last job, whose core's caches hold the env's state. A thread takes its own lane's jobs
// first; another lane's oldest job when its own lane is empty (no thread idles while jobs wait), or
// when that job has waited `max_lag` longer than its own lane's oldest, so that no job waits long
// behind a slow one while other threads step newer jobs (the queue stays about first in, first out
// across lanes: in async mode quick envs still come back more often than slow ones). That look at
// the other lanes' heads is taken on every `look_every`-th pop of a thread only: their cache lines
// are written by their threads. A job taken from another lane moves its env to the taker's lane.
// The costs that decided this: BENCHMARKS.md, "per-thread job lanes on main".
class LaneQueues {
 public:
  // `lanes` >= 1 queues of min_capacity_each items each.
  LaneQueues(std::size_t min_capacity_each, int lanes,
             std::chrono::nanoseconds max_lag = std::chrono::microseconds(100), int look_every = 8)
      : max_lag_(max_lag.count()), look_every_(static_cast<unsigned>(std::max(1, look_every))) {
    for (int i = 0; i < std::max(1, lanes); ++i) queues_.push_back(std::make_unique<JobQueue>(min_capacity_each));
  }

  int lanes() const { return static_cast<int>(queues_.size()); }

  // As JobQueue::TryPush, into lane `lane` (taken modulo lanes(); lane 0 with affinity off).
  // `stamp`: when the item was queued (Now(); one reading may serve a whole batch of pushes: a clock
  // read is ~25 ns, a cheap env's step ~100 ns).
  bool TryPush(int lane, int value, int64_t stamp) { return queues_[Index(lane)]->TryPush(value, stamp); }
  bool TryPush(int lane, int value) { return TryPush(lane, value, Now()); }

  // With affinity off, every job goes to lane 0 and every thread takes lane 0's first: one queue,
  // first in, first out (for jobs so short that a cache miss per job costs more than the env's
  // state moving between cores: the default scheduler turns it off for steps under
  // StepGauge::kAffinityMinStep).
  // Jobs already in other lanes are still taken (a thread's lane empty, it takes the others').
  void SetAffinity(bool on) {
    if (affinity_.load(std::memory_order_relaxed) != on) affinity_.store(on, std::memory_order_relaxed);
  }
  bool affinity() const { return affinity_.load(std::memory_order_relaxed); }

  // The clock of the stamps (steady_clock, ns); 0 with one lane, where no stamp is ever compared.
  int64_t Now() const {
    if (queues_.size() == 1) return 0;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Pops up to `max` items of one lane (JobQueue::TryPopMany): `lane`'s own, unless its own is
  // empty or (on every look_every-th call of this thread) another lane's oldest item has waited
  // over max_lag longer: then the lane with the oldest item; when the chosen lane has none, the
  // first other lane that has, in turn. Returns how many; `*own` (if given) says whether they
  // were `lane`'s own.
  int TryPopMany(int lane, int* out, int max, bool* own = nullptr) {
    const std::size_t n = queues_.size();
    const std::size_t first = Index(lane);
    static thread_local unsigned t_calls = 0;
    // Every look_every-th call: another lane's oldest job, if it has waited max_lag longer than this
    // lane's oldest. (Not on every call: the other lanes' heads are cache lines their threads write.)
    if (n > 1 && ++t_calls % look_every_ == 0 && affinity()) {
      const int64_t own_head = queues_[first]->HeadStamp();
      const std::size_t oldest = OldestOther(first);
      if (oldest != first && own_head != INT64_MAX && own_head - queues_[oldest]->HeadStamp() > max_lag_) {
        const int got = queues_[oldest]->TryPopMany(out, max);
        if (got > 0) {
          if (own != nullptr) *own = false;
          return got;
        }
      }
    }
    // This lane's own (the pop itself tells whether it is empty: no extra look at its tail).
    int got = queues_[first]->TryPopMany(out, max);
    if (got > 0 || n == 1) {
      if (own != nullptr) *own = true;
      return got;
    }
    // Its own lane empty: the oldest other lane's, then the others in turn.
    const std::size_t oldest = OldestOther(first);
    if (oldest != first) {
      got = queues_[oldest]->TryPopMany(out, max);
      if (got > 0) {
        if (own != nullptr) *own = false;
        return got;
      }
    }
    for (std::size_t k = 1; k < n; ++k) {
      if ((first + k) % n == oldest) continue;  // tried just above
      got = queues_[(first + k) % n]->TryPopMany(out, max);
      if (got > 0) {
        if (own != nullptr) *own = false;
        return got;
      }
    }
    return 0;
  }

  bool TryPop(int lane, int* value, bool* own = nullptr) { return TryPopMany(lane, value, 1, own) == 1; }

  // Hints only, as JobQueue's: every lane's queued items.
  std::size_t SizeApprox() const {
    std::size_t size = 0;
    for (const auto& q : queues_) size += q->SizeApprox();
    return size;
  }
  bool EmptyApprox() const {
    for (const auto& q : queues_) {
      if (!q->EmptyApprox()) return false;
    }
    return true;
  }

 private:
  std::size_t Index(int lane) const { return affinity() ? static_cast<std::size_t>(lane) % queues_.size() : 0; }

  // The lane other than `first` whose head item is the oldest; `first` when all are empty.
  std::size_t OldestOther(std::size_t first) const {
    const std::size_t n = queues_.size();
    std::size_t oldest_lane = first;
    int64_t oldest = INT64_MAX;
    for (std::size_t k = 1; k < n; ++k) {
      const std::size_t other = (first + k) % n;
      const int64_t stamp = queues_[other]->HeadStamp();
      if (stamp < oldest) {
        oldest = stamp;
        oldest_lane = other;
      }
    }
    return oldest_lane;
  }
  int64_t max_lag_;
  unsigned look_every_;
  std::atomic<bool> affinity_{true};
  std::vector<std::unique_ptr<JobQueue>> queues_;
};

}  // namespace pp
