// pygame 2.6.1's drawing on a pygame.Surface, pixel for pixel, for envs whose reference render() draws with
// pygame (Gymnasium's Box2D and toy-text tasks): pygame.draw, pygame.gfxdraw, flip, transform.scale, blit.
// (pygame.transform.smoothscale is pygame_smoothscale.h.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <utility>
#include <vector>

#include "envs/common/argb_image.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
// AVX2 and AVX-512 variants of the span fills here and of smoothscale's shrinks, compiled for those
// whatever the build's flags and taken only where the CPU has them (the same pixels as the SSE2 or
// plain code; a wheel still runs on any x86-64).
#if defined(__SSE2__) && defined(__x86_64__) && defined(__GNUC__)
#define PP_RASTER_AVX2 1
#include <immintrin.h>
#endif

namespace pp::raster {

namespace detail {

// Which code the fills and smoothscale may take (where the CPU has it): the tests compare them all.
enum class Simd { kAuto, kAvx2, kSse2 };  // the best the CPU has, at most AVX2, SSE2 only

#if defined(PP_RASTER_AVX2)
// Whether this CPU runs the AVX2 code (asked once).
inline bool CpuHasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
// And AVX-512 with byte and word lanes on 128/256-bit registers too (the shrink along rows).
inline bool CpuHasAvx512Bw() {
  static const bool has =
      __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  return has;
}

__attribute__((target("avx2"))) inline void FillPixelsAvx2(uint32_t* p, std::size_t count, uint32_t value) {
  const __m256i v = _mm256_set1_epi32(static_cast<int>(value));
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + i), v);
  for (; i < count; ++i) p[i] = value;
}

// With AVX-512: whole cache lines (aligned 64-byte stores), the partial ones at the ends masked.
__attribute__((target("avx512f"))) inline void FillPixelsAvx512(uint32_t* p, std::size_t count, uint32_t value) {
  const __m512i v = _mm512_set1_epi32(static_cast<int>(value));
  const std::size_t misaligned = (reinterpret_cast<std::uintptr_t>(p) & 63) / sizeof(uint32_t);
  std::size_t i = std::min(count, (16 - misaligned) & 15);
  if (i) _mm512_mask_storeu_epi32(p, static_cast<__mmask16>((1u << i) - 1), v);
  for (; i + 16 <= count; i += 16) _mm512_store_si512(p + i, v);
  if (i < count) _mm512_mask_storeu_epi32(p + i, static_cast<__mmask16>((1u << (count - i)) - 1), v);
}
#endif

// std::fill_n(p, count, value): the pixels of a span, in 64- or 32-byte stores where the CPU has
// AVX-512 or AVX2 (the fills of CarRacing's 1000x800 frame are store-bound; std::fill_n makes
// 16-byte ones).
inline void FillPixels(uint32_t* p, std::size_t count, uint32_t value, Simd simd = Simd::kAuto) {
#if defined(PP_RASTER_AVX2)
  if (simd == Simd::kAuto && CpuHasAvx512Bw()) {
    FillPixelsAvx512(p, count, value);
    return;
  }
  if (simd != Simd::kSse2 && CpuHasAvx2()) {
    FillPixelsAvx2(p, count, value);
    return;
  }
#else
  (void)simd;
#endif
  std::fill_n(p, count, value);
}

}  // namespace detail

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// A point as the reference passes it (Python floats, or Box2D's float32 vectors widened).
struct Point {
  double x = 0.0, y = 0.0;
};

// pygame.Surface((w, h)) as pygame makes it by default: 32 bits per pixel, no alpha, pixel value
// r << 16 | g << 8 | b. Every primitive below works on these values exactly as pygame's C code does
// (SDL2_gfx's blending reads and writes the packed value, so the packing is part of the result).
class Surface {
 public:
  Surface(int width, int height)
      : width_(width), height_(height), pixels_(static_cast<std::size_t>(width) * height, 0u) {}

  int width() const { return width_; }
  int height() const { return height_; }
  static uint32_t Map(Rgb c) { return uint32_t{c.r} << 16 | uint32_t{c.g} << 8 | uint32_t{c.b}; }
  bool Inside(int x, int y) const { return x >= 0 && x < width_ && y >= 0 && y < height_; }
  uint32_t Get(int x, int y) const { return pixels_[Index(x, y)]; }
  // Writes the pixel if it is on the surface (pygame clips every write to the surface) and in the
  // rows writes are kept to.
  void Set(int x, int y, uint32_t value) {
    if (Inside(x, y) && Writable(y)) pixels_[Index(x, y)] = value;
  }
  // Drops every write outside rows [first, end) until called again (KeepWritesIn(0, height())
  // restores them): for a caller that knows those rows will be painted over, opaquely, before
  // anything reads them. Only writes are dropped: every primitive's geometry (its clipping to the
  // surface, its rounding) stays the same, so the rows kept get the same pixels as without it.
  void KeepWritesIn(int first, int end) {
    write_first_ = first;
    write_end_ = end;
  }
  bool Writable(int y) const { return y >= write_first_ && y < write_end_; }
  int write_first() const { return write_first_; }
  int write_end() const { return write_end_; }
  // The packed pixels in memory, width() per row: row y is memory row y, or height() - 1 - y when
  // bottom_up() (after an odd number of FlipVertical()).
  const uint32_t* data() const { return pixels_.data(); }
  uint32_t* data() { return pixels_.data(); }
  bool bottom_up() const { return bottom_up_; }
  // Row y's width() pixels.
  uint32_t* Row(int y) { return pixels_.data() + static_cast<std::ptrdiff_t>(MemoryRow(y)) * width_; }
  const uint32_t* Row(int y) const { return pixels_.data() + static_cast<std::ptrdiff_t>(MemoryRow(y)) * width_; }
  // pygame.transform.flip(surface, False, True), in place: the rows swap ends in O(1) (the memory
  // stays; which end row 0 is at changes).
  void FlipVertical() { bottom_up_ = !bottom_up_; }
  // pygame.draw.rect over the whole surface, or Surface.fill (the rows whose writes are kept).
  void Fill(Rgb c) {
    const int first = std::max(write_first_, 0), end = std::min(write_end_, height_);
    for (int y = first; y < end; ++y) detail::FillPixels(Row(y), static_cast<std::size_t>(width_), Map(c));
  }

  // Writes columns [x0, x0 + out_width) as RGB rows, bottom row first when flip_y: what
  // np.transpose(pixels3d(pygame.transform.flip(surf, False, flip_y)), (1, 0, 2))[:, x0:x0 + out_width]
  // holds. Columns outside the surface are written black.
  void WriteRgb(uint8_t* out, bool flip_y, int x0, int out_width) const {
    for (int row = 0; row < height_; ++row) {
      const int y = flip_y ? height_ - 1 - row : row;
      uint8_t* dst = out + static_cast<std::size_t>(row) * out_width * 3;
      for (int col = 0; col < out_width; ++col) {
        const int x = x0 + col;
        const uint32_t v = (x >= 0 && x < width_) ? Get(x, y) : 0u;
        dst[3 * col] = static_cast<uint8_t>(v >> 16);
        dst[3 * col + 1] = static_cast<uint8_t>(v >> 8);
        dst[3 * col + 2] = static_cast<uint8_t>(v);
      }
    }
  }

 private:
  int MemoryRow(int y) const { return bottom_up_ ? height_ - 1 - y : y; }
  std::size_t Index(int x, int y) const { return static_cast<std::size_t>(MemoryRow(y)) * width_ + x; }
  int width_;
  int height_;
  bool bottom_up_ = false;
  int write_first_ = 0;
  int write_end_ = height_;
  std::vector<uint32_t> pixels_;
};

