// dm_control.utils.rewards.tolerance and its sigmoids, with NumPy's arithmetic: what every suite
// task's reward is made of.
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>

namespace pp::dm_control {

enum class Sigmoid { kGaussian, kHyperbolic, kLongTail, kReciprocal, kCosine, kLinear, kQuadratic, kTanhSquared };

constexpr double kInf = std::numeric_limits<double>::infinity();
// rewards._DEFAULT_VALUE_AT_MARGIN
constexpr double kDefaultValueAtMargin = 0.1;

// Whether tolerance() was given a NumPy float64 scalar or an array element: `y ** 2` of a scalar
// is libm's pow (NumPy's scalar power), of an array it is y * y (NumPy's square fast path). They
// differ in the last bit for some y.
enum class Operand { kScalar, kArray };

// libm's pow, called at run time: the compiler folds pow(y, 2.0) into y * y, which is the array
// case, not the scalar's.
inline double LibmPow(double y, double exponent) {
  volatile double e = exponent;
  return std::pow(y, e);
}
inline double Square(double y, Operand operand) { return operand == Operand::kScalar ? LibmPow(y, 2.0) : y * y; }

// rewards._sigmoids(x, value_at_1, sigmoid) for one value.
inline double SigmoidValue(double x, double value_at_1, Sigmoid sigmoid, Operand operand) {
  switch (sigmoid) {
    case Sigmoid::kGaussian: {
      const double scale = std::sqrt(-2 * std::log(value_at_1));
      return std::exp(-0.5 * Square(x * scale, operand));
    }
    case Sigmoid::kHyperbolic: return 1 / std::cosh(x * std::acosh(1 / value_at_1));
    case Sigmoid::kLongTail: {
      const double scale = std::sqrt(1 / value_at_1 - 1);
      return 1 / (Square(x * scale, operand) + 1);
    }
    case Sigmoid::kReciprocal: return 1 / (std::abs(x) * (1 / value_at_1 - 1) + 1);
    case Sigmoid::kCosine: {
      const double scaled = x * (std::acos(2 * value_at_1 - 1) / M_PI);
      return std::abs(scaled) < 1 ? (1 + std::cos(M_PI * scaled)) / 2 : 0.0;
    }
    case Sigmoid::kLinear: {
      const double scaled = x * (1 - value_at_1);
      return std::abs(scaled) < 1 ? 1 - scaled : 0.0;
    }
    case Sigmoid::kQuadratic: {
      const double scaled = x * std::sqrt(1 - value_at_1);
      return std::abs(scaled) < 1 ? 1 - Square(scaled, operand) : 0.0;
    }
    case Sigmoid::kTanhSquared: return 1 - Square(std::tanh(x * std::atanh(std::sqrt(1 - value_at_1))), operand);
  }
  throw std::invalid_argument("unknown sigmoid");
}

// rewards.tolerance(x, bounds=(lower, upper), margin, sigmoid, value_at_margin): 1 inside the
// bounds, else the sigmoid of the distance to the nearest bound in units of margin (0 if margin
// is 0). NumPy's SIMD exp differs from libm's in the last bit for some arguments on CPUs with
// AVX-512 (NumPy then has its own exp); this is the only place a reward's arithmetic is not NumPy's.
struct Tolerance {
  double lower = 0.0, upper = 0.0, margin = 0.0;
  Sigmoid sigmoid = Sigmoid::kGaussian;
  double value_at_margin = kDefaultValueAtMargin;

  double operator()(double x, Operand operand = Operand::kScalar) const {
    if (lower <= x && x <= upper) return 1.0;
    if (margin == 0) return 0.0;
    const double d = (x < lower ? lower - x : x - upper) / margin;
    return SigmoidValue(d, value_at_margin, sigmoid, operand);
  }
};

}  // namespace pp::dm_control
