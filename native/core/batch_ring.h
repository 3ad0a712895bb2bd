// The batch ring: output index i is row i % batch_size of the i / batch_size-th block, indices taken
// in send order (sync) or finishing order (async), and complete blocks handed to the receiver.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "output_block.h"
#include "spin.h"

namespace pp {

// Where one env's result goes.
struct RowRef {
  OutputBlock* block = nullptr;
  int row = -1;
};

class BatchRing {
 public:
  // Blocks of `layout`, batch_size rows each. `ordered`: sync mode, indices are assigned at send.
  BatchRing(BlockLayout layout, int num_envs, int batch_size, bool ordered);
  ~BatchRing();
  BatchRing(const BatchRing&) = delete;
  BatchRing& operator=(const BatchRing&) = delete;

  const BlockLayout& layout() const { return free_list_->layout(); }
  int batch_size() const { return batch_size_; }
  bool ordered() const { return ordered_; }
  std::size_t size() const { return ring_.size(); }
  // Blocks outside the ring (ResetNow's) come from the same free list.
  OutputBlock* AcquireBlock() { return free_list_->Acquire(); }
  int blocks_allocated() const { return free_list_->allocated(); }

  // Sync mode, on the sending thread: the output index of the next env sent.
  int64_t AssignIndex() { return send_index_++; }

  // The row of an env that has its result: its `assigned` index in sync mode, the next row in
  // finishing order in async mode. Called on the thread that ran the env.
  RowRef Claim(int64_t assigned) {
    if (ordered_) {
      return RowRef{ring_[RingIndex(assigned / batch_size_)].load(std::memory_order_acquire),
                    static_cast<int>(assigned % batch_size_)};
    }
    // Async: a row of the block being filled, taken with one compare-and-swap of that block's
    // claim word (its number and rows claimed), which shares a cache line with its rows_done: the
    // claim brings the line to this core and the row's FinishRow, a few hundred ns later, mostly
    // finds it there (a ring-wide claim counter on a line of its own cost one more transfer
    // between cores per env). The number tells a block from the one its index held a lap before.
    int64_t k = write_block_.load(std::memory_order_acquire);
    for (;;) {
      OutputBlock* block = ring_[RingIndex(k)].load(std::memory_order_acquire);
      uint64_t word = block->claim_word.load(std::memory_order_acquire);
      if (static_cast<uint32_t>(word >> 32) != static_cast<uint32_t>(k)) {
        // k is stale (the block was filled and handed off since), or block k is not at its index
        // yet (the receiver has not popped the block a lap before it; the ring's size makes that
        // wait end: no env claims more than num_envs rows ahead of the first unreceived one).
        const int64_t now = write_block_.load(std::memory_order_acquire);
        if (now == k) CpuRelax();
        k = now;
        continue;
      }
      const auto claimed = static_cast<uint32_t>(word);
      if (claimed >= static_cast<uint32_t>(batch_size_)) {
        // Full: its last claimer moves write_block_ on; help it, then look again. (A block out of
        // the ring, reached through a stale pointer, counts as full; k is then stale, and the
        // exchange fails.)
        int64_t expected = k;
        write_block_.compare_exchange_strong(expected, k + 1, std::memory_order_acq_rel);
        k = write_block_.load(std::memory_order_acquire);
        continue;
      }
      if (block->claim_word.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                                  std::memory_order_acquire)) {
        if (claimed + 1 == static_cast<uint32_t>(batch_size_)) {
          int64_t expected = k;
          write_block_.compare_exchange_strong(expected, k + 1, std::memory_order_acq_rel);
        }
        return RowRef{block, static_cast<int>(claimed)};
      }
    }
  }

  // Counts `rows` finished rows of `block`; wakes the receiver when that completes the block.
  void FinishRow(OutputBlock* block, int rows = 1) {
    if (block->rows_done.fetch_add(rows, std::memory_order_acq_rel) + rows == batch_size_) {
      std::lock_guard<std::mutex> lock(ready_mu_);
      ready_cv_.notify_all();
    }
  }

  // The block the receiver gets next, and whether all its rows are written.
  OutputBlock* front() const { return ring_[read_index_].load(std::memory_order_relaxed); }
  bool FrontComplete() const { return RowsLeft(front()) == 0; }
  int RowsLeft(const OutputBlock* block) const {
    const int done = block->rows_done.load(std::memory_order_acquire);
    return done >= batch_size_ ? 0 : batch_size_ - done;
  }
  // Hands the (complete) front block to the caller, who gives it back with BlockFreeList::Release,
  // and puts a fresh one in its place.
  OutputBlock* PopFront() {
    OutputBlock* block = ring_[read_index_].load(std::memory_order_relaxed);
    ring_[read_index_].store(Fresh(read_block_ + static_cast<int64_t>(ring_.size())), std::memory_order_release);
    ++read_block_;
    if (++read_index_ == ring_.size()) read_index_ = 0;
    return block;
  }

  // Waiting for a block to complete: `ready` is checked under the wait's mutex, and FinishRow and
  // WakeAll notify under it, so no wake-up is lost.
  template <typename Ready>
  void Wait(Ready ready) {
    std::unique_lock<std::mutex> lock(ready_mu_);
    ready_cv_.wait(lock, ready);
  }
  // Returns false when `deadline` passed first.
  template <typename Ready>
  bool WaitUntil(std::chrono::steady_clock::time_point deadline, Ready ready) {
    std::unique_lock<std::mutex> lock(ready_mu_);
    return ready_cv_.wait_until(lock, deadline, ready);
  }
  // Wakes every waiter to re-check (the pool closed).
  void WakeAll() {
    std::lock_guard<std::mutex> lock(ready_mu_);
    ready_cv_.notify_all();
  }

  // Spins for up to kSpinMicros until ready() holds (core/spin.h); returns whether it did.
  template <typename Ready>
  static bool SpinUntil(Ready ready) {
    return pp::SpinUntil(std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinMicros), ready);
  }
  static constexpr int kSpinMicros = 50;

 private:
  std::size_t RingIndex(int64_t block_number) const {
    return static_cast<std::size_t>(block_number % static_cast<int64_t>(ring_.size()));
  }
  // A block from the free list, numbered: its claim word says it is block `number`, no row claimed.
  OutputBlock* Fresh(int64_t number) {
    OutputBlock* block = free_list_->Acquire();
    block->claim_word.store(static_cast<uint64_t>(static_cast<uint32_t>(number)) << 32, std::memory_order_relaxed);
    return block;
  }
  std::shared_ptr<BlockFreeList> free_list_;
  const int batch_size_;
  const bool ordered_;
  // Index i holds block number i + a multiple of the size; written by the receiver (PopFront), read
  // by the claiming threads.
  std::vector<std::atomic<OutputBlock*>> ring_;
  // Async: the number of the block being filled (Claim), read on every claim and moved on once per
  // block: on a cache line of its own, apart from the receiver's members below.
  alignas(64) std::atomic<int64_t> write_block_{0};
  char write_block_pad_[64 - sizeof(std::atomic<int64_t>)] = {};
  int64_t send_index_ = 0;      // sync: assigned at send
  std::size_t read_index_ = 0;  // the ring index of the next block to hand off
  int64_t read_block_ = 0;      // its number
  std::mutex ready_mu_;
  std::condition_variable ready_cv_;
};

}  // namespace pp
