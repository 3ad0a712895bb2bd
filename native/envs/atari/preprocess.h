// The image side of Atari preprocessing: palette lookup, max-pooling of two frames and OpenCV's
// INTER_AREA resize, on ALE's palette-index screens, with no per-step allocation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pp::atari {

// The Atari 2600 screen as ALE gives it: 210 rows of 160 palette indices.
constexpr int kScreenHeight = 210;
constexpr int kScreenWidth = 160;
constexpr int kScreenPixels = kScreenHeight * kScreenWidth;

// Palette index -> grey level and -> RGB, filled once from ALE's own palette (ColourPalette), so
// that a frame costs one table lookup per pixel instead of ALE's per-call conversion.
struct Palette {
  uint8_t gray[256];
  uint8_t rgb[256][3];
};

// One term of an area-resize table: destination index `di` takes `alpha` of source index `si`.
struct AreaTerm {
  int di;
  int si;
  float alpha;
};

// OpenCV's computeResizeAreaTab (imgproc/src/resize.cpp): the source cells that cover each
// destination cell along one axis, weighted by overlap / cell size. `scale` is ssize / dsize as
// cv::resize computes it (1 / (dsize / ssize), in double).
inline std::vector<AreaTerm> AreaTable(int ssize, int dsize) {
  const double scale = 1.0 / (static_cast<double>(dsize) / ssize);
  std::vector<AreaTerm> tab;
  for (int dx = 0; dx < dsize; ++dx) {
    const double fsx1 = dx * scale;
    const double fsx2 = fsx1 + scale;
    const double cell_width = std::min(scale, ssize - fsx1);
    int sx1 = static_cast<int>(std::ceil(fsx1)), sx2 = static_cast<int>(std::floor(fsx2));
    sx2 = std::min(sx2, ssize - 1);
    sx1 = std::min(sx1, sx2);
    // OpenCV ignores slivers of less than a thousandth of a source pixel.
    constexpr double kSliver = 1e-3;
    if (sx1 - fsx1 > kSliver) tab.push_back({dx, sx1 - 1, static_cast<float>((sx1 - fsx1) / cell_width)});
    for (int sx = sx1; sx < sx2; ++sx) tab.push_back({dx, sx, static_cast<float>(1.0 / cell_width)});
    if (fsx2 - sx2 > kSliver) {
      tab.push_back({dx, sx2, static_cast<float>(std::min(std::min(fsx2 - sx2, 1.0), cell_width) / cell_width)});
    }
  }
  return tab;
}

// cv::saturate_cast<uchar>(float): round half to even (cvRound is lrint), then clamp.
inline uint8_t SaturateU8(float v) {
  const long r = std::lrint(v);
  return static_cast<uint8_t>(std::clamp(r, 0L, 255L));
}

// cv::resize(src, dst, (width, height), interpolation=INTER_AREA) for downscaling by a non-integer
// factor: the same tables, the same float accumulation order (ResizeArea_Invoker), so results match
// OpenCV's bit for bit up to the rounding of its float sums. `channels` interleaved uint8 channels.
class AreaResizer {
 public:
  AreaResizer(int src_height, int src_width, int dst_height, int dst_width, int channels)
      : src_width_(src_width),
        dst_height_(dst_height),
        dst_width_(dst_width),
        channels_(channels),
        xtab_(AreaTable(src_width, dst_width)),
        ytab_(AreaTable(src_height, dst_height)),
        buf_(static_cast<std::size_t>(dst_width) * channels),
        sum_(buf_.size()) {}

  void Resize(const uint8_t* src, uint8_t* dst) {
    const std::size_t row = buf_.size();
    std::fill(sum_.begin(), sum_.end(), 0.0f);
    int prev_dy = ytab_.front().di;
    for (const AreaTerm& y : ytab_) {
      const uint8_t* s = src + static_cast<std::size_t>(y.si) * src_width_ * channels_;
      std::fill(buf_.begin(), buf_.end(), 0.0f);
      for (const AreaTerm& x : xtab_) {
        for (int c = 0; c < channels_; ++c) {
          buf_[x.di * channels_ + c] += static_cast<float>(s[x.si * channels_ + c]) * x.alpha;
        }
      }
      if (y.di != prev_dy) {
        uint8_t* d = dst + static_cast<std::size_t>(prev_dy) * row;
        for (std::size_t i = 0; i < row; ++i) {
          d[i] = SaturateU8(sum_[i]);
          sum_[i] = y.alpha * buf_[i];
        }
        prev_dy = y.di;
      } else {
        for (std::size_t i = 0; i < row; ++i) sum_[i] += y.alpha * buf_[i];
      }
    }
    uint8_t* d = dst + static_cast<std::size_t>(prev_dy) * row;
    for (std::size_t i = 0; i < row; ++i) d[i] = SaturateU8(sum_[i]);
  }

  int dst_height() const { return dst_height_; }
  int dst_width() const { return dst_width_; }

 private:
  int src_width_, dst_height_, dst_width_, channels_;
  std::vector<AreaTerm> xtab_, ytab_;
  std::vector<float> buf_, sum_;  // one destination row: the current source row's terms, the sum
};

// Palette indices -> grey levels (or interleaved RGB), max-pooled with the previous conversion
// when `max_with` is set: the last two frames of a frame skip, as Gymnasium and EnvPool pool them.
inline void ToGray(const Palette& palette, const uint8_t* screen, uint8_t* out) {
  for (int i = 0; i < kScreenPixels; ++i) out[i] = palette.gray[screen[i]];
}
inline void ToRgb(const Palette& palette, const uint8_t* screen, uint8_t* out) {
  for (int i = 0; i < kScreenPixels; ++i) {
    const uint8_t* c = palette.rgb[screen[i]];
    out[3 * i] = c[0];
    out[3 * i + 1] = c[1];
    out[3 * i + 2] = c[2];
  }
}
inline void MaxInto(uint8_t* inout, const uint8_t* other, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) inout[i] = std::max(inout[i], other[i]);
}

}  // namespace pp::atari