namespace detail {

// pygame's pg_IntFromObj on a Python float: C's (int) cast, which x86-64 turns into INT_MIN when the
// value does not fit (what cvttsd2si returns).
inline int PyInt(double v) {
  if (!(v > -2147483649.0 && v < 2147483648.0)) return INT32_MIN;
  return static_cast<int>(v);
}
// Two's complement wrap of 32-bit int arithmetic, as the reference's C int expressions compute it.
inline int Wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }

// ---- pygame.draw (src_c/draw.c) helpers ----

inline void HorizontalLineClip(Surface& s, uint32_t color, int x1, int y, int x2) {
  if (y < 0 || y >= s.height() || !s.Writable(y)) return;
  if (x2 < x1) std::swap(x1, x2);
  x1 = std::max(x1, 0);
  x2 = std::min(x2, s.width() - 1);
  if (x1 <= x2) FillPixels(s.Row(y) + x1, static_cast<std::size_t>(x2 - x1 + 1), color);
}

// draw.c's Bresenham walk from (x1, y1) towards (x2, y2): each Step moves x, y or both one pixel
// and says which moved.
struct BresenhamWalk {
  struct Moved {
    bool x, y;
  };
  BresenhamWalk(int x1, int y1, int x2, int y2)
      : dx(std::abs(x2 - x1)),
        sx(x1 < x2 ? 1 : -1),
        dy(std::abs(y2 - y1)),
        sy(y1 < y2 ? 1 : -1),
        err((dx > dy ? dx : -dy) / 2) {}
  Moved Step(int& x, int& y) {
    const Moved moved{err > -dx, err < dy};
    if (moved.x) {
      err -= dy;
      x += sx;
    }
    if (moved.y) {
      err += dx;
      y += sy;
    }
    return moved;
  }
  const int dx, sx, dy, sy;
  int err;
};

// Bresenham from (x1, y1) to (x2, y2), both drawn (draw.c's draw_line).
inline void BresenhamLine(Surface& s, int x1, int y1, int x2, int y2, uint32_t color) {
  if (x1 == x2 && y1 == y2) {
    s.Set(x1, y1, color);
    return;
  }
  if (y1 == y2) {  // the pixels of the row between both ends, those on the surface
    HorizontalLineClip(s, color, x1, y1, x2);
    return;
  }
  if (x1 == x2) {
    const int step = y1 < y2 ? 1 : -1;
    for (int i = 0; i <= std::abs(y1 - y2); ++i) s.Set(x1, y1 + step * i, color);
    return;
  }
  BresenhamWalk walk(x1, y1, x2, y2);
  while (x1 != x2 || y1 != y2) {
    s.Set(x1, y1, color);
    walk.Step(x1, y1);
  }
  s.Set(x2, y2, color);
}

// Liang-Barsky clip of an integer segment to the surface, endpoints rounded half away from zero
// (draw.c's clip_line). Returns false when nothing is left.
inline bool ClipLine(const Surface& s, int& x1, int& y1, int& x2, int& y2) {
  const int p1 = x1 - x2, p2 = -p1, p3 = y1 - y2, p4 = -p3;
  const int q1 = x1, q2 = s.width() - x1, q3 = y1, q4 = s.height() - y1;
  const int old_x1 = x1, old_y1 = y1;
  double nmax = 0, pmin = 1;
  if ((p1 == 0 && q1 < 0) || (p2 == 0 && q2 < 0) || (p3 == 0 && q3 < 0) || (p4 == 0 && q4 < 0)) return false;
  auto bound = [&](int p, int q_low, int q_high, int p_other) {
    const double r1 = static_cast<double>(q_low) / p;
    const double r2 = static_cast<double>(q_high) / p_other;
    if (p < 0) {
      if (r1 > nmax) nmax = r1;
      if (r2 < pmin) pmin = r2;
    } else {
      if (r2 > nmax) nmax = r2;
      if (r1 < pmin) pmin = r1;
    }
  };
  if (p1) bound(p1, q1, q2, p2);
  if (p3) bound(p3, q3, q4, p4);
  if (nmax > pmin) return false;
  auto round_away = [](double v) { return static_cast<int>(v < 0 ? v - 0.5 : v + 0.5); };
  x1 = old_x1 + round_away(p2 * nmax);
  y1 = old_y1 + round_away(p4 * nmax);
  x2 = old_x1 + round_away(p2 * pmin);
  y2 = old_y1 + round_away(p4 * pmin);
  return true;
}

inline int Sign(int x, int fallback) { return x > 0 ? 1 : (x < 0 ? -1 : fallback); }

// draw.c's draw_line_width: a line `width` pixels thick, grown across its minor axis. The walk
// starts from the ends before clipping, as draw.c's.
inline void LineWidth(Surface& s, uint32_t color, int x1, int y1, int x2, int y2, int width) {
  const int end_x = x2, end_y = y2;
  const bool xinc = std::abs(x1 - x2) <= std::abs(y1 - y2);  // thickness along x
  BresenhamWalk walk(x1, y1, x2, y2);
  const int sx = walk.sx, sy = walk.sy;
  if (!ClipLine(s, x1, y1, x2, y2)) return;
  if (width == 1) {
    BresenhamLine(s, x1, y1, x2, y2, color);
    return;
  }
  int left_top, right_bottom;
  if (xinc) {
    left_top = x1 - (width - 1) / 2;
    right_bottom = x1 + width / 2;
  } else {
    left_top = y1 - (width - 1) / 2;
    right_bottom = y1 + width / 2;
  }
  // The cross-section at the walk's pixel; it moves with the walk along the minor axis.
  auto cross = [&] {
    if (xinc) {
      HorizontalLineClip(s, color, left_top, y1, right_bottom);
    } else {
      for (int yy = left_top; yy <= right_bottom; ++yy) s.Set(x1, yy, color);
    }
  };
  auto cross_and_step = [&] {
    cross();
    const BresenhamWalk::Moved moved = walk.Step(x1, y1);
    if (xinc && moved.x) left_top += sx, right_bottom += sx;
    if (!xinc && moved.y) left_top += sy, right_bottom += sy;
  };
  while (Sign(x1 - x2, sx) != sx || Sign(y1 - y2, sy) != sy) cross_and_step();
  if (xinc) {
    while (y1 != end_y && (s.Inside(left_top, y1) || s.Inside(right_bottom, y1))) cross_and_step();
  } else {
    while (x1 != end_x && (s.Inside(x1, left_top) || s.Inside(x1, right_bottom))) cross_and_step();
  }
  cross();
}

// draw.c's get_antialiased_color with blend=1: a float32 mix with the pixel underneath.
inline uint32_t AntialiasedColor(const Surface& s, int x, int y, uint32_t color, float brightness) {
  if (!s.Inside(x, y)) return color;
  const uint32_t bg = s.Get(x, y);
  uint32_t out = 0;
  for (int shift = 16; shift >= 0; shift -= 8) {
    const auto c = static_cast<uint8_t>(color >> shift);
    const auto b = static_cast<uint8_t>(bg >> shift);
    const auto mixed = static_cast<uint8_t>(brightness * c + (1 - brightness) * b);
    out |= uint32_t{mixed} << shift;
  }
  return out;
}

inline void AaPixel(Surface& s, int x, int y, uint32_t color, float brightness) {
  s.Set(x, y, AntialiasedColor(s, x, y, color, brightness));
}

