// Tests of envs/dm_control/spline_zoom.h without Python: scipy.ndimage.zoom's output, bit for bit,
// for quadruped escape's terrain bumps. tests/envs/dm_control/test_dm_control.py compares the terrain with scipy's.
#include "envs/dm_control/spline_zoom.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/numpy_random_state.h"
#include "tests/test_util.h"

namespace {

// FNV-1a (64-bit) over the doubles' bytes, row-major: one number that changes with any bit.
uint64_t Fnv1a(const std::vector<double>& values) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (double v : values) {
    unsigned char bytes[sizeof(double)];
    std::memcpy(bytes, &v, sizeof(double));
    for (unsigned char b : bytes) {
      h ^= b;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

// np.random.RandomState(seed).uniform(0.15, 1, (n, n)): escape's bumps.
std::vector<double> Bumps(uint64_t seed, int n) {
  pp::NumpyRandomState random(seed);
  std::vector<double> bumps(static_cast<std::size_t>(n) * n);
  for (double& b : bumps) b = random.Uniform(0.15, 1);
  return bumps;
}

// Anchors from scipy 1.17.1's ndimage.zoom(bumps, 201 / 30.0) (numpy 2.4.6): the hash of the
// whole 201 x 201 output and three of its values, kept so that a C++-only build notices a change.
TEST(EscapeTerrainMatchesScipyAnchors) {
  struct Anchor {
    uint64_t seed, hash;
    double first, middle, last;  // [0, 0], [100, 57], [200, 200]
  };
  const Anchor anchors[] = {
      {0, 0xa23e13ec6eb7df4aULL, 0.6164914783382262, 0.9494750907467652, 0.5041879933724044},
      {1, 0x21d5ec6c13d7e9afULL, 0.5044687039971879, 0.41124492093872816, 0.45170992347713645},
      {2, 0x9615365554459800ULL, 0.5205956668207035, 0.47778235010069325, 0.6926076469375314},
  };
  for (const Anchor& a : anchors) {
    std::vector<double> out;
    std::ptrdiff_t rows = 0, cols = 0;
    pp::dm_control::spline_zoom::Zoom(Bumps(a.seed, 30), 30, 30, 201 / 30.0, out, rows, cols);
    CHECK_EQ(rows, 201);
    CHECK_EQ(cols, 201);
    CHECK_EQ(out[0], a.first);
    CHECK_EQ(out[100 * 201 + 57], a.middle);
    CHECK_EQ(out[200 * 201 + 200], a.last);
    CHECK_EQ(Fnv1a(out), a.hash);
  }
}

// mode='constant' puts 0 where the output's coordinate (k * (n - 1) / (out - 1)) rounds past the
// last input: 8 -> 26 values has it in the last row and column (51 zeros), as scipy's zoom does.
TEST(ConstantModeZeroesCoordinatesPastTheEdge) {
  std::vector<double> out;
  std::ptrdiff_t rows = 0, cols = 0;
  pp::dm_control::spline_zoom::Zoom(Bumps(0, 8), 8, 8, 26 / 8.0, out, rows, cols);
  CHECK_EQ(rows, 26);
  CHECK_EQ(cols, 26);
  int zeros = 0;
  for (double v : out) zeros += v == 0.0;
  CHECK_EQ(zeros, 51);
  CHECK_EQ(out[25 * 26 + 25], 0.0);
  CHECK_EQ(out[24 * 26 + 24], 0.34745417081046476);
  CHECK_EQ(out[5 * 26 + 7], 0.874963496926497);
  CHECK_EQ(Fnv1a(out), 0x6cf6d3a3697db58fULL);
}

// The pole is scipy's decimal constant, not sqrt(3.0) - 2.0 (one ulp apart): the prefilter with the
// computed one gives other bits, which is why the constant is kept.
TEST(PoleIsScipysConstant) {
  CHECK(pp::dm_control::spline_zoom::kPole != std::sqrt(3.0) - 2.0);
  CHECK_EQ(pp::dm_control::spline_zoom::kPole, -0.2679491924311227);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
