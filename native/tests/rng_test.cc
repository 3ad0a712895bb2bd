// Tests of Rng: the exact xoshiro256** stream (checked against an independent implementation),
// re-seeding, and the ranges and moments of the derived draws.
#include "core/rng.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "tests/test_util.h"

namespace {

std::vector<uint64_t> First(uint64_t seed, int n) {
  pp::Rng rng(seed);
  std::vector<uint64_t> out;
  for (int i = 0; i < n; ++i) out.push_back(rng.NextU64());
  return out;
}

// Values from a separate Python implementation of SplitMix64 seeding and xoshiro256**: env
// trajectories depend on this stream, so a change to it must be deliberate.
TEST(StreamMatchesTheReference) {
  CHECK(First(0, 4) == (std::vector<uint64_t>{0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL, 0x1a5f849d4933e6e0ULL,
                                              0x6aa594f1262d2d2cULL}));
  CHECK(First(42, 4) == (std::vector<uint64_t>{0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL, 0xae17533239e499a1ULL,
                                               0xecb8ad4703b360a1ULL}));
  pp::Rng rng(7);
  const double u = rng.Uniform01();  // CHECK_EQ evaluates its arguments twice: draw once
  CHECK_EQ(u, 0.7005764821796896);   // the top 53 bits of the first draw
}

TEST(SeedRestartsTheStream) {
  pp::Rng rng(5);
  const double first = rng.Normal();  // leaves a spare normal behind
  rng.NextU64();
  rng.Seed(5);
  const double again = rng.Normal();
  CHECK_EQ(again, first);  // the spare was dropped, so the stream starts over
  CHECK(First(1, 8) != First(2, 8));
  pp::Rng a(123), b(123);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.NextU64(), y = b.NextU64();
    CHECK_EQ(x, y);
  }
}

TEST(UniformStaysInItsRange) {
  pp::Rng rng(11);
  double lo = 1.0, hi = 0.0;
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.Uniform01();
    CHECK(u >= 0.0 && u < 1.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    const double x = rng.Uniform(-0.05, 0.05);
    CHECK(x >= -0.05 && x < 0.05);
  }
  CHECK_LT(lo, 0.001);
  CHECK_GT(hi, 0.999);
}

TEST(UniformIntIsInclusiveAndCoversItsRange) {
  pp::Rng rng(3);
  std::set<int64_t> seen;
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = rng.UniformInt(-2, 3);
    CHECK(v >= -2 && v <= 3);
    seen.insert(v);
  }
  CHECK_EQ(seen.size(), 6u);
  CHECK_EQ(rng.UniformInt(5, 5), 5);
  // The full 64-bit range has no rejection bound to compute; it must return, not loop.
  std::set<int64_t> wide;
  for (int i = 0; i < 100; ++i) {
    wide.insert(rng.UniformInt(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  }
  CHECK_GT(wide.size(), 90u);
}

// Ranges wider than INT64_MAX, and ranges at either end of int64_t: their bounds' difference and
// the offset added to `low` overflow int64_t (undefined behaviour, which the asan preset's UBSan
// reports), so the arithmetic must be unsigned.
TEST(UniformIntHandlesRangesWiderThanInt64Max) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  pp::Rng rng(5);
  bool negative = false, large = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = rng.UniformInt(-1, kMax);
    CHECK_GE(v, -1);
    large = large || v > kMax / 2;
    const int64_t w = rng.UniformInt(kMin, 1);
    CHECK_LE(w, 1);
    negative = negative || w < kMin / 2;
    const int64_t top = rng.UniformInt(kMax - 1, kMax);
    CHECK(top == kMax - 1 || top == kMax);
    const int64_t bottom = rng.UniformInt(kMin, kMin + 1);
    CHECK(bottom == kMin || bottom == kMin + 1);
  }
  // About half of each range's draws fall in its far half; 1000 draws all missing it is ~2^-1000.
  CHECK(large);
  CHECK(negative);
}

TEST(BernoulliAndNormalMoments) {
  pp::Rng rng(17);
  CHECK(!rng.Bernoulli(0.0));
  CHECK(rng.Bernoulli(1.0));
  constexpr int kDraws = 200000;
  int hits = 0;
  double sum = 0.0, sum_sq = 0.0;
  for (int i = 0; i < kDraws; ++i) {
    hits += rng.Bernoulli(0.25) ? 1 : 0;
    const double x = rng.Normal(2.0, 3.0);
    sum += x;
    sum_sq += x * x;
  }
  // Seeded, so deterministic; the bounds are about 5 standard errors wide.
  CHECK_LT(std::fabs(hits / static_cast<double>(kDraws) - 0.25), 0.005);
  const double mean = sum / kDraws;
  const double stddev = std::sqrt(sum_sq / kDraws - mean * mean);
  CHECK_LT(std::fabs(mean - 2.0), 0.04);
  CHECK_LT(std::fabs(stddev - 3.0), 0.03);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
