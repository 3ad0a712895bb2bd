// pygame 2.6.1's pygame.transform.smoothscale on a raster::Surface, integer for integer, as its x86-64
// default ("SSE") backend computes it; AVX2 and AVX-512 code for the same integers where the CPU has it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "envs/common/pygame_raster.h"

namespace pp::raster {

namespace detail {

// One 16-bit lane of the MMX/SSE code pygame 2.6 runs on x86-64 (its "SSE" smoothscale backend,
// src_c/scale_mmx64_gcc.c), which rounds differently from its generic C filters.
inline uint32_t MulHiU16(uint32_t a, uint32_t b) { return ((a & 0xffffu) * (b & 0xffffu)) >> 16; }
// packuswb: a signed 16-bit lane saturated to 0..255.
inline uint8_t PackUs(uint32_t lane) {
  const auto v = static_cast<int16_t>(static_cast<uint16_t>(lane));
  return static_cast<uint8_t>(std::clamp<int>(v, 0, 255));
}
inline uint32_t Channel(uint32_t pixel, int c) { return (pixel >> (8 * c)) & 0xffu; }

// Area-averaging shrink along a line of `n` pixels read with stride `step`, into `m` pixels
// (filter_shrink_X_SSE's arithmetic: 14-bit fixed point, 16-bit accumulators): lines `a` and `b` at
// once (b == a and db == da for one line).
#if defined(__SSE2__)
// The arithmetic of pygame's MMX code (paddw, pmulhuw, packuswb) on 16-bit lanes, as there: four
// lanes (the channels) per line, two lines per register. Where the outputs fall depends on n and m
// only: the loop runs from one output's boundary pixel to the next (the pixels between are summed).
inline void ShrinkLinePair(const uint32_t* a, const uint32_t* b, int n, int step, uint32_t* da, uint32_t* db, int m,
                           int dst_step) {
  const uint32_t space = static_cast<uint32_t>(0x4000 * n / m);
  const uint32_t recip = 0x40000000u / space;
  auto lanes = [](uint32_t v) { return _mm_set1_epi16(static_cast<int16_t>(static_cast<uint16_t>(v))); };
  auto load = [&](int i) {
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(i) * step;
    return _mm_unpacklo_epi8(
        _mm_unpacklo_epi32(_mm_cvtsi32_si128(static_cast<int>(a[at])), _mm_cvtsi32_si128(static_cast<int>(b[at]))),
        _mm_setzero_si128());
  };
  const __m128i recip_v = lanes(recip);
  __m128i acc = _mm_setzero_si128();
  uint32_t counter = space;
  int i = 0;
  const __m128i zero = _mm_setzero_si128();
  for (int out = 0; out < m; ++out) {
    // The pixels wholly inside this output: each takes 0x4000 off the counter. (The 16-bit sums
    // wrap as pygame's do; the order of the additions does not change them.)
    if (step == 1 && counter > 0x4000) {  // along a row: two pixels of a line per load
      const int k = std::min(static_cast<int>((counter - 1) / 0x4000), n - i);
      __m128i sa = zero, sb = zero;  // lanes 0-3: even pixels of the run, 4-7: odd ones
      int j = 0;
      for (; j + 2 <= k; j += 2) {
        sa = _mm_add_epi16(sa, _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + i + j)), zero));
        sb = _mm_add_epi16(sb, _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + i + j)), zero));
      }
      if (j < k) {
        sa = _mm_add_epi16(sa, _mm_unpacklo_epi8(_mm_cvtsi32_si128(static_cast<int>(a[i + j])), zero));
        sb = _mm_add_epi16(sb, _mm_unpacklo_epi8(_mm_cvtsi32_si128(static_cast<int>(b[i + j])), zero));
      }
      sa = _mm_add_epi16(sa, _mm_srli_si128(sa, 8));
      sb = _mm_add_epi16(sb, _mm_srli_si128(sb, 8));
      acc = _mm_add_epi16(acc, _mm_unpacklo_epi64(sa, sb));
      i += k;
      counter -= static_cast<uint32_t>(k) * 0x4000;
    }
    while (counter > 0x4000 && i < n) {
      acc = _mm_add_epi16(acc, load(i++));
      counter -= 0x4000;
    }
    if (i == n) return;  // fewer outputs than m: the rest stay as they were
    const uint32_t frac = (0x4000 - counter) & 0xffffu;
    const __m128i s4 = _mm_slli_epi16(load(i++), 2);
    const __m128i head = _mm_add_epi16(_mm_mulhi_epu16(s4, lanes(counter)), acc);
    acc = _mm_mulhi_epu16(s4, lanes(frac));
    const __m128i value = _mm_packus_epi16(_mm_mulhi_epu16(head, recip_v), _mm_setzero_si128());
    da[static_cast<std::ptrdiff_t>(out) * dst_step] = static_cast<uint32_t>(_mm_cvtsi128_si32(value));
    db[static_cast<std::ptrdiff_t>(out) * dst_step] =
        static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(value, 4)));
    counter = counter + space - 0x4000;
  }
}