// draw.c's draw_aaline (Xiaolin Wu's line in float32, clipped one pixel wider than the surface).
inline void AaLine(Surface& s, uint32_t color, float from_x, float from_y, float to_x, float to_y) {
  float dx = to_x - from_x;
  float dy = to_y - from_y;
  if (std::fabs(dx) < 0.0001 && std::fabs(dy) < 0.0001) {
    const int px = static_cast<int>(std::floor(from_x + 0.5));
    const int py = static_cast<int>(std::floor(from_y + 0.5));
    AaPixel(s, px, py, color, 1.0f);
    return;
  }
  float clip_left = -1.0f;
  float clip_right = clip_left + static_cast<float>(s.width()) + 1.0f;
  float clip_top = -1.0f;
  float clip_bottom = clip_top + static_cast<float>(s.height()) + 1.0f;
  const bool steep = std::fabs(dx) < std::fabs(dy);
  if (steep) {
    std::swap(from_x, from_y);
    std::swap(to_x, to_y);
    std::swap(dx, dy);
    std::swap(clip_left, clip_top);
    std::swap(clip_right, clip_bottom);
  }
  if (dx < 0) {
    std::swap(from_x, to_x);
    std::swap(from_y, to_y);
    dx = -dx;
    dy = -dy;
  }
  if (to_x <= clip_left || from_x >= clip_right) return;
  const float gradient = dy / dx;
  if (from_x < clip_left) {
    from_y += gradient * (clip_left - from_x);
    from_x = clip_left;
  }
  if (to_x > clip_right) {
    to_y += gradient * (clip_right - to_x);
    to_x = clip_right;
  }
  if (gradient > 0.0f) {
    if (to_y <= clip_top || from_y >= clip_bottom) return;
    if (from_y < clip_top) {
      from_x += (clip_top - from_y) / gradient;
      from_y = clip_top;
    }
    if (to_y > clip_bottom) {
      to_x += (clip_bottom - to_y) / gradient;
      to_y = clip_bottom;
    }
  } else {
    if (from_y <= clip_top || to_y >= clip_bottom) return;
    if (to_y < clip_top) {
      to_x += (clip_top - to_y) / gradient;
      to_y = clip_top;
    }
    if (from_y > clip_bottom) {
      from_x += (clip_bottom - from_y) / gradient;
      from_y = clip_bottom;
    }
  }
  // Shifted one pixel down so that (int) rounds down; pixels are drawn one higher.
  from_y += 1.0f;
  to_y += 1.0f;
  auto plot = [&](int major, int minor, float brightness) {
    if (steep) {
      AaPixel(s, minor, major, color, brightness);
    } else {
      AaPixel(s, major, minor, color, brightness);
    }
  };
  auto endpoint = [&](int x_pixel, float y_endpoint, float x_gap) {
    const float brightness = y_endpoint - static_cast<float>(static_cast<int>(y_endpoint));
    const int minor = static_cast<int>(y_endpoint);
    if (static_cast<float>(minor) < y_endpoint) plot(x_pixel, minor, brightness * x_gap);
    plot(x_pixel, minor - 1, (1 - brightness) * x_gap);
  };
  int x_pixel_start = static_cast<int>(from_x);
  float intersect_y = from_y + gradient * (static_cast<float>(x_pixel_start) - from_x);
  if (to_x > clip_left + 1.0f) {
    const float x_gap = 1 + static_cast<float>(x_pixel_start) - from_x;
    endpoint(x_pixel_start, intersect_y, x_gap);
    intersect_y += gradient;
    x_pixel_start++;
  }
  const int x_pixel_end = static_cast<int>(std::ceil(to_x));
  if (from_x < clip_right - 1.0f) {
    const float y_endpoint = to_y + gradient * (static_cast<float>(x_pixel_end) - to_x);
    const float x_gap = 1 - static_cast<float>(x_pixel_end) + to_x;
    endpoint(x_pixel_end, y_endpoint, x_gap);
  }
  for (int x = x_pixel_start; x < x_pixel_end; ++x) {
    const int y = static_cast<int>(intersect_y);
    const float brightness = 1 - intersect_y + static_cast<float>(y);
    plot(x, y - 1, brightness);
    if (static_cast<float>(y) < intersect_y) plot(x, y, 1 - brightness);
    intersect_y += gradient;
  }
}

// draw.c's draw_fillpoly: even-odd scanlines between integer vertices, then the horizontal edges
// strictly inside the vertical range (which the scanlines can miss).
inline void FillPolygon(Surface& s, const std::vector<int>& px, const std::vector<int>& py, uint32_t color) {
  const int n = static_cast<int>(px.size());
  const int miny = *std::min_element(py.begin(), py.end());
  const int maxy = *std::max_element(py.begin(), py.end());
  if (miny == maxy) {
    const int minx = *std::min_element(px.begin(), px.end());
    const int maxx = *std::max_element(px.begin(), px.end());
    BresenhamLine(s, minx, miny, maxx, miny, color);
    return;
  }
  // Rows off the surface, or whose writes are dropped, draw nothing; the scan needs only the others.
  const int y_begin = std::max({miny, 0, s.write_first()});
  const int y_end = std::min({maxy, s.height() - 1, s.write_end() - 1});
  std::vector<int> xs;
  xs.reserve(static_cast<std::size_t>(n));
  for (int y = y_begin; y <= y_end; ++y) {
    xs.clear();
    for (int i = 0; i < n; ++i) {
      const int prev = i ? i - 1 : n - 1;
      int y1 = py[static_cast<std::size_t>(prev)], y2 = py[static_cast<std::size_t>(i)];
      int x1, x2;
      if (y1 < y2) {
        x1 = px[static_cast<std::size_t>(prev)];
        x2 = px[static_cast<std::size_t>(i)];
      } else if (y1 > y2) {
        std::swap(y1, y2);
        x1 = px[static_cast<std::size_t>(i)];
        x2 = px[static_cast<std::size_t>(prev)];
      } else {
        continue;
      }
      if ((y >= y1 && y < y2) || (y == maxy && y2 == maxy)) {
        // pygame 2.6 divides in floating point and truncates the sum toward zero.
        const double num = static_cast<double>(y - y1) * (x2 - x1);
        xs.push_back(PyInt(num / (y2 - y1) + x1));
      }
    }
    std::sort(xs.begin(), xs.end());
    for (std::size_t i = 0; i + 1 < xs.size(); i += 2) BresenhamLine(s, xs[i], y, xs[i + 1], y, color);
  }
  for (int i = 0; i < n; ++i) {
    const int prev = i ? i - 1 : n - 1;
    const int y = py[static_cast<std::size_t>(i)];
    if (miny < y && py[static_cast<std::size_t>(prev)] == y && y < maxy) {
      BresenhamLine(s, px[static_cast<std::size_t>(i)], y, px[static_cast<std::size_t>(prev)], y, color);
    }
  }
}

// ---- pygame.gfxdraw (SDL2_gfx's SDL_gfxPrimitives.c) helpers; coordinates are Sint16 there ----

inline int16_t GfxCoord(double v) { return static_cast<int16_t>(static_cast<uint16_t>(PyInt(v))); }

// _putPixelAlpha on a 32-bit surface without alpha: each channel moves alpha/256 of the way to the
// colour, in unsigned 32-bit arithmetic on the packed values (negative differences wrap).
// (A pixel whose write would be dropped is not read either: nothing else changes.)
inline void PutPixelAlpha(Surface& s, int x, int y, uint32_t color, uint32_t alpha) {
  if (!s.Inside(x, y) || !s.Writable(y)) return;
  uint32_t& pixel = s.Row(y)[x];
  if (alpha == 255) {
    pixel = color;
    return;
  }
  const uint32_t dc = pixel;
  uint32_t out = 0;
  for (uint32_t shift : {16u, 8u, 0u}) {
    const uint32_t mask = 0xffu << shift;
    out |= ((dc & mask) + (((((color & mask) - (dc & mask)) >> shift) * alpha >> 8) << shift)) & mask;
  }
  pixel = out;
}

