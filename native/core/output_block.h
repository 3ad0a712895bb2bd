// Preallocated output storage for one batch, and the free list that recycles it.
// A block is handed to NumPy without copying and comes back here when Python drops its arrays.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "dtype.h"

namespace pp {

// One array of a block: `capacity` rows of `shape`.
struct BlockField {
  std::string name;
  Dtype dtype;
  std::vector<int> shape;  // one row
  bool per_player = false;
  std::size_t row_bytes = 0;
  std::size_t capacity = 0;  // rows
  std::size_t offset = 0;    // bytes from the block's start
};

class BlockLayout {
 public:
  // Aligning each array to a cache line keeps two workers writing neighbouring fields apart.
  static constexpr std::size_t kAlignment = 64;

  int Add(std::string name, Dtype dtype, std::vector<int> shape, std::size_t row_bytes, std::size_t capacity,
          bool per_player) {
    BlockField f{std::move(name), dtype, std::move(shape), per_player, row_bytes, capacity, total_bytes_};
    total_bytes_ += (row_bytes * capacity + kAlignment - 1) / kAlignment * kAlignment;
    fields_.push_back(std::move(f));
    return static_cast<int>(fields_.size()) - 1;
  }
  const std::vector<BlockField>& fields() const { return fields_; }
  std::size_t total_bytes() const { return total_bytes_; }

 private:
  std::vector<BlockField> fields_;
  std::size_t total_bytes_ = 0;
};

class BlockFreeList;

class OutputBlock {
 public:
  explicit OutputBlock(const BlockLayout& layout) {
    const std::size_t bytes = std::max<std::size_t>(layout.total_bytes(), BlockLayout::kAlignment);
    data_ = static_cast<std::byte*>(std::aligned_alloc(BlockLayout::kAlignment, bytes));
    if (data_ == nullptr) throw std::bad_alloc();
    for (const BlockField& f : layout.fields()) fields_.push_back(data_ + f.offset);
  }
  ~OutputBlock() { std::free(data_); }
  OutputBlock(const OutputBlock&) = delete;
  OutputBlock& operator=(const OutputBlock&) = delete;

  std::byte* field(int index) const { return fields_[static_cast<std::size_t>(index)]; }

  // The ring's claim word of this block (BatchRing::Claim, async mode): its block number (high 32
  // bits) and the rows claimed so far (low 32); kNotInRing (more rows than any batch) while the
  // block is not in the ring, so that a claimer holding a stale pointer to it never claims a row
  // there. Beside rows_done, on a cache line of their own: every stepping thread updates both once
  // per env and the receiver polls rows_done, while data_ and fields_ above are read on every row
  // write and never change.
  static constexpr uint64_t kNotInRing = uint64_t{1} << 31;
  alignas(64) std::atomic<uint64_t> claim_word{kNotInRing};
  // Rows written so far; the block is complete at batch_size.
  std::atomic<int> rows_done{0};
  // Per-player rows claimed so far.
  std::atomic<int> player_rows{0};

  // Exceptions thrown by envs while writing this block: (env_id, message), kept in the order of the
  // envs' rows (`row`), not in the order they failed, which depends on the threads' timing: every
  // reader (an EnvError's env_ids, XLA's message, the C++ API) then sees one order. Rare, so a mutex
  // and an insertion.
  void AddError(int row, int env_id, std::string message) {
    std::lock_guard<std::mutex> lock(errors_mu_);
    const auto at = std::upper_bound(error_rows_.begin(), error_rows_.end(), row);
    errors_.emplace(errors_.begin() + (at - error_rows_.begin()), env_id, std::move(message));
    error_rows_.insert(at, row);
  }
  const std::vector<std::pair<int, std::string>>& errors() const { return errors_; }

  void Clear() {
    claim_word.store(kNotInRing, std::memory_order_relaxed);
    rows_done.store(0, std::memory_order_relaxed);
    player_rows.store(0, std::memory_order_relaxed);
    errors_.clear();
    error_rows_.clear();
  }

 private:
  friend class BlockFreeList;
  std::byte* data_ = nullptr;
  std::vector<std::byte*> fields_;
  std::mutex errors_mu_;
  std::vector<std::pair<int, std::string>> errors_;
  std::vector<int> error_rows_;          // errors_[i]'s row, ascending
  std::shared_ptr<BlockFreeList> home_;  // set while the block is out of the free list
};

// Owns idle blocks. Acquire() reuses one or allocates; Release() takes one back. A block released
// after its pool closed still finds its free list (blocks keep it alive while they are out).
class BlockFreeList : public std::enable_shared_from_this<BlockFreeList> {
 public:
  explicit BlockFreeList(BlockLayout layout) : layout_(std::move(layout)) {}

  const BlockLayout& layout() const { return layout_; }

  OutputBlock* Acquire() {
    std::unique_ptr<OutputBlock> block;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        block = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!block) {
      block = std::make_unique<OutputBlock>(layout_);
      allocated_.fetch_add(1, std::memory_order_relaxed);
    }
    block->Clear();
    block->home_ = shared_from_this();
    return block.release();
  }

  // Returns `block` (from Acquire) to its free list.
  static void Release(OutputBlock* block) {
    std::shared_ptr<BlockFreeList> home = std::move(block->home_);
    std::lock_guard<std::mutex> lock(home->mu_);
    home->free_.emplace_back(block);
  }

  // Blocks ever allocated: stays flat in steady state.
  int allocated() const { return allocated_.load(std::memory_order_relaxed); }
  int free_count() {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int>(free_.size());
  }

 private:
  BlockLayout layout_;
  std::mutex mu_;
  std::vector<std::unique_ptr<OutputBlock>> free_;
  std::atomic<int> allocated_{0};
};

}  // namespace pp
