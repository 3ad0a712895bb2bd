// Pixel observations of the MuJoCo-based families (MuJoCo gym tasks, dm_control): the newest frame,
// optionally gray, and the ring of the last k frames written out oldest first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace pp::pixels {

// Gymnasium's GrayscaleObservation: np.sum(rgb * [0.2125, 0.7154, 0.0721], axis=-1) in float64,
// summed left to right as NumPy's reduction over the last axis does (r + (g + b) differs for 54 of
// the 2^24 colours), truncated to uint8.
inline uint8_t Gray(const uint8_t* p) {
  const double r = p[0] * 0.2125, g = p[1] * 0.7154, b = p[2] * 0.0721;
  return static_cast<uint8_t>((r + g) + b);
}

// The last `frame_stack` frames of one env, as FrameStackObservation(k, padding_type="reset")
// stacks them: at an episode's start the reset frame fills every slot; the observation is the
// frames oldest first, each height x width (gray) or height x width x 3.
class PixelStack {
 public:
  PixelStack() = default;
  PixelStack(int height, int width, bool gray_scale, int frame_stack)
      : gray_scale_(gray_scale), frame_stack_(frame_stack) {
    const std::size_t pixels = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
    frame_bytes_ = gray_scale ? pixels : pixels * 3;
    rgb_.resize(pixels * 3);
    stack_.resize(frame_bytes_ * static_cast<std::size_t>(frame_stack));
  }

  // Renders the newest frame through `render(uint8_t* rgb)` and writes the stacked observation to
  // `obs`; `reset` starts a new stack.
  template <typename RenderFn>
  void Push(const RenderFn& render, bool reset, uint8_t* obs) {
    head_ = reset ? 0 : (head_ + 1) % frame_stack_;
    uint8_t* newest = stack_.data() + static_cast<std::size_t>(head_) * frame_bytes_;
    if (gray_scale_) {
      render(rgb_.data());
      for (std::size_t i = 0; i < frame_bytes_; ++i) newest[i] = Gray(&rgb_[3 * i]);
    } else {
      render(newest);
    }
    if (reset) {
      for (int k = 1; k < frame_stack_; ++k) {
        std::memcpy(stack_.data() + static_cast<std::size_t>(k) * frame_bytes_, newest, frame_bytes_);
      }
    }
    // Oldest first: the frame after the newest in the ring is the oldest.
    for (int k = 0; k < frame_stack_; ++k) {
      const int slot = (head_ + 1 + k) % frame_stack_;
      std::memcpy(obs + static_cast<std::size_t>(k) * frame_bytes_,
                  stack_.data() + static_cast<std::size_t>(slot) * frame_bytes_, frame_bytes_);
    }
  }

 private:
  bool gray_scale_ = false;
  int frame_stack_ = 1;
  std::size_t frame_bytes_ = 0;
  std::vector<uint8_t> rgb_, stack_;
  int head_ = 0;
};

}  // namespace pp::pixels