// pixelColorWeightNolock with an opaque colour: alpha 255 * weight / 256.
inline void PixelWeight(Surface& s, int x, int y, uint32_t color, uint32_t weight) {
  PutPixelAlpha(s, x, y, color, (255u * weight) >> 8);
}

inline void GfxHLine(Surface& s, int16_t x1, int16_t x2, int16_t y, uint32_t color) {
  if (x1 > x2) std::swap(x1, x2);
  if (x2 < 0 || x1 > s.width() - 1 || y < 0 || y > s.height() - 1 || !s.Writable(y)) return;
  const int a = std::max<int>(x1, 0), b = std::min<int>(x2, s.width() - 1);
  FillPixels(s.Row(y) + a, static_cast<std::size_t>(b - a + 1), color);
}

inline void GfxVLine(Surface& s, int16_t x, int16_t y1, int16_t y2, uint32_t color) {
  if (y1 > y2) std::swap(y1, y2);
  if (x < 0 || x > s.width() - 1 || y2 < 0 || y1 > s.height() - 1) return;
  const int a = std::max<int>(y1, 0), b = std::min<int>(y2, s.height() - 1);
  for (int y = a; y <= b; ++y) s.Set(x, y, color);
}

// _clipLine: Cohen-Sutherland with a float32 slope and Sint16 truncation.
inline bool GfxClipLine(const Surface& s, int16_t& x1, int16_t& y1, int16_t& x2, int16_t& y2) {
  const int left = 0, right = s.width() - 1, top = 0, bottom = s.height() - 1;
  auto encode = [&](int x, int y) {
    int code = 0;
    if (x < left) {
      code |= 1;
    } else if (x > right) {
      code |= 2;
    }
    if (y < top) {
      code |= 8;
    } else if (y > bottom) {
      code |= 4;
    }
    return code;
  };
  while (true) {
    int code1 = encode(x1, y1), code2 = encode(x2, y2);
    if (!(code1 | code2)) return true;
    if (code1 & code2) return false;
    if (!code1) {
      std::swap(x1, x2);
      std::swap(y1, y2);
      std::swap(code1, code2);
    }
    const float m = x2 != x1 ? static_cast<float>(y2 - y1) / static_cast<float>(x2 - x1) : 1.0f;
    if (code1 & 1) {
      y1 = static_cast<int16_t>(y1 + static_cast<int16_t>(static_cast<float>(left - x1) * m));
      x1 = static_cast<int16_t>(left);
    } else if (code1 & 2) {
      y1 = static_cast<int16_t>(y1 + static_cast<int16_t>(static_cast<float>(right - x1) * m));
      x1 = static_cast<int16_t>(right);
    } else if (code1 & 4) {
      if (x2 != x1) x1 = static_cast<int16_t>(x1 + static_cast<int16_t>(static_cast<float>(bottom - y1) / m));
      y1 = static_cast<int16_t>(bottom);
    } else if (code1 & 8) {
      if (x2 != x1) x1 = static_cast<int16_t>(x1 + static_cast<int16_t>(static_cast<float>(top - y1) / m));
      y1 = static_cast<int16_t>(top);
    }
  }
}

// Every pixel counts (GfxAaLineNoEndpoint's default).
struct EveryPixel {
  bool operator()(int /*x*/, int /*y*/) const { return true; }
};

// _aalineColor(..., draw_endpoint=0) with an opaque colour: Wu's line in 16.16 fixed point. The
// blended pixels for which `keep(x, y)` is false are left out (for a caller that overwrites them
// next: each blend reads only the pixel it writes, so the others come out the same).
template <typename Keep = EveryPixel>
inline void GfxAaLineNoEndpoint(Surface& s, int16_t x1, int16_t y1, int16_t x2, int16_t y2, uint32_t color,
                                Keep keep = {}) {
  auto weight = [&](int x, int y, uint32_t w) {
    if (keep(x, y)) PixelWeight(s, x, y, color, w);
  };
  if (!GfxClipLine(s, x1, y1, x2, y2)) return;
  int xx0 = x1, yy0 = y1, xx1 = x2, yy1 = y2;
  if (yy0 > yy1) {
    std::swap(yy0, yy1);
    std::swap(xx0, xx1);
  }
  // Rows [yy0, yy1 + 1] at most; none of them kept: nothing to draw.
  if (yy1 + 1 < s.write_first() || yy0 >= s.write_end()) return;
  int dx = xx1 - xx0;
  int dy = yy1 - yy0;
  if (dx == 0) {
    if (dy > 0) {
      GfxVLine(s, x1, static_cast<int16_t>(yy0), static_cast<int16_t>(yy0 + dy), color);
    } else {
      PutPixelAlpha(s, x1, y1, color, 255);
    }
    return;
  }
  if (dy == 0) {
    // pygame 2.6's SDL2_gfx draws the whole span whichever way it runs (the SDL 1.2 one drew only
    // the first pixel of a right-to-left edge).
    GfxHLine(s, x1, x2, y1, color);
    return;
  }
  int xdir = 1;
  if (dx < 0) {
    xdir = -1;
    dx = -dx;
  }
  uint32_t erracc = 0;
  PutPixelAlpha(s, x1, y1, color, 255);
  // The steps below go from row to row (or column to column); those before the first row whose
  // writes are kept are skipped, their error term worked out at once (it wraps where the sum of
  // the steps' adjustments passes a multiple of 2^32), and the walk stops past the last such row.
  if (dy > dx) {
    const uint32_t erradj = static_cast<uint32_t>((dx << 16) / dy) << 16;
    const int skip = std::max(0, s.write_first() - (yy0 + 1));  // step k draws row yy0 + k
    if (skip > 0) {
      if (skip >= dy - 1) return;
      const uint64_t sum = uint64_t{static_cast<uint32_t>(skip)} * erradj;
      erracc = static_cast<uint32_t>(sum);
      xx0 += xdir * static_cast<int>(sum >> 32);
      yy0 += skip;
      dy -= skip;
    }
    int x0pxdir = xx0 + xdir;
    while (--dy) {
      if (yy0 + 1 >= s.write_end()) break;
      const uint32_t before = erracc;
      erracc += erradj;
      if (erracc <= before) {
        xx0 = x0pxdir;
        x0pxdir += xdir;
      }
      yy0++;
      const uint32_t wgt = (erracc >> 24) & 255;
      weight(static_cast<int16_t>(xx0), static_cast<int16_t>(yy0), 255 - wgt);
      weight(static_cast<int16_t>(x0pxdir), static_cast<int16_t>(yy0), wgt);
    }
  } else {
    const uint32_t erradj = static_cast<uint32_t>((dy << 16) / dx) << 16;
    // Step k draws rows yy0 + w and yy0 + w + 1, w = the wraps so far: skip the steps before the
    // first with w >= need. (A 45-degree edge has erradj 0, which SDL2_gfx's test counts as a wrap
    // at every step.)
    const int need = s.write_first() - 1 - yy0;
    if (need > 0) {
      const uint64_t first = erradj == 0 ? static_cast<uint64_t>(need)
                                         : ((uint64_t{static_cast<uint32_t>(need)} << 32) + erradj - 1) / erradj;
      const uint64_t skip = first - 1;
      if (skip >= static_cast<uint64_t>(dx - 1)) return;
      const uint64_t sum = skip * erradj;
      erracc = static_cast<uint32_t>(sum);
      yy0 += static_cast<int>(erradj == 0 ? skip : sum >> 32);
      xx0 += xdir * static_cast<int>(skip);
      dx -= static_cast<int>(skip);
    }
    int y0p1 = yy0 + 1;
    while (--dx) {
      const uint32_t before = erracc;
      erracc += erradj;
      if (erracc <= before) {
        yy0 = y0p1;
        y0p1++;
      }
      if (yy0 >= s.write_end()) break;
      xx0 += xdir;
      const uint32_t wgt = (erracc >> 24) & 255;
      weight(static_cast<int16_t>(xx0), static_cast<int16_t>(yy0), 255 - wgt);
      weight(static_cast<int16_t>(xx0), static_cast<int16_t>(y0p1), wgt);
    }
  }
}

}  // namespace detail

