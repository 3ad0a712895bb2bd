// frame_stack on state observations (EnvPool's MuJoCo and dm_control tasks stack state vectors as they stack
// frames): the last k observation vectors, oldest first, the reset's repeated at an episode's start.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace pp {

class StateStack {
 public:
  StateStack() = default;
  StateStack(std::size_t size, int frame_stack)
      : size_(size), frame_stack_(frame_stack), ring_(size * static_cast<std::size_t>(frame_stack)) {}

  // Pushes the newest observation `obs` (size values) and writes the stack, (k, size) oldest
  // first, to `out`; `reset` starts a new stack filled with `obs`.
  void Push(const double* obs, bool reset, double* out) {
    head_ = reset ? 0 : (head_ + 1) % frame_stack_;
    std::copy(obs, obs + size_, Row(head_));
    if (reset) {
      for (int k = 1; k < frame_stack_; ++k) std::copy(obs, obs + size_, Row(k));
    }
    // The row after the newest in the ring is the oldest.
    for (int k = 0; k < frame_stack_; ++k) {
      const double* row = Row((head_ + 1 + k) % frame_stack_);
      std::copy(row, row + size_, out + static_cast<std::size_t>(k) * size_);
    }
  }

 private:
  double* Row(int k) { return ring_.data() + static_cast<std::size_t>(k) * size_; }

  std::size_t size_ = 0;
  int frame_stack_ = 1;
  std::vector<double> ring_;
  int head_ = 0;
};

}  // namespace pp
