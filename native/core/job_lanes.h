// Job queues with a home lane per thread: each env's jobs go to the lane of the thread that owns
// it, a thread pops its own lane first and takes work from the other lanes only when its own is
// empty. An env then keeps stepping on one thread (its MuJoCo or emulator state stays in that
// core's cache, and neighbouring envs' output rows are written by one thread), while no thread
// idles while another has work queued.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "action_queue.h"

namespace pp {

class JobLanes {
 public:
  // `capacity_per_lane`: the most jobs one lane may ever hold at once.
  JobLanes(int num_lanes, std::size_t capacity_per_lane) {
    if (num_lanes < 1) num_lanes = 1;
    for (int i = 0; i < num_lanes; ++i) lanes_.push_back(std::make_unique<ActionQueue>(capacity_per_lane));
  }

  int num_lanes() const { return static_cast<int>(lanes_.size()); }

  // Same contract as ActionQueue::TryPush, on lane `lane`.
  bool TryPush(int lane, int value) { return lanes_[static_cast<std::size_t>(lane)]->TryPush(value); }

  // Pops from `lane` if it has a job, else from the next non-empty lane after it (in lane order,
  // wrapping). Returns false when every lane was empty.
  bool TryPop(int lane, int* value) {
    const int n = num_lanes();
    for (int k = 0; k < n; ++k) {
      int l = lane + k;
      if (l >= n) l -= n;
      if (lanes_[static_cast<std::size_t>(l)]->TryPop(value)) return true;
    }
    return false;
  }

  // A hint only, like ActionQueue::EmptyApprox: every lane looked empty.
  bool EmptyApprox() const {
    for (const auto& q : lanes_) {
      if (!q->EmptyApprox()) return false;
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<ActionQueue>> lanes_;
};

}  // namespace pp