// ---- pygame.draw ----

// pygame.draw.line(surface, color, a, b, width).
inline void Line(Surface& s, Rgb color, Point a, Point b, int width = 1) {
  if (width < 1) return;
  detail::LineWidth(s, Surface::Map(color), detail::PyInt(a.x), detail::PyInt(a.y), detail::PyInt(b.x),
                    detail::PyInt(b.y), width);
}

// pygame.draw.lines(surface, color, closed, points, width).
inline void Lines(Surface& s, Rgb color, bool closed, const std::vector<Point>& points, int width = 1) {
  const std::size_t n = points.size();
  if (n < 2 || width < 1) return;
  for (std::size_t i = 1; i < n; ++i) Line(s, color, points[i - 1], points[i], width);
  if (closed && n > 2) Line(s, color, points[n - 1], points[0], width);
}

// pygame.draw.polygon(surface, color, points, width): filled when width == 0, else its outline.
inline void Polygon(Surface& s, Rgb color, const std::vector<Point>& points, int width = 0) {
  if (width) {
    Lines(s, color, true, points, width);
    return;
  }
  if (points.size() < 3) return;
  std::vector<int> px, py;
  for (const Point& p : points) {
    px.push_back(detail::PyInt(p.x));
    py.push_back(detail::PyInt(p.y));
  }
  detail::FillPolygon(s, px, py, Surface::Map(color));
}

// pygame.draw.aaline(surface, color, a, b) (blend=1; pygame takes the points as float32).
inline void AaLine(Surface& s, Rgb color, Point a, Point b) {
  detail::AaLine(s, Surface::Map(color), static_cast<float>(a.x), static_cast<float>(a.y), static_cast<float>(b.x),
                 static_cast<float>(b.y));
}

// pygame.draw.aalines(surface, color, closed, points).
inline void AaLines(Surface& s, Rgb color, bool closed, const std::vector<Point>& points) {
  const std::size_t n = points.size();
  if (n < 2) return;
  for (std::size_t i = 1; i < n; ++i) AaLine(s, color, points[i - 1], points[i]);
  if (closed && n > 2) AaLine(s, color, points[n - 1], points[0]);
}

namespace detail {
// pygame's midpoint circle walk (draw.c) for radius r: visit(x, y, y_steps) at each x of the first
// octant, y_steps telling whether y steps down at the next x.
template <typename Visit>
void MidpointCircle(int r, Visit visit) {
  int f = 1 - r, ddf_x = 0, ddf_y = -2 * r, x = 0, y = r;
  while (x < y) {
    if (f >= 0) {
      y--;
      ddf_y += 2;
      f += ddf_y;
    }
    x++;
    ddf_x += 2;
    f += ddf_x + 1;
    visit(x, y, f >= 0);
  }
}
}  // namespace detail

// pygame.draw.circle(surface, color, center, radius), filled (width 0): midpoint circle, centre and
// radius truncated to ints.
inline void Circle(Surface& s, Rgb color, Point center, double radius) {
  const int x0 = detail::PyInt(center.x), y0 = detail::PyInt(center.y);
  const int r = detail::PyInt(radius);
  if (r < 1) return;
  const uint32_t c = Surface::Map(color);
  detail::MidpointCircle(r, [&](int x, int y, bool y_steps) {
    // Rows at +-y only when y is about to step (pygame's guard against overdraw).
    if (y_steps) {
      detail::HorizontalLineClip(s, c, x0 - x, y0 + y - 1, x0 + x - 1);
      detail::HorizontalLineClip(s, c, x0 - x, y0 - y, x0 + x - 1);
    }
    detail::HorizontalLineClip(s, c, x0 - y, y0 + x - 1, x0 + y - 1);
    detail::HorizontalLineClip(s, c, x0 - y, y0 - x, x0 + y - 1);
  });
}

// pygame.draw.circle(surface, color, center, radius, 1): the one-pixel outline (draw.c's
// draw_circle_bresenham_thin: the eight octants' pixels of the same midpoint walk as Circle); a
// radius of 1 is filled (pygame draws width == radius filled).
inline void CircleOutline(Surface& s, Rgb color, Point center, double radius) {
  const int x0 = detail::PyInt(center.x), y0 = detail::PyInt(center.y);
  const int r = detail::PyInt(radius);
  if (r < 1) return;
  if (r == 1) {
    Circle(s, color, center, radius);
    return;
  }
  const uint32_t c = Surface::Map(color);
  detail::MidpointCircle(r, [&](int x, int y, bool /*y_steps*/) {
    s.Set(x0 + x - 1, y0 + y - 1, c);
    s.Set(x0 - x, y0 + y - 1, c);
    s.Set(x0 + x - 1, y0 - y, c);
    s.Set(x0 - x, y0 - y, c);
    s.Set(x0 + y - 1, y0 + x - 1, c);
    s.Set(x0 + y - 1, y0 - x, c);
    s.Set(x0 - y, y0 + x - 1, c);
    s.Set(x0 - y, y0 - x, c);
  });
}

// ---- pygame.gfxdraw ----

// pygame.gfxdraw.aapolygon(surface, points, color) with an opaque colour.
inline void GfxAaPolygon(Surface& s, Rgb color, const std::vector<Point>& points) {
  const std::size_t n = points.size();
  if (n < 3) return;
  const uint32_t c = Surface::Map(color);
  std::vector<int16_t> vx, vy;
  for (const Point& p : points) {
    vx.push_back(detail::GfxCoord(p.x));
    vy.push_back(detail::GfxCoord(p.y));
  }
  for (std::size_t i = 1; i < n; ++i) detail::GfxAaLineNoEndpoint(s, vx[i - 1], vy[i - 1], vx[i], vy[i], c);
  detail::GfxAaLineNoEndpoint(s, vx[n - 1], vy[n - 1], vx[0], vy[0], c);
}

namespace detail {

// A polygon's vertices as gfxdraw takes them (Sint16), on the stack for the few of CarRacing's.
class GfxVertices {
 public:
  explicit GfxVertices(const std::vector<Point>& points) : n_(static_cast<int>(points.size())) {
    if (n_ > kOnStack) heap_.resize(2 * static_cast<std::size_t>(n_));
    int* v = data();
    for (int i = 0; i < n_; ++i) {
      v[2 * i] = GfxCoord(points[static_cast<std::size_t>(i)].x);
      v[2 * i + 1] = GfxCoord(points[static_cast<std::size_t>(i)].y);
    }
  }
  int size() const { return n_; }
  int x(int i) const { return data()[2 * i]; }
  int y(int i) const { return data()[2 * i + 1]; }

