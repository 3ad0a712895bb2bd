// Numbered references to pools, for callers that cannot hold a Python object: an XLA custom call
// (xla_ffi.cc) finds its pool by the number its handle carries, with no Python and no GIL.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/pool.h"

namespace pp {

// Numbers are never reused, so a handle that outlives its pool finds nothing (an error for its
// caller), never another pool. The table holds weak references: it keeps no pool alive, and a call
// in progress keeps its pool alive with the shared reference Find returned.
class PoolHandles {
 public:
  static PoolHandles& Global() {
    static PoolHandles* handles = new PoolHandles;  // never destroyed: calls may outlive static teardown
    return *handles;
  }

  uint64_t Add(std::weak_ptr<Pool> pool) {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = ++last_id_;
    pools_.emplace(id, std::move(pool));
    return id;
  }
  // nullptr when the pool was removed or destroyed.
  std::shared_ptr<Pool> Find(uint64_t id) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = pools_.find(id);
    return it == pools_.end() ? nullptr : it->second.lock();
  }
  void Remove(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    pools_.erase(id);
  }

 private:
  mutable std::mutex mu_;
  uint64_t last_id_ = 0;
  std::unordered_map<uint64_t, std::weak_ptr<Pool>> pools_;
};

}  // namespace pp