#if defined(PP_RASTER_AVX2)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
// GCC 12's own AVX-512 intrinsics (_mm512_undefined_epi32's self-initialised `__Y`) warn
// "may be used uninitialized" once inlined at -O3 without LTO (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define PP_SMOOTHSCALE_GCC12_PRAGMA 1
#endif
// Where ShrinkLinePair's outputs fall along a line of n pixels shrunk into m: it depends on n and m
// only, so it is worked out once for all the lines of an axis. Output `out` sums `count` pixels
// whole from `start`, then splits the boundary pixel start + count by `head` (its part in this
// output) and `tail` (its part in the next). Returns how many outputs are written (m, or fewer when
// the pixels run out first: the rest stay as they were, as in pygame).
struct ShrinkStep {
  int start, count;
  uint32_t head, tail;
};
inline int PlanShrink(int n, int m, ShrinkStep* plan) {
  const uint32_t space = static_cast<uint32_t>(0x4000 * n / m);
  uint32_t counter = space;
  int i = 0;
  for (int out = 0; out < m; ++out) {
    int k = 0;
    if (counter > 0x4000) {
      k = std::min(static_cast<int>((counter - 1) / 0x4000), n - i);
      counter -= static_cast<uint32_t>(k) * 0x4000;
    }
    if (i + k == n) return out;
    plan[out] = {i, k, counter & 0xffffu, (0x4000 - counter) & 0xffffu};
    i += k + 1;
    counter = counter + space - 0x4000;
  }
  return m;
}

// The vector paths' fixed-point reciprocal of an output's width in source pixels (0x4000 * n / m,
// in 1/0x4000 units), as 16 bits: 0x40000000 / width.
inline uint16_t ShrinkRecip(int n, int m) {
  return static_cast<uint16_t>(0x40000000u / static_cast<uint32_t>(0x4000 * n / m));
}

// One output of the vector ShrinkRowPair paths, from the sums of the pixels wholly inside it (`ha`:
// line a's two half-sums per channel, `hb` line b's): the boundary pixels (`pa`, `pb`) split into
// this output (head) and the next (tail, left in `acc`), as the SSE2 code does. Inlined into the
// AVX2 and AVX-512 paths (plain SSE2, which both have).
inline void FinishShrinkPair(__m128i ha, __m128i hb, uint32_t pa, uint32_t pb, const ShrinkStep& step, __m128i recip_v,
                             __m128i& acc, uint32_t* da, uint32_t* db) {
  const __m128i zero = _mm_setzero_si128();
  acc = _mm_add_epi16(acc, _mm_add_epi16(_mm_unpacklo_epi64(ha, hb), _mm_unpackhi_epi64(ha, hb)));
  const __m128i pixel = _mm_unpacklo_epi8(
      _mm_unpacklo_epi32(_mm_cvtsi32_si128(static_cast<int>(pa)), _mm_cvtsi32_si128(static_cast<int>(pb))), zero);
  const __m128i s4 = _mm_slli_epi16(pixel, 2);
  const __m128i head = _mm_add_epi16(_mm_mulhi_epu16(s4, _mm_set1_epi16(static_cast<int16_t>(step.head))), acc);
  acc = _mm_mulhi_epu16(s4, _mm_set1_epi16(static_cast<int16_t>(step.tail)));
  const __m128i value = _mm_packus_epi16(_mm_mulhi_epu16(head, recip_v), zero);
  *da = static_cast<uint32_t>(_mm_cvtsi128_si32(value));
  *db = static_cast<uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(value, 4)));
}