 private:
  static constexpr int kOnStack = 16;
  int* data() { return n_ > kOnStack ? heap_.data() : stack_; }
  const int* data() const { return n_ > kOnStack ? heap_.data() : stack_; }
  int n_;
  int stack_[2 * kOnStack] = {};
  std::vector<int> heap_;
};

// filled_polygon's scanlines (SDL2_gfx's filledPolygonColor): for each row, the edges' crossings in
// 16.16 fixed point, sorted, filled pairwise between them rounded inwards. Calls span(y, xa, xb) with
// the Sint16 ends gfxdraw's hline gets, for the rows on the surface whose writes are kept (the others
// draw nothing), in the same order.
template <typename Span>
inline void GfxPolygonSpans(const Surface& s, const GfxVertices& v, Span&& span) {
  const int n = v.size();
  if (n < 3) return;
  struct Edge {
    int y1, y2, x1, x2;  // upper end first; horizontal edges are left out
  };
  constexpr int kOnStack = 16;
  Edge edges_on_stack[kOnStack];
  int ints_on_stack[kOnStack];
  std::vector<Edge> edges_on_heap(n > kOnStack ? static_cast<std::size_t>(n) : 0);
  std::vector<int> ints_on_heap(n > kOnStack ? static_cast<std::size_t>(n) : 0);
  Edge* edges = n > kOnStack ? edges_on_heap.data() : edges_on_stack;
  int* ints = n > kOnStack ? ints_on_heap.data() : ints_on_stack;
  int miny = v.y(0), maxy = v.y(0);
  int count = 0;
  for (int i = 0; i < n; ++i) {
    miny = std::min(miny, v.y(i));
    maxy = std::max(maxy, v.y(i));
    const int ind1 = i ? i - 1 : n - 1, ind2 = i;
    const int y1 = v.y(ind1), y2 = v.y(ind2);
    if (y1 < y2) {
      edges[count++] = {y1, y2, v.x(ind1), v.x(ind2)};
    } else if (y1 > y2) {
      edges[count++] = {y2, y1, v.x(ind2), v.x(ind1)};
    }
  }
  const int y_begin = std::max({miny, 0, s.write_first()});
  const int y_end = std::min({maxy, s.height() - 1, s.write_end() - 1});
  for (int y = y_begin; y <= y_end; ++y) {
    int k = 0;
    for (int e = 0; e < count; ++e) {
      const Edge& edge = edges[e];
      if ((y >= edge.y1 && y < edge.y2) || (y == maxy && y > edge.y1 && y <= edge.y2)) {
        const int frac = Wrap32(int64_t{65536} * (y - edge.y1)) / (edge.y2 - edge.y1);
        const int cross = Wrap32(static_cast<int64_t>(frac) * (edge.x2 - edge.x1) + int64_t{65536} * edge.x1);
        int at = k++;  // insertion sort: a few crossings per row
        for (; at > 0 && ints[at - 1] > cross; --at) ints[at] = ints[at - 1];
        ints[at] = cross;
      }
    }
    for (int i = 0; i + 1 < k; i += 2) {
      int xa = ints[i] + 1;
      xa = (xa >> 16) + ((xa & 32768) >> 15);
      int xb = ints[i + 1] - 1;
      xb = (xb >> 16) + ((xb & 32768) >> 15);
      span(y, static_cast<int16_t>(xa), static_cast<int16_t>(xb));
    }
  }
}

}  // namespace detail

// pygame.gfxdraw.filled_polygon(surface, points, color) with an opaque colour: SDL2_gfx's scanline
// fill, edges crossed in 16.16 fixed point and rounded inwards.
inline void GfxFilledPolygon(Surface& s, Rgb color, const std::vector<Point>& points) {
  const uint32_t c = Surface::Map(color);
  detail::GfxPolygonSpans(s, detail::GfxVertices(points), [&](int y, int16_t xa, int16_t xb) {
    detail::GfxHLine(s, xa, xb, static_cast<int16_t>(y), c);
  });
}

// pygame.gfxdraw.aapolygon and then pygame.gfxdraw.filled_polygon with the same points and colour
// (how Gymnasium's CarRacing draws every polygon): the same pixels as those two calls. The outline's
// blends inside the spans the fill writes next are left out: the fill overwrites them whatever they
// were, and a blend reads no pixel but its own.
inline void GfxAaFilledPolygon(Surface& s, Rgb color, const std::vector<Point>& points) {
  const int n = static_cast<int>(points.size());
  if (n < 3) return;
  const uint32_t c = Surface::Map(color);
  const detail::GfxVertices v(points);
  // The fill's spans, clipped to the surface as gfxdraw's hline clips them, row by row.
  struct Span {
    int y, a, b;
  };
  static thread_local std::vector<Span> spans;
  static thread_local std::vector<int> row_first;  // spans of row y: [row_first[y - y0], row_first[y - y0 + 1])
  spans.clear();
  detail::GfxPolygonSpans(s, v, [&](int y, int16_t xa, int16_t xb) {
    if (xa > xb) std::swap(xa, xb);
    if (xb < 0 || xa > s.width() - 1) return;
    spans.push_back({y, std::max<int>(xa, 0), std::min<int>(xb, s.width() - 1)});
  });
  const int y0 = spans.empty() ? 0 : spans.front().y;
  const int rows = spans.empty() ? 0 : spans.back().y - y0 + 1;
  row_first.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (const Span& span : spans) ++row_first[static_cast<std::size_t>(span.y - y0) + 1];
  for (int r = 0; r < rows; ++r) row_first[static_cast<std::size_t>(r) + 1] += row_first[static_cast<std::size_t>(r)];
  auto outside_fill = [&](int x, int y) {
    const unsigned r = static_cast<unsigned>(y - y0);
    if (r >= static_cast<unsigned>(rows)) return true;
    for (int i = row_first[r]; i < row_first[r + 1]; ++i) {
      const Span& span = spans[static_cast<std::size_t>(i)];
      if (x >= span.a && x <= span.b) return false;
    }
    return true;
  };
  // The edges in aapolygon's order: 0-1, 1-2, ..., then n-1 back to 0.
  for (int i = 1; i < n; ++i) {
    detail::GfxAaLineNoEndpoint(s, static_cast<int16_t>(v.x(i - 1)), static_cast<int16_t>(v.y(i - 1)),
                                static_cast<int16_t>(v.x(i)), static_cast<int16_t>(v.y(i)), c, outside_fill);
  }
  detail::GfxAaLineNoEndpoint(s, static_cast<int16_t>(v.x(n - 1)), static_cast<int16_t>(v.y(n - 1)),
                              static_cast<int16_t>(v.x(0)), static_cast<int16_t>(v.y(0)), c, outside_fill);
  for (const Span& span : spans) {
    detail::FillPixels(s.Row(span.y) + span.a, static_cast<std::size_t>(span.b - span.a + 1), c);
  }
}

// pygame.gfxdraw.hline(surface, x1, x2, y, color) with an opaque colour.
inline void GfxHorizontalLine(Surface& s, Rgb color, int16_t x1, int16_t x2, int16_t y) {
  detail::GfxHLine(s, x1, x2, y, Surface::Map(color));
}

// pygame.gfxdraw.vline(surface, x, y1, y2, color) with an opaque colour.
inline void GfxVerticalLine(Surface& s, Rgb color, int16_t x, int16_t y1, int16_t y2) {
  detail::GfxVLine(s, x, y1, y2, Surface::Map(color));
}

