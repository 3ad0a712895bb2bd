// The image side of Atari preprocessing: palette lookup, max-pooling of two frames and OpenCV's
// INTER_AREA resize, on ALE's palette-index screens, with no per-step allocation.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace pp::atari {

// The Atari 2600 screen as ALE gives it: 210 rows of 160 palette indices.
constexpr int kScreenHeight = 210;
constexpr int kScreenWidth = 160;
constexpr int kScreenPixels = kScreenHeight * kScreenWidth;
// The console's RAM, as ALE's ALERAM holds it.
constexpr int kRamBytes = 128;

// Palette index -> grey level and -> RGB, filled once from ALE's own palette (ColourPalette), so
// that a frame costs one table lookup per pixel instead of ALE's per-call conversion.
struct Palette {
  uint8_t gray[256];
  uint8_t rgb[256][3];
};

// max(gray[a], gray[b]) for every pair of palette indices, indexed a * 256 + b: one lookup per
// pixel for the max-pooled grey frame. 64 KiB, shared by every env (ALE has one palette, NTSC).
inline const uint8_t* GrayMaxTable(const Palette& palette) {
  static const std::vector<uint8_t> table = [&palette] {
    std::vector<uint8_t> t(256 * 256);
    for (int a = 0; a < 256; ++a) {
      for (int b = 0; b < 256; ++b) t[a * 256 + b] = std::max(palette.gray[a], palette.gray[b]);
    }
    return t;
  }();
  return table.data();
}

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

// cv::saturate_cast<uchar>(float): cvRound (round half to even under the default rounding mode,
// which cvtss2si and lrintf both use), then clamp.
inline uint8_t SaturateU8(float v) {
#if defined(__SSE2__)
  const int r = _mm_cvtss_si32(_mm_set_ss(v));
#else
  const long r = std::lrint(v);
#endif
  return static_cast<uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}

// cv::resize(src, dst, (width, height), interpolation=INTER_AREA) for shrinking by a non-integer
// factor, bit for bit: OpenCV's tables (AreaTable) and its float arithmetic in its order
// (ResizeArea_Invoker: per source row, buf[dx] = 0 + s*a0 + s*a1 + ...; per destination row,
// sum = b0*buf0 + b1*buf1 + ...; cvRound). Faster than OpenCV's loop because each source row's
// horizontal pass is computed once and accumulated in registers (a source row on the border of
// two destination rows gives the same floats both times, so the results do not change).
// `channels` interleaved uint8 channels. Build with -ffp-contract=off: a fused multiply-add would
// round differently from OpenCV.
class AreaResizer {
 public:
  AreaResizer(int src_height, int src_width, int dst_height, int dst_width, int channels)
      : src_width_(src_width), dst_height_(dst_height), dst_width_(dst_width), channels_(channels) {
    // Each destination column's terms are consecutive source columns: store (first, count, weights).
    const std::vector<AreaTerm> xtab = AreaTable(src_width, dst_width);
    x_first_.assign(static_cast<std::size_t>(dst_width), -1);
    x_count_.assign(static_cast<std::size_t>(dst_width), 0);
    for (const AreaTerm& t : xtab) {
      if (x_first_[t.di] < 0) x_first_[t.di] = t.si;
      ++x_count_[t.di];
      max_terms_ = std::max(max_terms_, x_count_[t.di]);
    }
    // Weights term-major (max_terms x dst_width), zero-padded; offsets of each column's first term.
    x_weight_.assign(static_cast<std::size_t>(dst_width) * max_terms_, 0.0f);
    std::vector<int> filled(static_cast<std::size_t>(dst_width), 0);
    for (const AreaTerm& t : xtab) x_weight_[filled[t.di]++ * dst_width + t.di] = t.alpha;
    // A padded term may read past the row's last pixel: clamp the first index so it stays inside
    // (a clamped column's real terms then start later: shift its weights to match).
    x_offset_.resize(static_cast<std::size_t>(dst_width));
    for (int dx = 0; dx < dst_width; ++dx) {
      const int first = std::min(x_first_[dx], src_width - max_terms_);
      const int shift = x_first_[dx] - first;
      for (int k = max_terms_ - 1; k >= 0; --k) {
        const float v = k - shift >= 0 ? x_weight_[(k - shift) * dst_width + dx] : 0.0f;
        x_weight_[k * dst_width + dx] = v;
      }
      x_offset_[dx] = first * channels;
    }
    ytab_ = AreaTable(src_height, dst_height);
    row_.resize(static_cast<std::size_t>(dst_width) * channels);
    src_row_.resize(static_cast<std::size_t>(src_width) * channels);
    sum_.resize(row_.size());
  }