// ShrinkLinePair along rows (step 1, dst_step 1) with AVX2, following a PlanShrink plan: the pixels
// wholly inside an output are summed four at a time per line, widened to 16-bit lanes (the lanes of
// pixels past them masked off, and no pixel read outside the line); the boundary pixel's split, the
// accumulators and the outputs are the SSE2 code's, instruction for instruction. The 16-bit sums
// wrap as pygame's do, and wrapping sums do not depend on the order of the additions, so every
// output is the same integer.
__attribute__((target("avx2"))) inline void ShrinkRowPairAvx2(const uint32_t* a, const uint32_t* b, int n, uint32_t* da,
                                                              uint32_t* db, int m, const ShrinkStep* plan,
                                                              int outputs) {
  const __m128i recip_v = _mm_set1_epi16(static_cast<int16_t>(ShrinkRecip(n, m)));
  const __m128i zero = _mm_setzero_si128();
  const __m128i index = _mm_setr_epi32(0, 1, 2, 3);
  const __m256i index4 = _mm256_setr_epi64x(0, 1, 2, 3);  // a pixel widened: four 16-bit lanes
#define PP_WIDEN(p) _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))
  __m128i acc = zero;
  for (int out = 0; out < outputs; ++out) {
    const ShrinkStep& step = plan[out];
    const uint32_t* pa = a + step.start;
    const uint32_t* pb = b + step.start;
    __m256i sa = _mm256_setzero_si256(), sb = _mm256_setzero_si256();  // 4 pixels x 4 channels per line
    const int chunks = (step.count + 3) / 4;
    if (step.start + 4 * chunks <= n) {  // whole chunks of four pixels stay on the line
      int j = 0;
      for (; j + 4 < step.count; j += 4) {
        sa = _mm256_add_epi16(sa, PP_WIDEN(pa + j));
        sb = _mm256_add_epi16(sb, PP_WIDEN(pb + j));
      }
      if (j < step.count) {  // the last 1 to 4 pixels: the lanes of those past them masked off
        const __m256i mask = _mm256_cmpgt_epi64(_mm256_set1_epi64x(step.count - j), index4);
        sa = _mm256_add_epi16(sa, _mm256_and_si256(PP_WIDEN(pa + j), mask));
        sb = _mm256_add_epi16(sb, _mm256_and_si256(PP_WIDEN(pb + j), mask));
      }
    } else {
      for (int j = 0; j < step.count; j += 4) {
        const __m128i mask = _mm_cmpgt_epi32(_mm_set1_epi32(step.count - j), index);
        sa = _mm256_add_epi16(sa, _mm256_cvtepu8_epi16(_mm_maskload_epi32(reinterpret_cast<const int*>(pa + j), mask)));
        sb = _mm256_add_epi16(sb, _mm256_cvtepu8_epi16(_mm_maskload_epi32(reinterpret_cast<const int*>(pb + j), mask)));
      }
    }
    // Lanes of pixels 0+2 and 1+3 per line, then lanes 0-3 line a's sums, 4-7 line b's.
    const __m128i ha = _mm_add_epi16(_mm256_castsi256_si128(sa), _mm256_extracti128_si256(sa, 1));
    const __m128i hb = _mm_add_epi16(_mm256_castsi256_si128(sb), _mm256_extracti128_si256(sb, 1));
    FinishShrinkPair(ha, hb, a[step.start + step.count], b[step.start + step.count], step, recip_v, acc, da + out,
                     db + out);
  }
#undef PP_WIDEN
}

