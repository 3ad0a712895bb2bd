// A received batch for C++ programs: the rows of one output block read by field name, given back
// to the pool's free list when the Batch goes out of scope (as dropping the NumPy arrays does).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtype.h"
#include "output_block.h"

namespace pp {

class Batch {
 public:
  // `block` from Pool::Recv (rows: the pool's batch_size) or Pool::ResetNow (rows: its n).
  Batch(const BlockLayout& layout, OutputBlock* block, int rows) : layout_(&layout), block_(block), rows_(rows) {}
  ~Batch() {
    if (block_ != nullptr) BlockFreeList::Release(block_);
  }
  Batch(Batch&& other) noexcept
      : layout_(other.layout_), block_(std::exchange(other.block_, nullptr)), rows_(other.rows_) {}
  Batch& operator=(Batch&& other) noexcept {
    if (this != &other) {
      if (block_ != nullptr) BlockFreeList::Release(block_);
      layout_ = other.layout_;
      block_ = std::exchange(other.block_, nullptr);
      rows_ = other.rows_;
    }
    return *this;
  }
  Batch(const Batch&) = delete;
  Batch& operator=(const Batch&) = delete;

  // Envs in the batch (rows of every field that is not per player).
  int rows() const { return rows_; }
  // Rows of the per-player fields: one per acting player of each env.
  int player_rows() const { return block_->player_rows.load(std::memory_order_acquire); }

  // The rows of field `name` ("obs", "reward", "terminated", "truncated", "info:env_id", ...), row r
  // at data + r * row elements. T must match the field's dtype (float for float32, bool, int32_t...).
  template <typename T>
  const T* Get(const std::string& name) const {
    const int index = FieldIndex(name);
    const BlockField& f = layout_->fields()[static_cast<std::size_t>(index)];
    const bool same_kind = std::is_same_v<T, bool>
                               ? f.dtype == Dtype::kBool
                               : std::is_floating_point_v<T> == DtypeIsFloat(f.dtype) && f.dtype != Dtype::kBool;
    if (!same_kind || sizeof(T) != DtypeSize(f.dtype)) {
      throw std::invalid_argument("field '" + name + "' has dtype " + DtypeName(f.dtype));
    }
    return reinterpret_cast<const T*>(block_->field(index));
  }
  // Elements in one row of field `name` (the product of its shape).
  std::size_t RowSize(const std::string& name) const {
    const BlockField& f = layout_->fields()[static_cast<std::size_t>(FieldIndex(name))];
    return f.row_bytes / DtypeSize(f.dtype);
  }
  const std::vector<BlockField>& fields() const { return layout_->fields(); }
  // Exceptions the envs of this batch raised: (env_id, message).
  const std::vector<std::pair<int, std::string>>& errors() const { return block_->errors(); }

 private:
  int FieldIndex(const std::string& name) const {
    const auto& fields = layout_->fields();
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == name) return static_cast<int>(i);
    }
    throw std::out_of_range("the batch has no field '" + name + "'");
  }

  const BlockLayout* layout_;
  OutputBlock* block_;
  int rows_;
};

}  // namespace pp
