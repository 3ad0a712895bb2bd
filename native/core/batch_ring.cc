// The batch ring's blocks: how many it holds, acquired when it is made and released with it.
#include "batch_ring.h"

#include <utility>

namespace pp {

BatchRing::BatchRing(BlockLayout layout, int num_envs, int batch_size, bool ordered)
    : free_list_(std::make_shared<BlockFreeList>(std::move(layout))), batch_size_(batch_size), ordered_(ordered) {
  // A claimed output index is at most num_envs ahead of the first unreceived one, so this many
  // blocks in the ring can never be overrun.
  const int ring_size = (num_envs + batch_size - 1) / batch_size + 1;
  ring_ = std::vector<std::atomic<OutputBlock*>>(static_cast<std::size_t>(ring_size));
  for (int i = 0; i < ring_size; ++i) ring_[static_cast<std::size_t>(i)].store(Fresh(i), std::memory_order_relaxed);
}

BatchRing::~BatchRing() {
  for (auto& b : ring_) BlockFreeList::Release(b.load(std::memory_order_relaxed));
}

}  // namespace pp