// ShrinkRowPairAvx2 with AVX-512: eight pixels of a line per load, widened to 32 16-bit lanes, the
// loads masked to the output's pixels (nothing outside them is read); the same sums and the same
// boundary arithmetic, so the same outputs.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline void ShrinkRowPairAvx512(const uint32_t* a,
                                                                                     const uint32_t* b, int n,
                                                                                     uint32_t* da, uint32_t* db, int m,
                                                                                     const ShrinkStep* plan,
                                                                                     int outputs) {
  const __m128i recip_v = _mm_set1_epi16(static_cast<int16_t>(ShrinkRecip(n, m)));
  const __m128i zero = _mm_setzero_si128();
  __m128i acc = zero;
  for (int out = 0; out < outputs; ++out) {
    const ShrinkStep& step = plan[out];
    const uint32_t* pa = a + step.start;
    const uint32_t* pb = b + step.start;
    __m512i sa = _mm512_setzero_si512(), sb = _mm512_setzero_si512();  // 8 pixels x 4 channels per line
    for (int j = 0; j < step.count; j += 8) {
      const int pixels = std::min(step.count - j, 8);
      const __mmask32 bytes = pixels == 8 ? ~__mmask32{0} : (__mmask32{1} << (4 * pixels)) - 1;
      sa = _mm512_add_epi16(sa, _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(bytes, pa + j)));
      sb = _mm512_add_epi16(sb, _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(bytes, pb + j)));
    }
    // Lanes of pixels 0+4, 1+5, 2+6, 3+7, then 0+2 and 1+3 per line, then lanes 0-3 line a's, 4-7 b's.
    const __m256i qa = _mm256_add_epi16(_mm512_castsi512_si256(sa), _mm512_extracti64x4_epi64(sa, 1));
    const __m256i qb = _mm256_add_epi16(_mm512_castsi512_si256(sb), _mm512_extracti64x4_epi64(sb, 1));
    const __m128i ha = _mm_add_epi16(_mm256_castsi256_si128(qa), _mm256_extracti128_si256(qa, 1));
    const __m128i hb = _mm_add_epi16(_mm256_castsi256_si128(qb), _mm256_extracti128_si256(qb, 1));
    FinishShrinkPair(ha, hb, a[step.start + step.count], b[step.start + step.count], step, recip_v, acc, da + out,
                     db + out);
  }
}