// pygame.gfxdraw.aacircle(surface, x, y, r, color) with an opaque colour: SDL2_gfx's aaellipseColor
// with both radii r, whose 16-bit coordinates (Sint16) wrap as there. Each step blends a pixel and
// its neighbour across the curve by a float32 weight, truncated to a byte.
inline void GfxAaCircle(Surface& s, Rgb color, int16_t x, int16_t y, int16_t rad) {
  if (rad < 0) return;
  const uint32_t c = Surface::Map(color);
  if (rad == 0) {  // rx == 0: a vline of one pixel
    detail::GfxVLine(s, x, y, y, c);
    return;
  }
  auto i16 = [](int v) { return static_cast<int16_t>(v); };
  // The bounding box against the surface, in Sint16 arithmetic.
  if (i16(x + rad) < 0 || i16(x - rad) > s.width() - 1 || i16(y + rad) < 0 || i16(y - rad) > s.height() - 1) return;
  const int a2 = rad * rad, b2 = rad * rad;
  const int ds = 2 * a2, dt = 2 * b2;
  const int16_t xc2 = i16(2 * x), yc2 = i16(2 * y);
  const double sab = std::sqrt(static_cast<double>(a2 + b2));
  const int16_t dxt = i16(static_cast<int>(std::lrint(static_cast<double>(a2) / sab)));
  int t = 0, sv = -2 * a2 * rad, d = 0;
  int16_t xp = x, yp = i16(y - rad), xs = 0, ys = 0;
  auto plot = [&](int16_t px, int16_t py) { detail::PutPixelAlpha(s, px, py, c, 255); };
  auto blend = [&](int16_t px, int16_t py, uint32_t weight) { detail::PixelWeight(s, px, py, c, weight); };
  auto weights = [](int num, int den) {
    float cp = 1.0f;
    if (den != 0) cp = std::min(static_cast<float>(std::abs(num)) / static_cast<float>(std::abs(den)), 1.0f);
    const auto weight = static_cast<uint8_t>(cp * 255);
    return std::make_pair(uint32_t{weight}, uint32_t{static_cast<uint8_t>(255 - weight)});
  };
  plot(xp, yp);  // the four "end points"
  plot(i16(xc2 - xp), yp);
  plot(xp, i16(yc2 - yp));
  plot(i16(xc2 - xp), i16(yc2 - yp));
  for (int i = 1; i <= dxt; ++i) {
    xp = i16(xp - 1);
    d += t - b2;
    if (d >= 0) {
      ys = i16(yp - 1);
    } else if ((d - sv - a2) > 0) {
      if ((2 * d - sv - a2) >= 0) {
        ys = i16(yp + 1);
      } else {
        ys = yp;
        yp = i16(yp + 1);
        d -= sv + a2;
        sv += ds;
      }
    } else {
      yp = i16(yp + 1);
      ys = i16(yp + 1);
      d -= sv + a2;
      sv += ds;
    }
    t -= dt;
    const auto [weight, iweight] = weights(d, sv);
    const int16_t xx = i16(xc2 - xp);
    blend(xp, yp, iweight);  // upper half
    blend(xx, yp, iweight);
    blend(xp, ys, weight);
    blend(xx, ys, weight);
    int16_t yy = i16(yc2 - yp);  // lower half
    blend(xp, yy, iweight);
    blend(xx, yy, iweight);
    yy = i16(yc2 - ys);
    blend(xp, yy, weight);
    blend(xx, yy, weight);
  }
  const int16_t dyt = i16(static_cast<int>(std::lrint(static_cast<double>(b2) / sab)));
  for (int i = 1; i <= dyt; ++i) {
    yp = i16(yp + 1);
    d -= sv + a2;
    if (d <= 0) {
      xs = i16(xp + 1);
    } else if ((d + t - b2) < 0) {
      if ((2 * d + t - b2) <= 0) {
        xs = i16(xp - 1);
      } else {
        xs = xp;
        xp = i16(xp - 1);
        d += t - b2;
        t -= dt;
      }
    } else {
      xp = i16(xp - 1);
      xs = i16(xp - 1);
      d += t - b2;
      t -= dt;
    }
    sv += ds;
    const auto [weight, iweight] = weights(d, t);
    int16_t xx = i16(xc2 - xp);  // left half
    const int16_t yy = i16(yc2 - yp);
    blend(xp, yp, iweight);
    blend(xx, yp, iweight);
    blend(xp, yy, iweight);
    blend(xx, yy, iweight);
    xx = i16(xc2 - xs);  // right half
    blend(xs, yp, weight);
    blend(xx, yp, weight);
    blend(xs, yy, weight);
    blend(xx, yy, weight);
  }
}

// pygame.gfxdraw.filled_circle(surface, x, y, r, color) with an opaque colour: SDL2_gfx's
// filledCircleColor, the midpoint circle's rows as hlines (each row once), in Sint16 arithmetic.
inline void GfxFilledCircle(Surface& s, Rgb color, int16_t x, int16_t y, int16_t rad) {
  if (rad < 0) return;
  const uint32_t c = Surface::Map(color);
  if (rad == 0) {
    detail::PutPixelAlpha(s, x, y, c, 255);
    return;
  }
  auto i16 = [](int v) { return static_cast<int16_t>(v); };
  if (i16(x + rad) < 0 || i16(x - rad) > s.width() - 1 || i16(y + rad) < 0 || i16(y - rad) > s.height() - 1) return;
  int16_t cx = 0, cy = rad, ocx = -1, ocy = -1;  // (Sint16) 0xffff
  int16_t df = i16(1 - rad), d_e = 3, d_se = i16(-2 * rad + 5);
  do {
    const int16_t xpcx = i16(x + cx), xmcx = i16(x - cx), xpcy = i16(x + cy), xmcy = i16(x - cy);
    if (ocy != cy) {
      if (cy > 0) {
        detail::GfxHLine(s, xmcx, xpcx, i16(y + cy), c);
        detail::GfxHLine(s, xmcx, xpcx, i16(y - cy), c);
      } else {
        detail::GfxHLine(s, xmcx, xpcx, y, c);
      }
      ocy = cy;
    }
    if (ocx != cx) {
      if (cx != cy) {
        if (cx > 0) {
          detail::GfxHLine(s, xmcy, xpcy, i16(y - cx), c);
          detail::GfxHLine(s, xmcy, xpcy, i16(y + cx), c);
        } else {
          detail::GfxHLine(s, xmcy, xpcy, y, c);
        }
      }
      ocx = cx;
    }
    if (df < 0) {
      df = i16(df + d_e);
      d_e = i16(d_e + 2);
      d_se = i16(d_se + 2);
    } else {
      df = i16(df + d_se);
      d_e = i16(d_e + 2);
      d_se = i16(d_se + 4);
      cy = i16(cy - 1);
    }
    cx = i16(cx + 1);
  } while (cx <= cy);
}

// ---- Sprites: pygame.image.load, pygame.transform.scale, Surface.blit, pygame.draw.rect ----

// A surface loaded from an image file (pygame.image.load).
using Sprite = ArgbImage;

namespace detail {

// transform.c's stretch(): for each of the `m` destination pixels along an axis, the source pixel
// (of `n`) it copies, stepped with a Bresenham error term in units of 2n and 2m.
inline std::vector<int> StretchMap(int n, int m) {
  std::vector<int> out(static_cast<std::size_t>(m));
  int error = 2 * n - 2 * m, source = 0;
  for (int k = 0; k < m; ++k) {
    out[static_cast<std::size_t>(k)] = source;
    while (error >= 0) {
      ++source;
      error -= 2 * m;
    }
    error += 2 * n;
  }
  return out;
}

// surface.h's ALPHA_BLEND_COMP, which pygame's own blitter (alphablit.c, used for every blit with
// alpha onto a surface without alpha) applies per channel: ((s - d) * a + s) >> 8, plus d.
inline uint32_t BlendChannel(uint32_t src, uint32_t dst, uint32_t alpha) {
  const int s = static_cast<int>(src), d = static_cast<int>(dst);
  return static_cast<uint32_t>((((s - d) * static_cast<int>(alpha) + s) >> 8) + d);
}

inline uint32_t BlendPixel(uint32_t src, uint32_t dst, uint32_t alpha) {
  uint32_t out = 0;
  for (uint32_t shift : {16u, 8u, 0u}) {
    out |= BlendChannel((src >> shift) & 0xffu, (dst >> shift) & 0xffu, alpha) << shift;
  }
  return out;
}

// SDL's BlitRGBtoRGBSurfaceAlpha per channel (its packed form computes the same): the difference
// times alpha, shifted right arithmetically (a floor), added to the destination.
inline uint32_t SurfaceAlphaPixel(uint32_t src, uint32_t dst, uint32_t alpha) {
  uint32_t out = 0;
  for (uint32_t shift : {16u, 8u, 0u}) {
    const int s = static_cast<int>((src >> shift) & 0xffu), d = static_cast<int>((dst >> shift) & 0xffu);
    out |= static_cast<uint32_t>(d + (((s - d) * static_cast<int>(alpha)) >> 8)) << shift;
  }
  return out;
}

}  // namespace detail

