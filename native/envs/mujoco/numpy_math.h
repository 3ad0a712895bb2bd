// NumPy's arithmetic where Gymnasium's MuJoCo tasks use it on top of the simulation: sums in
// np.sum's order and precision, clipping, and the 2-norm, so rewards match Gymnasium's to the bit.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace pp::mujoco {

// np.sum over a contiguous array: NumPy's pairwise summation (pairwise_sum in
// numpy/_core/src/umath/loops_utils.h.src), accumulating in T. `element(i)` is the i-th value,
// so sums of derived values (squares, clipped squares) need no temporary array.
// Checked against np.sum(np.square(x)) for float32 and float64 and n in {6, 8, 17, 21, 84}.
template <typename T, typename Element>
T NumpySum(const Element& element, std::ptrdiff_t begin, std::ptrdiff_t n) {
  constexpr std::ptrdiff_t kUnroll = 8;
  constexpr std::ptrdiff_t kBlock = 128;  // PW_BLOCKSIZE
  if (n < kUnroll) {
    T res = 0;
    for (std::ptrdiff_t i = 0; i < n; ++i) res += element(begin + i);
    return res;
  }
  if (n <= kBlock) {
    T r[kUnroll];
    for (std::ptrdiff_t j = 0; j < kUnroll; ++j) r[j] = element(begin + j);
    std::ptrdiff_t i = kUnroll;
    for (; i < n - (n % kUnroll); i += kUnroll) {
      for (std::ptrdiff_t j = 0; j < kUnroll; ++j) r[j] += element(begin + i + j);
    }
    T res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += element(begin + i);
    return res;
  }
  std::ptrdiff_t half = n / 2;
  half -= half % kUnroll;
  return NumpySum<T>(element, begin, half) + NumpySum<T>(element, begin + half, n - half);
}

// np.sum(np.square(x)) of a float32 action: float32 squares summed in float32.
inline float SumOfSquares(const float* x, std::ptrdiff_t n) {
  return NumpySum<float>([x](std::ptrdiff_t i) { return x[i] * x[i]; }, 0, n);
}

// np.sum(np.square(np.clip(x, low, high))) of a float64 array (NaN stays NaN, as np.clip).
inline double SumOfClippedSquares(const double* x, std::ptrdiff_t n, double low, double high) {
  return NumpySum<double>(
      [x, low, high](std::ptrdiff_t i) {
        const double c = std::min(std::max(x[i], low), high);
        return c * c;
      },
      0, n);
}

// `weight * np.sum(np.square(action))` with a Python-float weight and a float32 action: under
// NumPy 2's promotion rules (NEP 50) the weight is cast to float32 and the product is float32.
inline float ControlCost(double weight, const float* action, std::ptrdiff_t n) {
  return static_cast<float>(weight) * SumOfSquares(action, n);
}

// np.linalg.norm(v[:2], ord=2) = sqrt(v.dot(v)). NumPy's dot of float64 vectors is BLAS ddot,
// and the OpenBLAS that NumPy's wheels ship computes x*x + y*y with one fused multiply-add on
// CPUs that have FMA (all x86-64 since 2013): sqrt(fma(y, y, x * x)) matched np.linalg.norm on
// 100,000 random vectors here, while sqrt(x * x + y * y) differed by one ulp on 8% of them.
inline double Norm2(double x, double y) { return std::sqrt(std::fma(y, y, x * x)); }

// np.linalg.norm of a 3-vector (e.g. a difference of body positions): the same BLAS ddot, one
// fused multiply-add per further element, sqrt(fma(z, z, fma(y, y, x * x))); matched np.linalg.norm
// on 100,000 random vectors here, while sqrt(x * x + y * y + z * z) differed on 11% of them.
inline double Norm3(const double* v) { return std::sqrt(std::fma(v[2], v[2], std::fma(v[1], v[1], v[0] * v[0]))); }

}  // namespace pp::mujoco