  void Resize(const uint8_t* src, uint8_t* dst) {
    int row_of = -1;  // the source row whose horizontal pass row_ holds
    Vertical(dst, [&](int sy) {
      if (sy != row_of) {
        row_of = sy;
        HorizontalPass(src + static_cast<std::size_t>(sy) * src_width_ * channels_, row_.data());
      }
      return row_.data();
    });
  }

  // The two halves of Resize for callers that cache rows: the horizontal pass of one source row
  // (row_floats() floats), and the vertical pass over every source row's horizontal pass
  // (`rows`: src_height x row_floats()). Resize(src) == Vertical(HorizontalPass of every row).
  std::size_t row_floats() const { return row_.size(); }
  void HorizontalPass(const uint8_t* s, float* out) {
    // The row as floats first (vectorised), so the term loops below only gather floats.
    const std::size_t row_values = static_cast<std::size_t>(src_width_) * channels_;
    for (std::size_t i = 0; i < row_values; ++i) src_row_[i] = static_cast<float>(s[i]);
    if (channels_ == 1) {
      GrayTerms(out);
    } else {
      Terms<3>(out);
    }
  }
  void VerticalPass(const float* rows, uint8_t* dst) {
    const std::size_t n = row_.size();
    Vertical(dst, [&](int sy) { return rows + static_cast<std::size_t>(sy) * n; });
  }

 private:
  // The sum over the source rows of each destination row, in OpenCV's order; then cvRound.
  template <typename RowFn>
  void Vertical(uint8_t* dst, RowFn row_of) {
    const std::size_t n = row_.size();
    std::size_t y = 0;
    for (int dy = 0; dy < dst_height_; ++dy) {
      bool first = true;
      for (; y < ytab_.size() && ytab_[y].di == dy; ++y) {
        const float* row = row_of(ytab_[y].si);
        const float beta = ytab_[y].alpha;
        if (first) {
          for (std::size_t i = 0; i < n; ++i) sum_[i] = beta * row[i];
          first = false;
        } else {
          for (std::size_t i = 0; i < n; ++i) sum_[i] += beta * row[i];
        }
      }
      uint8_t* d = dst + static_cast<std::size_t>(dy) * n;
      for (std::size_t i = 0; i < n; ++i) d[i] = SaturateU8(sum_[i]);
    }
  }

  // Terms<1> with four columns per SSE register (zero-padded terms as there), all terms of a column kept in the
  // register: the same IEEE products and sums in the same order, lane by lane.
  void GrayTerms(float* out) {
    const int width = dst_width_;
    const int* offset = x_offset_.data();
    const float* p = src_row_.data();
    int dx = 0;
#if defined(__SSE2__)
    for (; dx + 4 <= width; dx += 4) {
      const int o0 = offset[dx], o1 = offset[dx + 1], o2 = offset[dx + 2], o3 = offset[dx + 3];
      __m128 acc = _mm_mul_ps(_mm_setr_ps(p[o0], p[o1], p[o2], p[o3]), _mm_loadu_ps(&x_weight_[dx]));
      for (int k = 1; k < max_terms_; ++k) {
        const __m128 v = _mm_setr_ps(p[o0 + k], p[o1 + k], p[o2 + k], p[o3 + k]);
        acc = _mm_add_ps(acc, _mm_mul_ps(v, _mm_loadu_ps(&x_weight_[static_cast<std::size_t>(k) * width + dx])));
      }
      _mm_storeu_ps(&out[dx], acc);
    }
#endif
    for (; dx < width; ++dx) {
      float acc = p[offset[dx]] * x_weight_[dx];
      for (int k = 1; k < max_terms_; ++k)
        acc += p[offset[dx] + k] * x_weight_[static_cast<std::size_t>(k) * width + dx];
      out[dx] = acc;
    }
  }

