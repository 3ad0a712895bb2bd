// A bounded lock-free multi-producer multi-consumer queue of jobs: the ids of the envs to run (Vyukov's design).
// Every env has at most one job in flight, so a capacity of num_envs can never overflow.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

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
  bool TryPush(int value) {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      const std::size_t seq = cell.sequence.load(std::memory_order_acquire);
      const auto diff = static_cast<std::ptrdiff_t>(seq) - static_cast<std::ptrdiff_t>(pos);
      if (diff == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          cell.value = value;
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

  // A hint only: exact when no push or pop runs concurrently.
  bool EmptyApprox() const { return head_.load(std::memory_order_acquire) >= tail_.load(std::memory_order_acquire); }

 private:
  struct Cell {
    std::atomic<std::size_t> sequence;
    int value;
  };
  static constexpr std::size_t kCacheLine = 64;

  std::unique_ptr<Cell[]> cells_;
  std::size_t mask_ = 0;
  alignas(kCacheLine) std::atomic<std::size_t> head_{0};
  alignas(kCacheLine) std::atomic<std::size_t> tail_{0};
};

}  // namespace pp
