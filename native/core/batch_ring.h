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

  // The row of an env that has its result: its `assigned` index in sync mode, the next index in
  // finishing order in async mode. Called on the thread that ran the env.
  RowRef Claim(int64_t assigned) {
    // acq_rel: the claim chain orders this thread's read of ring_ after the PopFront that refilled
    // the slot (an env sent after that PopFront claimed an earlier index with a release).
    const int64_t index = ordered_ ? assigned : write_index_.fetch_add(1, std::memory_order_acq_rel);
    return RowRef{ring_[static_cast<std::size_t>((index / batch_size_) % static_cast<int64_t>(ring_.size()))],
                  static_cast<int>(index % batch_size_)};
  }

  // Counts `rows` finished rows of `block`; wakes the receiver when that completes the block.
  void FinishRow(OutputBlock* block, int rows = 1) {
    if (block->rows_done.fetch_add(rows, std::memory_order_acq_rel) + rows == batch_size_) {
      std::lock_guard<std::mutex> lock(ready_mu_);
      ready_cv_.notify_all();
    }
  }

  // The block the receiver gets next, and whether all its rows are written.
  OutputBlock* front() const { return ring_[read_slot_]; }
  bool FrontComplete() const { return RowsLeft(front()) == 0; }
  int RowsLeft(const OutputBlock* block) const {
    const int done = block->rows_done.load(std::memory_order_acquire);
    return done >= batch_size_ ? 0 : batch_size_ - done;
  }
  // Hands the (complete) front block to the caller, who gives it back with BlockFreeList::Release,
  // and puts a fresh one in its place.
  OutputBlock* PopFront() {
    OutputBlock* block = ring_[read_slot_];
    ring_[read_slot_] = free_list_->Acquire();
    if (++read_slot_ == ring_.size()) read_slot_ = 0;
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
  std::shared_ptr<BlockFreeList> free_list_;
  const int batch_size_;
  const bool ordered_;
  std::vector<OutputBlock*> ring_;
  // Async: claimed by the threads running envs, once per env: on a cache line of its own, apart
  // from the members read on every claim (ring_, batch_size_) and the receiver's (read_slot_).
  alignas(64) std::atomic<int64_t> write_index_{0};
  char write_index_pad_[64 - sizeof(std::atomic<int64_t>)] = {};
  int64_t send_index_ = 0;     // sync: assigned at send
  std::size_t read_slot_ = 0;  // the ring slot of the next block to hand off
  std::mutex ready_mu_;
  std::condition_variable ready_cv_;
};

}  // namespace pp