  // Term k of every destination column in turn, so that the columns' sums are independent chains
  // the CPU overlaps. Missing terms (k >= the column's count) have weight 0: adding s * 0 = +0.0
  // to a non-negative sum leaves it unchanged, so the floats are OpenCV's.
  template <int kChannels>
  void Terms(float* out_row) {
    const int width = dst_width_;
    const int* offset = x_offset_.data();
    for (int k = 0; k < max_terms_; ++k) {
      const float* w = &x_weight_[static_cast<std::size_t>(k) * width];
      for (int c = 0; c < kChannels; ++c) {
        const float* p = src_row_.data() + static_cast<std::size_t>(k) * kChannels + c;
        float* out = out_row + c;
        if (k == 0) {
          for (int dx = 0; dx < width; ++dx) out[dx * kChannels] = p[offset[dx]] * w[dx];
        } else {
          for (int dx = 0; dx < width; ++dx) out[dx * kChannels] += p[offset[dx]] * w[dx];
        }
      }
    }
  }

  int src_width_, dst_height_, dst_width_, channels_;
  int max_terms_ = 0;
  std::vector<int> x_first_, x_count_;
  std::vector<int> x_offset_;    // per destination column: byte offset of its first (clamped) term
  std::vector<float> x_weight_;  // max_terms_ x dst_width, zero-padded
  std::vector<AreaTerm> ytab_;
  std::vector<float> src_row_;    // the source row being passed, as floats
  std::vector<float> row_, sum_;  // one source row's horizontal pass; the destination row's sum
};

// cv::resize(..., INTER_AREA) where both scales are integers (src = dst * factor, factors not both
// 1): OpenCV's resizeAreaFast shortcut, which AreaResizer's general path does not reproduce. A 2 x 2
// block is (sum + 2) >> 2 (rounding halves up); any other block, cvRound(sum * (1.f / area)) (halves
// to even). `channels` interleaved uint8 channels.
inline void IntegerAreaResize(const uint8_t* src, int src_width, int dst_height, int dst_width, int channels,
                              int y_factor, int x_factor, uint8_t* dst) {
  const float scale = 1.f / static_cast<float>(y_factor * x_factor);
  const bool two_by_two = y_factor == 2 && x_factor == 2;
  const std::size_t src_row = static_cast<std::size_t>(src_width) * channels;
  for (int dy = 0; dy < dst_height; ++dy) {
    const uint8_t* block = src + static_cast<std::size_t>(dy) * y_factor * src_row;
    for (int dx = 0; dx < dst_width; ++dx) {
      for (int c = 0; c < channels; ++c) {
        int sum = 0;
        for (int y = 0; y < y_factor; ++y) {
          const uint8_t* s = block + y * src_row + static_cast<std::size_t>(dx) * x_factor * channels + c;
          for (int x = 0; x < x_factor; ++x) sum += s[x * channels];
        }
        *dst++ = two_by_two ? static_cast<uint8_t>((sum + 2) >> 2) : SaturateU8(static_cast<float>(sum) * scale);
      }
    }
  }
}

// Palette indices -> grey levels, or interleaved RGB.
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

}  // namespace pp::atari
