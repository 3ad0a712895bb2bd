// The private random stream of one env: xoshiro256** seeded through SplitMix64.
// Each env owns one, seeded from its own seed, so results never depend on thread scheduling.
#pragma once

#include <cmath>
#include <cstdint>

namespace pp {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { Seed(seed); }

  void Seed(uint64_t seed) {
    uint64_t x = seed;
    for (uint64_t& word : s_) word = SplitMix64(x);
    has_spare_normal_ = false;
  }

  uint64_t NextU64() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform01() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }
  double Uniform(double low, double high) { return low + (high - low) * Uniform01(); }

  // Uniform integer in [low, high], inclusive, without modulo bias.
  // Unsigned arithmetic throughout: high - low and low + offset overflow int64_t for ranges wider
  // than INT64_MAX (e.g. [-1, INT64_MAX]), while modulo 2^64 they are exact.
  int64_t UniformInt(int64_t low, int64_t high) {
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1;
    if (range == 0) return static_cast<int64_t>(NextU64());  // the full 64-bit range
    const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
    uint64_t x;
    do {
      x = NextU64();
    } while (x >= limit);
    return static_cast<int64_t>(static_cast<uint64_t>(low) + x % range);
  }

  bool Bernoulli(double p) { return Uniform01() < p; }

  // Standard normal by the Marsaglia polar method (one spare kept).
  double Normal(double mean = 0.0, double stddev = 1.0) {
    if (has_spare_normal_) {
      has_spare_normal_ = false;
      return mean + stddev * spare_normal_;
    }
    double u, v, s;
    do {
      u = Uniform(-1.0, 1.0);
      v = Uniform(-1.0, 1.0);
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double scale = std::sqrt(-2.0 * std::log(s) / s);
    spare_normal_ = v * scale;
    has_spare_normal_ = true;
    return mean + stddev * u * scale;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  uint64_t s_[4];
  double spare_normal_ = 0.0;
  bool has_spare_normal_ = false;
};

}  // namespace pp