// ShrinkRowPairAvx512 on four lines at once: the same sums, folded into one register (lanes 0-3
// line 0's, 4-7 line 1's, ...), the boundary pixels' split done for the four lines together. Each
// lane does the SSE2 code's arithmetic on its own line and channel, so the outputs are the same.
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline void ShrinkRowQuadAvx512(const uint32_t* const* src,
                                                                                     uint32_t* const* dst, int n, int m,
                                                                                     const ShrinkStep* plan,
                                                                                     int outputs) {
  const __m256i recip_v = _mm256_set1_epi16(static_cast<int16_t>(ShrinkRecip(n, m)));
  const __m512i compact = _mm512_setr_epi64(0, 2, 4, 6, 0, 2, 4, 6);
  const uint32_t *s0 = src[0], *s1 = src[1], *s2 = src[2], *s3 = src[3];
  __m256i acc = _mm256_setzero_si256();
  for (int out = 0; out < outputs; ++out) {
    const ShrinkStep& step = plan[out];
    __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;  // 8 pixels x 4 channels per line
    for (int j = 0; j < step.count; j += 8) {
      const int pixels = std::min(step.count - j, 8);
      const __mmask32 bytes = pixels == 8 ? ~__mmask32{0} : (__mmask32{1} << (4 * pixels)) - 1;
      const int at = step.start + j;
      a = _mm512_add_epi16(a, _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(bytes, s0 + at)));
      b = _mm512_add_epi16(b, _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(bytes, s1 + at)));
      c = _mm512_add_epi16(c, _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(bytes, s2 + at)));
      d = _mm512_add_epi16(d, _mm512_cvtepu8_epi16(_mm256_maskz_loadu_epi8(bytes, s3 + at)));
    }
    // 128-bit lanes of pixels (0+4, 1+5) and (2+6, 3+7) per line, then (even, odd) per line, then
    // each line's sum in the low half of its lane, then the four sums side by side.
    const __m512i ab = _mm512_add_epi16(_mm512_shuffle_i64x2(a, b, 0x44), _mm512_shuffle_i64x2(a, b, 0xee));
    const __m512i cd = _mm512_add_epi16(_mm512_shuffle_i64x2(c, d, 0x44), _mm512_shuffle_i64x2(c, d, 0xee));
    const __m512i halves = _mm512_add_epi16(_mm512_shuffle_i64x2(ab, cd, 0x88), _mm512_shuffle_i64x2(ab, cd, 0xdd));
    const __m512i sums = _mm512_add_epi16(halves, _mm512_bsrli_epi128(halves, 8));
    acc = _mm256_add_epi16(acc, _mm512_castsi512_si256(_mm512_permutexvar_epi64(compact, sums)));
    const int at = step.start + step.count;
    const __m128i pixels = _mm_setr_epi32(static_cast<int>(s0[at]), static_cast<int>(s1[at]), static_cast<int>(s2[at]),
                                          static_cast<int>(s3[at]));
    const __m256i s4 = _mm256_slli_epi16(_mm256_cvtepu8_epi16(pixels), 2);
    const __m256i head =
        _mm256_add_epi16(_mm256_mulhi_epu16(s4, _mm256_set1_epi16(static_cast<int16_t>(step.head))), acc);
    acc = _mm256_mulhi_epu16(s4, _mm256_set1_epi16(static_cast<int16_t>(step.tail)));
    // packus works within each 128-bit half: lines 0, 1 in bytes 0-7, lines 2, 3 in bytes 16-23.
    const __m256i value = _mm256_packus_epi16(_mm256_mulhi_epu16(head, recip_v), _mm256_setzero_si256());
    dst[0][out] = static_cast<uint32_t>(_mm256_extract_epi32(value, 0));
    dst[1][out] = static_cast<uint32_t>(_mm256_extract_epi32(value, 1));
    dst[2][out] = static_cast<uint32_t>(_mm256_extract_epi32(value, 4));
    dst[3][out] = static_cast<uint32_t>(_mm256_extract_epi32(value, 5));
  }
}

// ShrinkLinePair down columns (lines `columns` side by side, step `stride`) with AVX2, four columns
// at a time in the lanes of one register: each lane does the SSE2 code's arithmetic on its own
// column and channel, so the outputs are the same. Columns [0, 4 * (columns / 4)) only.
__attribute__((target("avx2"))) inline void ShrinkColumnsAvx2(const uint32_t* src, int columns, int n, int stride,
                                                              uint32_t* dst, int m, int dst_stride,
                                                              const ShrinkStep* plan, int outputs) {
  const __m256i recip_v = _mm256_set1_epi16(static_cast<int16_t>(ShrinkRecip(n, m)));
#define PP_WIDEN(row, column) \
  _mm256_cvtepu8_epi16(       \
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + static_cast<std::ptrdiff_t>(row) * stride + (column))))
  for (int c = 0; c + 4 <= columns; c += 4) {
    __m256i acc = _mm256_setzero_si256();
    for (int out = 0; out < outputs; ++out) {
      const ShrinkStep& step = plan[out];
      for (int r = step.start; r < step.start + step.count; ++r) acc = _mm256_add_epi16(acc, PP_WIDEN(r, c));
      const __m256i s4 = _mm256_slli_epi16(PP_WIDEN(step.start + step.count, c), 2);
      const __m256i head =
          _mm256_add_epi16(_mm256_mulhi_epu16(s4, _mm256_set1_epi16(static_cast<int16_t>(step.head))), acc);
      acc = _mm256_mulhi_epu16(s4, _mm256_set1_epi16(static_cast<int16_t>(step.tail)));
      // packus works within each 128-bit half: columns c, c+1 land in bytes 0-7, c+2, c+3 in 16-23.
      const __m256i packed = _mm256_packus_epi16(_mm256_mulhi_epu16(head, recip_v), _mm256_setzero_si256());
      _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + static_cast<std::ptrdiff_t>(out) * dst_stride + c),
                       _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));
    }
  }