// pygame.transform.scale(sprite, (width, height)): nearest pixels as transform.c's stretch() picks
// them (the same size is a copy).
inline Sprite Scale(const Sprite& src, int width, int height) {
  Sprite out{width, height, src.alpha, std::vector<uint32_t>(static_cast<std::size_t>(width) * height)};
  const std::vector<int> xs = detail::StretchMap(src.width, width), ys = detail::StretchMap(src.height, height);
  for (int y = 0; y < height; ++y) {
    const uint32_t* row = &src.argb[static_cast<std::size_t>(ys[static_cast<std::size_t>(y)]) * src.width];
    for (int x = 0; x < width; ++x) {
      out.argb[static_cast<std::size_t>(y) * width + x] = row[xs[static_cast<std::size_t>(x)]];
    }
  }
  return out;
}

// pygame.transform.flip(sprite, flip_x, flip_y).
inline Sprite Flip(const Sprite& src, bool flip_x, bool flip_y) {
  Sprite out{src.width, src.height, src.alpha, std::vector<uint32_t>(src.argb.size())};
  for (int y = 0; y < src.height; ++y) {
    const int from_y = flip_y ? src.height - 1 - y : y;
    for (int x = 0; x < src.width; ++x) {
      const int from_x = flip_x ? src.width - 1 - x : x;
      out.argb[static_cast<std::size_t>(y) * src.width + x] =
          src.argb[static_cast<std::size_t>(from_y) * src.width + from_x];
    }
  }
  return out;
}

// surface.blit(sprite, (x, y)) after sprite.set_alpha(surface_alpha) (255: none set), clipped to
// the surface. Per-pixel alpha (times surface_alpha / 255, truncated, when one is set) blends as
// pygame's own blitter does (ALPHA_BLEND_COMP). An opaque sprite copies; with a surface alpha, SDL
// blends it (SDL_blit_A.c's BlitRGBtoRGBSurfaceAlpha, for the 32-bit surfaces pygame.Surface makes):
// d + ((s - d) * alpha >> 8) per channel.
inline void Blit(Surface& dst, const Sprite& src, int x, int y, int surface_alpha = 255) {
  const int x0 = std::max(x, 0), y0 = std::max(y, 0);
  const int x1 = std::min(x + src.width, dst.width()), y1 = std::min(y + src.height, dst.height());
  const uint32_t modulate = static_cast<uint32_t>(std::clamp(surface_alpha, 0, 255));
  for (int py = y0; py < y1; ++py) {
    const uint32_t* row = &src.argb[static_cast<std::size_t>(py - y) * src.width];
    uint32_t* out = dst.data() + static_cast<std::size_t>(py) * dst.width();
    for (int px = x0; px < x1; ++px) {
      const uint32_t s = row[px - x];
      if (src.alpha) {
        out[px] = detail::BlendPixel(s, out[px], modulate == 255 ? s >> 24 : (s >> 24) * modulate / 255);
      } else if (modulate == 255) {
        out[px] = s & 0xffffffu;
      } else {
        out[px] = detail::SurfaceAlphaPixel(s, out[px], modulate);
      }
    }
  }
}

// pygame.Surface((width, height)) filled with `color`, set_alpha(surface_alpha), blitted at (x, y).
inline void BlitFilled(Surface& dst, Rgb color, int width, int height, int x, int y, int surface_alpha = 255) {
  Sprite solid{width, height, false,
               std::vector<uint32_t>(static_cast<std::size_t>(width) * height, 0xff000000u | Surface::Map(color))};
  Blit(dst, solid, x, y, surface_alpha);
}

// pygame.draw.rect(surface, color, (x, y, width, height), border) for a rect inside the surface:
// filled when border is 0 (or thicker than half the rect), else a frame `border` pixels thick inside
// the rect. pygame draws the frame of a rect that crosses the surface's edge differently (measured:
// it can move a clipped bottom or left side onto the edge); that is not reproduced, so such a rect
// throws std::invalid_argument instead of drawing something else.
inline void Rect(Surface& s, Rgb color, int x, int y, int width, int height, int border = 0) {
  if (width <= 0 || height <= 0 || border < 0) return;
  if (x < 0 || y < 0 || x + width > s.width() || y + height > s.height()) {
    throw std::invalid_argument("raster::Rect: only rects inside the surface are drawn as pygame draws them");
  }
  const uint32_t c = Surface::Map(color);
  const int x2 = x + width - 1, y2 = y + height - 1;
  if (border == 0 || border > width / 2 || border > height / 2) {
    for (int row = y; row <= y2; ++row) detail::HorizontalLineClip(s, c, x, row, x2);
    return;
  }
  for (int i = 0; i < border; ++i) {
    detail::HorizontalLineClip(s, c, x, y + i, x2);
    detail::HorizontalLineClip(s, c, x, y2 - i, x2);
  }
  for (int i = 0; i < (y2 - y) - 2 * border + 1; ++i) {
    detail::HorizontalLineClip(s, c, x, y + border + i, x + border - 1);
    detail::HorizontalLineClip(s, c, x2 - border + 1, y + border + i, x2);
  }
}

// ---- pygame.math ----

// pygame.math.Vector2(p).rotate_rad(angle): the angle reduced to [0, 2 pi), quarter turns within
// pygame's epsilon (1e-6) done exactly, any other angle with libm's sin and cos. A Rotation does the
// angle's part once for the many points a frame rotates by the same angle (the same values).
class Rotation {
 public:
  explicit Rotation(double angle) {
    constexpr double kTwoPi = 2 * 3.14159265358979323846;
    constexpr double kHalfPi = 3.14159265358979323846 / 2;
    constexpr double kEpsilon = 1e-6;
    angle = std::fmod(angle, kTwoPi);
    if (angle < 0) angle += kTwoPi;
    if (std::fmod(angle + kEpsilon, kHalfPi) < 2 * kEpsilon) {
      quarter_turns_ = static_cast<int>((angle + kEpsilon) / kHalfPi) % 4;  // 4: a whole turn
    } else {
      sin_ = std::sin(angle);
      cos_ = std::cos(angle);
    }
  }

  Point operator()(Point p) const {
    switch (quarter_turns_) {
      case 0: return p;
      case 1: return {-p.y, p.x};
      case 2: return {-p.x, -p.y};
      case 3: return {p.y, -p.x};
      default: return {cos_ * p.x - sin_ * p.y, sin_ * p.x + cos_ * p.y};
    }
  }

 private:
  int quarter_turns_ = -1;  // -1: any other angle
  double sin_ = 0.0;
  double cos_ = 1.0;
};

inline Point RotateRad(Point p, double angle) { return Rotation(angle)(p); }

}  // namespace pp::raster
