// np.sin and np.cos of float32 values as NumPy 2.x computes them on x86-64 and AArch64, for envs whose
// reference does float32 trigonometry (Gymnasium's classic-control render() of float32 states).
#pragma once

#include <cmath>
#include <limits>

namespace pp::numpy_trig {

// Whether NumPy runs its SIMD float32 sin/cos here. NumPy builds that loop
// (numpy/_core/src/umath/loops_trigonometric.dispatch.cpp) for its x86-64-v3 and v4 targets (AVX2
// with FMA3, AVX-512) and AArch64, and takes libm's sinf/cosf below them (its x86-64-v2 baseline).
// float64 sin/cos are libm's on every CPU (NumPy dropped their SIMD loop): std::sin/std::cos.
inline bool SimdFloat32() {
#if defined(__x86_64__)
  static const bool simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                           __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("f16c");
  return simd;
#elif defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

namespace detail {

// NumPy's simd_sincos_f32, one lane: Cody-Waite reduction by pi/2 in three fused steps, then its
// minimax polynomials for sin and cos on [-pi/4, pi/4], picked and signed by the quadrant. The
// fused multiply-adds are std::fma (one rounding each, as the vector FMA), whatever the build flags.
inline float SinCos(float x, bool cosine) {
  if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
  // Beyond these, Cody-Waite loses accuracy and NumPy calls libm for the lane.
  if (!(std::fabs(x) <= (cosine ? 71476.0625f : 117435.992f))) return cosine ? std::cos(x) : std::sin(x);
  constexpr float kRintMagic = 0x1.800000p+23f;              // adding and subtracting it rounds to nearest even
  float quadrant = std::fma(x, 0x1.45f306p-1f, kRintMagic);  // x * 2/pi, rounded
  quadrant = quadrant - kRintMagic;
  float r = std::fma(quadrant, -0x1.921fb0p+00f, x);
  r = std::fma(quadrant, -0x1.5110b4p-22f, r);
  r = std::fma(quadrant, -0x1.846988p-48f, r);
  const float r2 = r * r;
  float c = std::fma(0x1.98e616p-16f, r2, -0x1.6c06dcp-10f);
  c = std::fma(c, r2, 0x1.55553cp-05f);
  c = std::fma(c, r2, -0x1.000000p-01f);
  c = std::fma(c, r2, 0x1.000000p+00f);
  float s = std::fma(0x1.7d3bbcp-19f, r2, -0x1.a06bbap-13f);
  s = std::fma(s, r2, 0x1.11119ap-07f);
  s = std::fma(s, r2, -0x1.555556p-03f);
  s = std::fma(s, r2, 0.0f);
  s = std::fma(s, r, r);
  const int q = static_cast<int>(quadrant) + (cosine ? 1 : 0);
  const float v = (q & 1) == 0 ? s : c;
  return (q & 2) ? 0.0f - v : v;
}

}  // namespace detail

// np.sin(np.float32(x)).
inline float Sin(float x) { return SimdFloat32() ? detail::SinCos(x, false) : std::sin(x); }
// np.cos(np.float32(x)).
inline float Cos(float x) { return SimdFloat32() ? detail::SinCos(x, true) : std::cos(x); }

}  // namespace pp::numpy_trig
