// scipy.ndimage.zoom(input, zoom) of a 2-D float64 array with its defaults (order=3,
// mode='constant', prefilter=True, grid_mode=False), in the same arithmetic: quadruped escape's terrain.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace pp::dm_control::spline_zoom {

// The cubic B-spline's pole, sqrt(3) - 2, as scipy's C code holds it: the decimal
// -0.2679491924311227, one ulp above what sqrt(3.0) - 2.0 evaluates to in double. The prefilter's
// every output depends on it, so it is this constant or no bit-exact terrain.
constexpr double kPole = -0.2679491924311227;

// One line of the cubic spline prefilter (spline_filter1d, order 3), in place: scale by the gain
// (1 - z)(1 - 1/z), the causal recursion c[i] += z c[i-1] started from the mirror-symmetric
// boundary's exact sum, the anti-causal recursion c[i] = z (c[i+1] - c[i]) started from its closed
// form. mode='constant' prefilters with the mirror boundary, as scipy does. Operations in scipy's
// order (pow is libm's; the build has -ffp-contract=off, so no fused multiply-add).
inline void FilterLine(double* c, std::ptrdiff_t n) {
  if (n < 2) return;  // a line of one value is left as it is
  const double z = kPole;
  const double gain = (1.0 - 1.0 / z) * (1.0 - z);
  for (std::ptrdiff_t i = 0; i < n; ++i) c[i] *= gain;
  // Causal start (mirror): c[0] + sum_{i=1}^{n-2} z^i (c[i] + z^(n-1) c[n-1-i]), over 1 - z^(2n-2).
  const double z_n_1 = std::pow(z, static_cast<double>(n - 1));
  c[0] = c[0] + z_n_1 * c[n - 1];
  double z_i = z;
  for (std::ptrdiff_t i = 1; i < n - 1; ++i) {
    c[0] += z_i * (c[i] + z_n_1 * c[n - 1 - i]);
    z_i *= z;
  }
  c[0] /= 1 - z_n_1 * z_n_1;
  for (std::ptrdiff_t i = 1; i < n; ++i) c[i] += z * c[i - 1];
  // Anti-causal start (mirror).
  c[n - 1] = (z * c[n - 2] + c[n - 1]) * z / (z * z - 1);
  for (std::ptrdiff_t i = n - 2; i >= 0; --i) c[i] = z * (c[i + 1] - c[i]);
}

// The cubic B-spline's four weights at fractional position x - floor(x), the last one as 1 minus
// the others (so the weights sum to 1 as scipy's do, in its order of subtraction).
inline void Weights(double x, double w[4]) {
  const double y = x - std::floor(x);
  const double z = 1.0 - y;
  w[0] = z * z * z / 6.0;
  w[1] = (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0;
  w[2] = (z * z * (z - 2.0) * 3.0 + 4.0) / 6.0;
  w[3] = 1.0;
  for (int i = 0; i < 3; ++i) w[3] -= w[i];
}

// Per output index along one axis: its four input taps (the mirror boundary's indices where the
// spline's support leaves [0, n)) and weights, or `outside` (mode='constant' puts cval, 0, there).
struct AxisTaps {
  bool outside = false;
  std::ptrdiff_t index[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

inline std::vector<AxisTaps> Axis(std::ptrdiff_t n, std::ptrdiff_t out) {
  // zoom_shift's factor without grid_mode: (n - 1) / (out - 1), 1 where out is 1.
  const double factor = out > 1 ? static_cast<double>(n - 1) / static_cast<double>(out - 1) : 1.0;
  std::vector<AxisTaps> taps(static_cast<std::size_t>(out));
  for (std::ptrdiff_t k = 0; k < out; ++k) {
    AxisTaps& t = taps[static_cast<std::size_t>(k)];
    const double cc = static_cast<double>(k) * factor;
    if (cc < 0 || cc > static_cast<double>(n - 1)) {
      t.outside = true;  // mode='constant': no interpolation beyond the edges
      continue;
    }
    const auto start = static_cast<std::ptrdiff_t>(std::floor(cc)) - 1;
    for (int h = 0; h < 4; ++h) {
      std::ptrdiff_t i = start + h;
      if (i < 0) i = -i;                 // mirror: -1 -> 1
      if (i > n - 1) i = 2 * n - 2 - i;  // mirror: n -> n - 2
      t.index[h] = n > 1 ? i : 0;
    }
    Weights(cc, t.weight);
  }
  return taps;
}

// ndimage.zoom(input, zoom) of the rows x cols row-major `input`: the output's shape is
// round(rows * zoom) x round(cols * zoom) (Python's round of the product, as zoom computes it);
// `out` is resized to it. Each output value sums the 16 products coefficient * weight_row *
// weight_col in scipy's order (taps row-major), starting from 0.
inline void Zoom(const std::vector<double>& input, std::ptrdiff_t rows, std::ptrdiff_t cols, double zoom,
                 std::vector<double>& out, std::ptrdiff_t& out_rows, std::ptrdiff_t& out_cols) {
  if (rows < 2 || cols < 2) throw std::invalid_argument("spline_zoom::Zoom needs at least 2 x 2 values");
  // Python's round() of a float: to nearest, ties to even (nearbyint in the default rounding mode).
  out_rows = static_cast<std::ptrdiff_t>(std::nearbyint(static_cast<double>(rows) * zoom));
  out_cols = static_cast<std::ptrdiff_t>(std::nearbyint(static_cast<double>(cols) * zoom));
  // spline_filter: along axis 0 (columns), then axis 1 (rows), into float64.
  std::vector<double> c(input);
  std::vector<double> line(static_cast<std::size_t>(rows));
  for (std::ptrdiff_t j = 0; j < cols; ++j) {
    for (std::ptrdiff_t i = 0; i < rows; ++i)
      line[static_cast<std::size_t>(i)] = c[static_cast<std::size_t>(i * cols + j)];
    FilterLine(line.data(), rows);
    for (std::ptrdiff_t i = 0; i < rows; ++i)
      c[static_cast<std::size_t>(i * cols + j)] = line[static_cast<std::size_t>(i)];
  }
  for (std::ptrdiff_t i = 0; i < rows; ++i) FilterLine(c.data() + i * cols, cols);
  const std::vector<AxisTaps> along_rows = Axis(rows, out_rows), along_cols = Axis(cols, out_cols);
  out.assign(static_cast<std::size_t>(out_rows * out_cols), 0.0);
  for (std::ptrdiff_t i = 0; i < out_rows; ++i) {
    const AxisTaps& r = along_rows[static_cast<std::size_t>(i)];
    for (std::ptrdiff_t j = 0; j < out_cols; ++j) {
      const AxisTaps& s = along_cols[static_cast<std::size_t>(j)];
      if (r.outside || s.outside) continue;  // cval 0
      double t = 0.0;
      for (int a = 0; a < 4; ++a) {
        const double* row = c.data() + r.index[a] * cols;
        for (int b = 0; b < 4; ++b) {
          double coeff = row[s.index[b]];
          coeff *= r.weight[a];
          coeff *= s.weight[b];
          t += coeff;
        }
      }
      out[static_cast<std::size_t>(i * out_cols + j)] = t;
    }
  }
}

}  // namespace pp::dm_control::spline_zoom