#undef PP_WIDEN
}

#if defined(PP_SMOOTHSCALE_GCC12_PRAGMA)
#pragma GCC diagnostic pop
#undef PP_SMOOTHSCALE_GCC12_PRAGMA
#endif
#endif
#else
// The same arithmetic, one channel at a time.
inline void ShrinkLinePair(const uint32_t* a, const uint32_t* b, int n, int step, uint32_t* da, uint32_t* db, int m,
                           int dst_step) {
  const uint32_t space = static_cast<uint32_t>(0x4000 * n / m);
  const uint32_t recip = 0x40000000u / space;
  for (int line = 0; line < 2; ++line) {
    const uint32_t* src = line ? b : a;
    uint32_t* dst = line ? db : da;
    uint32_t counter = space;
    uint32_t acc[4] = {0, 0, 0, 0};
    int out = 0;
    for (int i = 0; i < n; ++i) {
      const uint32_t px = src[static_cast<std::ptrdiff_t>(i) * step];
      if (counter > 0x4000) {
        for (int c = 0; c < 4; ++c) acc[c] = (acc[c] + Channel(px, c)) & 0xffffu;
        counter -= 0x4000;
        continue;
      }
      const uint32_t frac = (0x4000 - counter) & 0xffffu;
      uint32_t value = 0;
      for (int c = 0; c < 4; ++c) {
        const uint32_t s4 = Channel(px, c) << 2;
        const uint32_t head = (MulHiU16(s4, counter) + acc[c]) & 0xffffu;
        acc[c] = MulHiU16(s4, frac);
        value |= uint32_t{PackUs(MulHiU16(head, recip))} << (8 * c);
      }
      if (out < m) dst[static_cast<std::ptrdiff_t>(out++) * dst_step] = value;
      counter = counter + space - 0x4000;
    }
  }
}
#endif

// Bilinear expand along a line (filter_expand_X_SSE_gcc / filter_expand_Y_SSE: 8-bit weights).
inline void ExpandLine(const uint32_t* src, int n, int step, uint32_t* dst, int m, int dst_step) {
  for (int x = 0; x < m; ++x) {
    const int idx = x * (n - 1) / m;
    const uint32_t w1 = static_cast<uint32_t>(0x100 * ((x * (n - 1)) % m) / m);
    const uint32_t w0 = 0x100 - w1;
    const uint32_t p0 = src[static_cast<std::ptrdiff_t>(idx) * step];
    // With weight 0 the next pixel does not count (pygame reads past a 1-pixel line there).
    const uint32_t p1 = w1 ? src[static_cast<std::ptrdiff_t>(idx + 1) * step] : 0u;
    uint32_t value = 0;
    for (int c = 0; c < 4; ++c) {
      const uint32_t sum = ((Channel(p0, c) * w0) + (Channel(p1, c) * w1)) & 0xffffu;
      value |= uint32_t{PackUs(sum >> 8)} << (8 * c);
    }
    dst[static_cast<std::ptrdiff_t>(x) * dst_step] = value;
  }
}

