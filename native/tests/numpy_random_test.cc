// Tests of NumpyGenerator without Python: anchor values of NumPy's stream, the bit generator's
// 32-bit buffering, the integer draws' ranges and special cases, and the ziggurat tables' shape.
// tests/core/test_numpy_random.py compares every method with NumPy itself, draw by draw.
#include "core/numpy_random.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "tests/test_util.h"

namespace {

// np.random.PCG64(0).random_raw(3) and np.random.default_rng(42).random(): NumPy 2.x's output,
// kept so that a C++-only build still notices a change to the stream.
TEST(StreamMatchesNumpyAnchors) {
  pp::NumpyGenerator gen(0);
  const uint64_t a = gen.NextU64(), b = gen.NextU64(), c = gen.NextU64();
  CHECK_EQ(a, 0xa30febcfd9c2825fULL);
  CHECK_EQ(b, 0x4510bdf882d9d721ULL);
  CHECK_EQ(c, 0x0a7d3da94ecde8b8ULL);
  pp::NumpyGenerator gen42(42);
  const double u = gen42.Random();
  CHECK_EQ(u, 0.7739560485559633);
}

TEST(SeedRestartsTheStreamAndDropsTheBufferedHalf) {
  pp::NumpyGenerator gen(7);
  const uint32_t low = gen.NextU32();  // leaves the high half buffered
  gen.Seed(7);
  const uint64_t raw = gen.NextU64();
  CHECK_EQ(static_cast<uint32_t>(raw), low);
  gen.Seed(7);
  const uint32_t again = gen.NextU32();  // CHECK_EQ evaluates its arguments twice: draw once
  CHECK_EQ(again, low);
  gen.Seed(7);
  gen.NextU32();
  const uint32_t high = gen.NextU32();
  CHECK_EQ(high, static_cast<uint32_t>(raw >> 32));
  // Seeds differing only above bit 32 give different streams (the seed is hashed as two words).
  pp::NumpyGenerator x(1), y(1ULL + (1ULL << 32));
  CHECK(x.NextU64() != y.NextU64());
  // Seed(s) and SeedWords of s's words are the same SeedSequence.
  const uint32_t words[2] = {5, 9};
  pp::NumpyGenerator w, s(5ULL | (9ULL << 32));
  w.SeedWords(words, 2);
  for (int i = 0; i < 100; ++i) {
    const uint64_t p = w.NextU64(), q = s.NextU64();
    CHECK_EQ(p, q);
  }
}

TEST(IntegersStayInRangeAndCoverIt) {
  pp::NumpyGenerator gen(3);
  std::set<int64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = gen.Integers(-2, 4);
    CHECK(v >= -2 && v < 4);
    seen.insert(v);
  }
  CHECK_EQ(seen.size(), 6u);
  // Range 1 draws nothing: the stream is where it was.
  pp::NumpyGenerator a(9), b(9);
  CHECK_EQ(a.Integers(5, 6), 5);
  const uint64_t next_a = a.NextU64(), next_b = b.NextU64();
  CHECK_EQ(next_a, next_b);
  // The full int64 range (closed) is a raw 64-bit draw, offset by low.
  pp::NumpyGenerator c(11), d(11);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t full = c.IntegersClosed(kMin, kMax);
  const uint64_t raw = d.NextU64();
  CHECK_EQ(static_cast<uint64_t>(full), static_cast<uint64_t>(kMin) + raw);
  // The full 32-bit range is one 32-bit draw.
  pp::NumpyGenerator e(12), f(12);
  const int64_t wide = e.Integers(0, int64_t{1} << 32);
  const uint32_t raw32 = f.NextU32();
  CHECK_EQ(wide, int64_t{raw32});
  // Ranges below 2**32 take 32-bit draws, two per 64-bit draw, buffered across calls.
  pp::NumpyGenerator g(13), h(13);
  int64_t pair[2];
  g.Integers(0, 10, pair, 2);
  const uint64_t after_g = g.NextU64();
  h.NextU64();
  const uint64_t after_h = h.NextU64();
  CHECK_EQ(after_g, after_h);
  bool threw = false;
  try {
    gen.Integers(3, 3);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST(ChoiceFollowsItsProbabilities) {
  pp::NumpyGenerator gen(21);
  const double p[3] = {0.2, 0.0, 0.8};
  int counts[3] = {0, 0, 0};
  constexpr int kDraws = 100000;
  std::vector<int64_t> out(kDraws);
  gen.Choice(p, 3, out.data(), kDraws);
  for (int64_t v : out) ++counts[v];
  CHECK_EQ(counts[1], 0);
  // About 5 standard errors (sqrt(0.16 / 1e5) = 0.00126).
  CHECK_LT(std::fabs(counts[0] / static_cast<double>(kDraws) - 0.2), 0.0065);
  const double bad[2] = {0.5, 0.6};
  bool threw = false;
  try {
    gen.Choice(bad, 2);
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

TEST(ZigguratTablesHaveTheirShape) {
  const uint64_t* k = pp::NumpyGenerator::ZigguratK();
  const double* w = pp::NumpyGenerator::ZigguratW();
  const double* f = pp::NumpyGenerator::ZigguratF();
  CHECK_EQ(k[1], 0u);
  CHECK_EQ(f[0], 1.0);
  CHECK_EQ(w[255] * 0x1.0p52, 3.6541528853610087963519472518);
  for (int i = 1; i < 256; ++i) {
    CHECK_LT(f[i], f[i - 1]);  // f falls as the layers widen
    CHECK_LT(k[i], uint64_t{1} << 52);
  }
  // Every layer has the same area v: x[i+1] (f[i] - f[i+1]) = v, to a few ulps of the recurrence.
  for (int i = 1; i < 255; ++i) {
    const double area = w[i + 1] * 0x1.0p52 * (f[i] - f[i + 1]);
    CHECK_LT(std::fabs(area / 0.0049286732339746519 - 1.0), 1e-9);
  }
}

TEST(NormalMoments) {
  pp::NumpyGenerator gen(17);
  constexpr int kDraws = 200000;
  double sum = 0.0, sum_sq = 0.0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = gen.Normal(2.0, 3.0);
    sum += x;
    sum_sq += x * x;
  }
  // Seeded, so deterministic; the bounds are about 5 standard errors wide.
  const double mean = sum / kDraws;
  const double stddev = std::sqrt(sum_sq / kDraws - mean * mean);
  CHECK_LT(std::fabs(mean - 2.0), 0.04);
  CHECK_LT(std::fabs(stddev - 3.0), 0.03);
}

// An env's np_random() is np.random.default_rng(seed) of the seed the core gives it.
class SeedProbe final : public pp::Env {
 public:
  using pp::Env::Env;
  void Reset() override {}
  pp::StepResult Step(const pp::Action&) override { return {}; }
  double Draw() { return np_random().Random(); }
};

TEST(EnvSeedSeedsNpRandom) {
  const pp::EnvSpec spec;
  SeedProbe env(spec, 0);
  pp::EnvDriver(env).Seed(42);
  const double first = env.Draw();
  CHECK_EQ(first, 0.7739560485559633);  // np.random.default_rng(42).random()
  env.Draw();
  pp::EnvDriver(env).Seed(42);
  const double again = env.Draw();
  CHECK_EQ(again, first);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
