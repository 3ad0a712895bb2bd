// NumPy's legacy stream, np.random.RandomState(seed) (MT19937), in C++: the same seed and the same
// calls give bit-identical draws, for envs whose reference draws from a RandomState (dm_control).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/masked_interval.h"

namespace pp {

// The draws of np.random.RandomState(seed), method by method, written from NumPy 2.x's legacy
// code (_mt19937.pyx's _legacy_seeding, src/mt19937, src/legacy/legacy-distributions.c,
// mtrand.pyx). Not thread-safe, like RandomState without its lock: each env owns one.
class NumpyRandomState {
 public:
  explicit NumpyRandomState(uint64_t seed = 0) { Seed(seed); }

  // RandomState(seed) for 0 <= seed < 2**32 (mt19937_seed, Knuth's init_genrand). NumPy refuses a
  // larger int; a larger seed here is RandomState([low word, high word]) (init_by_array over the
  // seed's two 32-bit words), so every 64-bit seed has its own stream.
  void Seed(uint64_t seed) {
    if (seed <= 0xffffffffULL) {
      InitGenrand(static_cast<uint32_t>(seed));
    } else {
      const uint32_t words[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
      InitByArray(words, 2);
    }
    pos_ = kN;
    has_gauss_ = false;
    gauss_ = 0.0;
  }

  // mt19937_next64: two outputs, the first high.
  uint64_t NextU64() { return (static_cast<uint64_t>(NextU32()) << 32) | NextU32(); }
  // mt19937_next: the next tempered 32-bit output.
  uint32_t NextU32() {
    if (pos_ == kN) Generate();
    uint32_t y = key_[pos_++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
  }

  // random_sample() / rand(): 53 bits from two outputs (27 and 26 bits), as mt19937_next_double.
  double RandomSample() {
    const int32_t a = static_cast<int32_t>(NextU32() >> 5), b = static_cast<int32_t>(NextU32() >> 6);
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

  // uniform(low, high): low + (high - low) * random_sample(), the range computed first (as NumPy
  // does with np.subtract), so an array of bounds draws element by element with the same formula.
  double Uniform(double low, double high) {
    const double range = high - low;
    if (!std::isfinite(range)) throw std::overflow_error("uniform: range exceeds valid bounds");
    return low + range * RandomSample();
  }

  // standard_normal() / randn(): legacy_gauss, Marsaglia's polar method; the second value of each
  // pair is kept for the next call (reset by Seed, as RandomState.seed does).
  double StandardNormal() {
    if (has_gauss_) {
      has_gauss_ = false;
      const double kept = gauss_;
      gauss_ = 0.0;
      return kept;
    }
    double x1, x2, r2;
    do {
      x1 = 2.0 * RandomSample() - 1.0;
      x2 = 2.0 * RandomSample() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss_ = f * x1;
    has_gauss_ = true;
    return f * x2;
  }

  // randint(low, high) (int64, high exclusive; also choice(n) without p): the masked rejection
  // method of random_bounded_uint64_fill with use_masked=True, 32-bit draws when the range fits.
  int64_t Randint(int64_t low, int64_t high) {
    if (low >= high) throw std::invalid_argument("randint: low >= high");
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;  // inclusive
    return static_cast<int64_t>(static_cast<uint64_t>(low) + Bounded(range));
  }
  int64_t Choice(int64_t n) {
    if (n <= 0) throw std::invalid_argument("choice: a must be a positive integer");
    return Randint(0, n);
  }
  // choice(k, p=p) (or of a sequence of k items): one random_sample() located in the normalized
  // cumulative sum of p (p.cumsum(), /= its last entry, searchsorted 'right').
  int64_t Choice(const double* p, int k) {
    if (k <= 0) throw std::invalid_argument("choice: a must be non-empty");
    std::vector<double> cdf(static_cast<std::size_t>(k));
    double sum = 0.0;
    for (int i = 0; i < k; ++i) cdf[static_cast<std::size_t>(i)] = sum += p[i];
    for (double& c : cdf) c /= sum;
    const double u = RandomSample();
    return std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
  }

 private:
  static constexpr int kN = 624;  // RK_STATE_LEN
  static constexpr int kM = 397;

  void InitGenrand(uint32_t s) {
    key_[0] = s;
    for (int i = 1; i < kN; ++i) {
      key_[i] = 1812433253U * (key_[i - 1] ^ (key_[i - 1] >> 30)) + static_cast<uint32_t>(i);
    }
  }

  void InitByArray(const uint32_t* init_key, int key_length) {
    InitGenrand(19650218U);
    int i = 1, j = 0;
    for (int k = kN > key_length ? kN : key_length; k > 0; --k) {
      key_[i] = (key_[i] ^ ((key_[i - 1] ^ (key_[i - 1] >> 30)) * 1664525U)) + init_key[j] + static_cast<uint32_t>(j);
      ++i;
      ++j;
      if (i >= kN) {
        key_[0] = key_[kN - 1];
        i = 1;
      }
      if (j >= key_length) j = 0;
    }
    for (int k = kN - 1; k > 0; --k) {
      key_[i] = (key_[i] ^ ((key_[i - 1] ^ (key_[i - 1] >> 30)) * 1566083941U)) - static_cast<uint32_t>(i);
      ++i;
      if (i >= kN) {
        key_[0] = key_[kN - 1];
        i = 1;
      }
    }
    key_[0] = 0x80000000U;
  }

  // mt19937_gen: the next 624 words.
  void Generate() {
    constexpr uint32_t kUpper = 0x80000000U, kLower = 0x7fffffffU, kMatrixA = 0x9908b0dfU;
    int i = 0;
    for (; i < kN - kM; ++i) {
      const uint32_t y = (key_[i] & kUpper) | (key_[i + 1] & kLower);
      key_[i] = key_[i + kM] ^ (y >> 1) ^ ((~(y & 1U) + 1U) & kMatrixA);
    }
    for (; i < kN - 1; ++i) {
      const uint32_t y = (key_[i] & kUpper) | (key_[i + 1] & kLower);
      key_[i] = key_[i + (kM - kN)] ^ (y >> 1) ^ ((~(y & 1U) + 1U) & kMatrixA);
    }
    const uint32_t y = (key_[kN - 1] & kUpper) | (key_[0] & kLower);
    key_[kN - 1] = key_[kM - 1] ^ (y >> 1) ^ ((~(y & 1U) + 1U) & kMatrixA);
    pos_ = 0;
  }

  // A uniform value in [0, range] by masking and rejection (RandomState's "masked" method).
  // (RandomState's special cases, range 2**32 - 1 and 2**64 - 1, take one draw as the mask does.)
  uint64_t Bounded(uint64_t range) { return MaskedInterval(*this, range); }

  uint32_t key_[kN];
  int pos_ = kN;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace pp