// The shrink along Y keeps its accumulators per column across rows, exactly as along X.
inline void ScaleAxis(const uint32_t* src, int lines, int n, int line_stride, int step, uint32_t* dst, int m,
                      int dst_line_stride, int dst_step, Simd simd) {
#if defined(PP_RASTER_AVX2)
  if (simd != Simd::kSse2 && step == 1 && dst_step == 1 && m < n && CpuHasAvx2()) {
    // The plan on the stack for an observation's few outputs (nothing allocated per step).
    constexpr int kOnStack = 256;
    ShrinkStep on_stack[kOnStack];
    std::vector<ShrinkStep> on_heap(m > kOnStack ? static_cast<std::size_t>(m) : 0);
    ShrinkStep* steps = m > kOnStack ? on_heap.data() : on_stack;
    const int outputs = PlanShrink(n, m, steps);
    const bool avx512 = simd == Simd::kAuto && CpuHasAvx512Bw();
    const std::size_t line_bytes = static_cast<std::size_t>(n) * sizeof(uint32_t);
    const std::size_t out_bytes = static_cast<std::size_t>(outputs) * sizeof(uint32_t);
    auto line = [&](int l) { return src + static_cast<std::ptrdiff_t>(l) * line_stride; };
    auto out = [&](int l) { return dst + static_cast<std::ptrdiff_t>(l) * dst_line_stride; };
    // Lines l and l + 1 equal to the two before (a quarter of CarRacing's rows: flat colour, edges
    // straight down) have the same outputs: copied.
    auto same_as_before = [&](int l) {
      return l >= 2 && l + 1 < lines && std::memcmp(line(l), line(l - 2), line_bytes) == 0 &&
             std::memcmp(line(l + 1), line(l - 1), line_bytes) == 0;
    };
    auto copy_before = [&](int l) {
      std::memcpy(out(l), out(l - 2), out_bytes);
      std::memcpy(out(l + 1), out(l - 1), out_bytes);
    };
    auto pair = [&](int l) {  // this line and the next, or the last one alone
      const int l2 = l + 1 < lines ? l + 1 : l;
      if (avx512) {
        ShrinkRowPairAvx512(line(l), line(l2), n, out(l), out(l2), m, steps, outputs);
      } else {
        ShrinkRowPairAvx2(line(l), line(l2), n, out(l), out(l2), m, steps, outputs);
      }
    };
    int l = 0;
    if (avx512) {  // four lines at a time, each pair copied instead where it can be
      for (; l + 4 <= lines; l += 4) {
        const bool copy_first = same_as_before(l);
        const bool copy_second = same_as_before(l + 2);  // (after the first pair's outputs are there)
        if (!copy_first && !copy_second) {
          const uint32_t* const quad_src[4] = {line(l), line(l + 1), line(l + 2), line(l + 3)};
          uint32_t* const quad_dst[4] = {out(l), out(l + 1), out(l + 2), out(l + 3)};
          ShrinkRowQuadAvx512(quad_src, quad_dst, n, m, steps, outputs);
          continue;
        }
        if (copy_first) {
          copy_before(l);
        } else {
          pair(l);
        }
        if (copy_second) {
          copy_before(l + 2);
        } else {
          pair(l + 2);
        }
      }
    }
    for (; l < lines; l += 2) {
      if (same_as_before(l)) {
        copy_before(l);
      } else {
        pair(l);
      }
    }
    return;
  }
  if (simd != Simd::kSse2 && line_stride == 1 && dst_line_stride == 1 && m < n && lines >= 4 && CpuHasAvx2()) {
    // Down columns: four at a time, then the last few (each column's outputs are its own).
    constexpr int kOnStack = 256;
    ShrinkStep on_stack[kOnStack];
    std::vector<ShrinkStep> on_heap(m > kOnStack ? static_cast<std::size_t>(m) : 0);
    ShrinkStep* steps = m > kOnStack ? on_heap.data() : on_stack;
    const int outputs = PlanShrink(n, m, steps);
    ShrinkColumnsAvx2(src, lines, n, step, dst, m, dst_step, steps, outputs);
    for (int l = lines - lines % 4; l < lines; l += 2) {
      const bool pair = l + 1 < lines;
      ShrinkLinePair(src + l, pair ? src + l + 1 : src + l, n, step, dst + l, pair ? dst + l + 1 : dst + l, m,
                     dst_step);
    }
    return;
  }
#else
  (void)simd;
#endif
  for (int l = 0; l < lines; ++l) {
    const uint32_t* s = src + static_cast<std::ptrdiff_t>(l) * line_stride;
    uint32_t* d = dst + static_cast<std::ptrdiff_t>(l) * dst_line_stride;
    if (m >= n) {
      ExpandLine(s, n, step, d, m, dst_step);
    } else if (l + 1 < lines) {  // this line and the next
      ShrinkLinePair(s, s + line_stride, n, step, d, d + dst_line_stride, m, dst_step);
      ++l;
    } else {
      ShrinkLinePair(s, s, n, step, d, d, m, dst_step);
    }
  }
}

}  // namespace detail

// pygame.transform.smoothscale in two parts, for a caller that draws a big surface a band of rows
// at a time and shrinks each band along its rows while it is still in the cache: SmoothScaleRows
// for rows [first, end) (each row's outputs are its own), over every row once, then
// SmoothScaleColumns. `tmp` holds the rows' outputs in between (width() x src.height()).
inline void SmoothScaleRows(const Surface& src, int first, int end, int width, std::vector<uint32_t>& tmp,
                            detail::Simd simd = detail::Simd::kAuto) {
  const int sw = src.width(), sh = src.height();
  tmp.resize(static_cast<std::size_t>(width) * sh);
  if (first >= end) return;
  if (width == sw) {
    for (int y = first; y < end; ++y)
      std::copy(src.Row(y), src.Row(y) + sw, tmp.begin() + static_cast<std::ptrdiff_t>(y) * sw);
  } else {
    // Row `first` and the step to the next row, in memory.
    const int row_stride = src.bottom_up() ? -sw : sw;
    detail::ScaleAxis(src.Row(first), end - first, sw, row_stride, 1,
                      tmp.data() + static_cast<std::ptrdiff_t>(first) * width, width, width, 1, simd);
  }
}

inline void SmoothScaleColumns(const std::vector<uint32_t>& tmp, int src_height, Surface& dst,
                               detail::Simd simd = detail::Simd::kAuto) {
  const int width = dst.width(), height = dst.height();
  if (height == src_height) {
    std::copy(tmp.begin(), tmp.begin() + static_cast<std::ptrdiff_t>(width) * height, dst.data());
  } else {
    detail::ScaleAxis(tmp.data(), width, src_height, 1, width, dst.data(), height, 1, width, simd);
  }
}

// pygame.transform.smoothscale(surface, (width, height)) as pygame 2.6 computes it on x86-64 (its
// default "SSE" backend): X first, then Y, each an area average when shrinking and a bilinear
// filter when growing.
// Into `dst` (of the target size), with `tmp` as the scratch line buffer: what an env that scales
// every step calls, so that nothing is allocated once both have grown to size.
// `simd`: which code it may take (for the test that compares them: kAuto, the best, otherwise).
inline void SmoothScale(const Surface& src, Surface& dst, std::vector<uint32_t>& tmp,
                        detail::Simd simd = detail::Simd::kAuto) {
  SmoothScaleRows(src, 0, src.height(), dst.width(), tmp, simd);
  SmoothScaleColumns(tmp, src.height(), dst, simd);
}

inline Surface SmoothScale(const Surface& src, int width, int height, detail::Simd simd = detail::Simd::kAuto) {
  Surface dst(width, height);
  std::vector<uint32_t> tmp;
  SmoothScale(src, dst, tmp, simd);
  return dst;
}

}  // namespace pp::raster
