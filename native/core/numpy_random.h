// NumPy's default random stream, np.random.Generator(PCG64(SeedSequence(seed))), in C++: the same
// seed and the same calls give bit-identical draws, so envs ported from NumPy replay its episodes.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/masked_interval.h"

namespace pp {

// The draws of np.random.default_rng(seed) / gymnasium.utils.seeding.np_random(seed), method by
// method, written from NumPy 2.x's documented algorithms (bit_generator.pyx's SeedSequence,
// src/pcg64, src/distributions, _generator.pyx). Not thread-safe, like NumPy's Generator without
// its lock: each env owns one.
class NumpyGenerator {
 public:
  explicit NumpyGenerator(uint64_t seed = 0) { Seed(seed); }

  // SeedSequence(seed) hashes the seed's 32-bit words (least significant first; 0 is one word).
  void Seed(uint64_t seed) {
    const uint32_t words[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    SeedWords(words, seed >> 32 ? 2 : 1);
  }

  // SeedSequence(entropy) for any non-negative Python int, given as its 32-bit words, least
  // significant first (Seed covers ints below 2**64; this is the general case).
  void SeedWords(const uint32_t* words, int count) {
    if (count < 1) throw std::invalid_argument("SeedWords: the entropy needs at least one word");
    uint32_t pool[kPoolSize];
    MixEntropy(words, count, pool);
    uint64_t state[4];
    GenerateState(pool, state);
    // PCG64's seeding (pcg_setseq_128_srandom_r): words 0-1 are the initial state, words 2-3 the
    // stream, each a 128-bit number with the first word high.
    const Uint128 init_state = (Uint128{state[0]} << 64) | state[1];
    const Uint128 init_seq = (Uint128{state[2]} << 64) | state[3];
    state_ = 0;
    increment_ = (init_seq << 1) | 1;
    Advance();
    state_ += init_state;
    Advance();
    has_uint32_ = false;
    uinteger_ = 0;
  }

  // PCG64's next64 (BitGenerator.random_raw): a 128-bit LCG step, then the XSL-RR output.
  uint64_t NextU64() {
    Advance();
    const auto high = static_cast<uint64_t>(state_ >> 64);
    const auto low = static_cast<uint64_t>(state_);
    return std::rotr(high ^ low, static_cast<int>(state_ >> 122));
  }

  // The bit generator's next_uint32: one 64-bit draw serves two calls, low half first. The half
  // left over belongs to the bit generator, so it carries over to the next call of any method that
  // draws 32 bits (Integers over a range below 2**32), as in NumPy.
  uint32_t NextU32() {
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    const uint64_t next = NextU64();
    has_uint32_ = true;
    uinteger_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next);
  }

  // Generator.random(): the top 53 bits of one 64-bit draw.
  double Random() { return static_cast<double>(NextU64() >> 11) * 0x1.0p-53; }

  // Generator.uniform(low, high): low + (high - low) * random(). NumPy raises OverflowError when
  // high - low is not finite and ValueError when it is negative (std::overflow_error and
  // std::invalid_argument here).
  double Uniform(double low, double high) { return low + UniformRange(low, high) * Random(); }
  void Uniform(double low, double high, double* out, int n) {
    const double range = UniformRange(low, high);
    for (int i = 0; i < n; ++i) out[i] = low + range * Random();
  }

  // Generator.integers(low, high) with int64 dtype, high exclusive. A range that ends at 2**63
  // (high exclusive) cannot be written in int64_t: IntegersClosed(low, INT64_MAX) is that call.
  int64_t Integers(int64_t low, int64_t high) {
    if (low >= high) throw std::invalid_argument("integers: low >= high");
    return IntegersClosed(low, high - 1);
  }
  void Integers(int64_t low, int64_t high, int64_t* out, int n) {
    if (low >= high) throw std::invalid_argument("integers: low >= high");
    IntegersClosed(low, high - 1, out, n);
  }
  // Generator.integers(low, high, endpoint=True): high inclusive.
  int64_t IntegersClosed(int64_t low, int64_t high) {
    int64_t out;
    IntegersClosed(low, high, &out, 1);
    return out;
  }
  void IntegersClosed(int64_t low, int64_t high, int64_t* out, int n) {
    if (low > high) throw std::invalid_argument("integers: low > high");
    // NumPy's random_bounded_uint64_fill with Lemire's method (Generator never uses the masked one).
    // Unsigned arithmetic: the range and the offset wrap modulo 2**64 exactly as NumPy's do.
    const uint64_t offset = static_cast<uint64_t>(low);
    const uint64_t range = static_cast<uint64_t>(high) - offset;  // inclusive: high - low
    for (int i = 0; i < n; ++i) out[i] = static_cast<int64_t>(offset + BoundedU64(range));
  }

  // Generator.standard_normal(): NumPy's 256-layer ziggurat (random_standard_normal).
  double StandardNormal() {
    const Ziggurat& z = Ziggurat::Get();
    for (;;) {
      uint64_t r = NextU64();
      const int layer = static_cast<int>(r & 0xff);
      r >>= 8;
      const bool negative = r & 1;
      const uint64_t rabs = (r >> 1) & kMantissaMask;
      double x = static_cast<double>(rabs) * z.w[layer];
      if (negative) x = -x;
      if (rabs < z.k[layer]) return x;  // inside the layer's rectangle: the common case
      if (layer == 0) {
        // The tail beyond r, by Marsaglia's exponential method; the sign is bit 8 of rabs.
        for (;;) {
          const double xx = -kNormalInvR * std::log1p(-Random());
          const double yy = -std::log1p(-Random());
          if (yy + yy > xx * xx) return ((rabs >> 8) & 1) ? -(kNormalR + xx) : kNormalR + xx;
        }
      }
      if ((z.f[layer - 1] - z.f[layer]) * Random() + z.f[layer] < std::exp(-0.5 * x * x)) return x;
    }
  }
  // Generator.normal(loc, scale).
  double Normal(double loc, double scale) { return loc + scale * StandardNormal(); }

  // Generator.choice(n) (and choice(a) for a sequence of length n, returning the index into a):
  // integers(0, n).
  int64_t Choice(int64_t n) {
    if (n <= 0) throw std::invalid_argument("choice: a must be a positive integer");
    return Integers(0, n);
  }

  // Generator.choice(k, p=p) and choice(k, size=n, p=p): one random() per sample, located in the
  // normalized cumulative sum of p (np.cumsum, then /= its last entry, then searchsorted 'right').
  int64_t Choice(const double* p, int k) {
    int64_t out;
    Choice(p, k, &out, 1);
    return out;
  }
  void Choice(const double* p, int k, int64_t* out, int n) {
    const std::vector<double> cdf = ChoiceCdf(p, k);
    for (int i = 0; i < n; ++i) {
      const double u = Random();
      out[i] = std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    }
  }

  // Generator.shuffle(x) of a list or a 1-d array: for i from n-1 down to 1, swap x[i] with
  // x[RandomInterval(i)].
  template <typename T>
  void Shuffle(T* items, std::size_t n) {
    for (std::size_t i = n; i-- > 1;) {
      const auto j = static_cast<std::size_t>(RandomInterval(i));
      std::swap(items[i], items[j]);
    }
  }

  // random_interval(bitgen, max) of NumPy's distributions (its 32-bit draws share the buffered
  // half): Shuffle's draws, not Integers' (a different algorithm).
  uint64_t RandomInterval(uint64_t max) { return MaskedInterval(*this, max); }

  // The ziggurat's tables, exposed for the test that compares them with NumPy's compiled ones.
  static const uint64_t* ZigguratK() { return Ziggurat::Get().k; }
  static const double* ZigguratW() { return Ziggurat::Get().w; }
  static const double* ZigguratF() { return Ziggurat::Get().f; }

 private:
  using Uint128 = unsigned __int128;

  // SeedSequence's constants (bit_generator.pyx): a pool of four 32-bit words, hashed with
  // multiply-xorshift steps.
  static constexpr int kPoolSize = 4;
  static constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875;
  static constexpr uint32_t kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  static constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
  static constexpr int kXShift = 16;  // half of a 32-bit word
  // PCG64's 128-bit LCG multiplier (PCG_DEFAULT_MULTIPLIER_128).
  static constexpr Uint128 kMultiplier = (Uint128{0x2360ed051fc65da4ULL} << 64) | 0x4385df649fccf645ULL;
  // The ziggurat's rightmost layer edge r, and 1/r, as NumPy declares them.
  static constexpr double kNormalR = 3.6541528853610087963519472518;
  static constexpr double kNormalInvR = 0.27366123732975827203338247596;
  static constexpr uint64_t kMantissaMask = 0x000fffffffffffffULL;  // 52 bits of |x|

  static uint32_t HashMix(uint32_t value, uint32_t& hash_const) {
    value ^= hash_const;
    hash_const *= kMultA;
    value *= hash_const;
    return value ^ (value >> kXShift);
  }
  static uint32_t Mix(uint32_t x, uint32_t y) {
    const uint32_t result = kMixMultL * x - kMixMultR * y;
    return result ^ (result >> kXShift);
  }
  // SeedSequence.mix_entropy: hash the entropy words into the pool, then mix every pool word into
  // every other, then fold in the words beyond the pool's size.
  static void MixEntropy(const uint32_t* entropy, int count, uint32_t* pool) {
    uint32_t hash_const = kInitA;
    for (int i = 0; i < kPoolSize; ++i) pool[i] = HashMix(i < count ? entropy[i] : 0, hash_const);
    for (int src = 0; src < kPoolSize; ++src) {
      for (int dst = 0; dst < kPoolSize; ++dst) {
        if (src != dst) pool[dst] = Mix(pool[dst], HashMix(pool[src], hash_const));
      }
    }
    for (int src = kPoolSize; src < count; ++src) {
      for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = Mix(pool[dst], HashMix(entropy[src], hash_const));
    }
  }
  // SeedSequence.generate_state(4, np.uint64): eight 32-bit words cycled from the pool, paired
  // little-endian into four 64-bit words.
  static void GenerateState(const uint32_t* pool, uint64_t* out) {
    uint32_t hash_const = kInitB;
    uint32_t words[8];
    for (int i = 0; i < 8; ++i) {
      uint32_t value = pool[i % kPoolSize] ^ hash_const;
      hash_const *= kMultB;
      value *= hash_const;
      words[i] = value ^ (value >> kXShift);
    }
    for (int i = 0; i < 4; ++i) out[i] = words[2 * i] | (uint64_t{words[2 * i + 1]} << 32);
  }

  void Advance() { state_ = state_ * kMultiplier + increment_; }

  static double UniformRange(double low, double high) {
    const double range = high - low;
    if (!std::isfinite(range)) throw std::overflow_error("uniform: high - low range exceeds valid bounds");
    if (range < 0) throw std::invalid_argument("uniform: high - low < 0");
    return range;
  }

  // A uniform integer in [0, range] (range inclusive), as random_bounded_uint64_fill draws it: the
  // bit generator's 32-bit draws for ranges below 2**32, else 64-bit ones, with Lemire's
  // multiply-and-reject; the full 32- and 64-bit ranges take a raw draw (Lemire cannot express them).
  uint64_t BoundedU64(uint64_t range) {
    if (range == 0) return 0;
    if (range <= UINT32_MAX) {
      if (range == UINT32_MAX) return NextU32();
      const uint32_t excl = static_cast<uint32_t>(range) + 1;
      uint64_t m = uint64_t{NextU32()} * excl;
      auto leftover = static_cast<uint32_t>(m);
      if (leftover < excl) {
        const uint32_t threshold = (UINT32_MAX - static_cast<uint32_t>(range)) % excl;
        while (leftover < threshold) {
          m = uint64_t{NextU32()} * excl;
          leftover = static_cast<uint32_t>(m);
        }
      }
      return m >> 32;
    }
    if (range == UINT64_MAX) return NextU64();
    const uint64_t excl = range + 1;
    Uint128 m = Uint128{NextU64()} * excl;
    auto leftover = static_cast<uint64_t>(m);
    if (leftover < excl) {
      const uint64_t threshold = (UINT64_MAX - range) % excl;
      while (leftover < threshold) {
        m = Uint128{NextU64()} * excl;
        leftover = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  // Generator.choice's checks of p (errors as NumPy's messages), then its cumulative sum.
  static std::vector<double> ChoiceCdf(const double* p, int k) {
    if (k <= 0) throw std::invalid_argument("choice: a cannot be empty");
    // NumPy's kahan_sum, and its tolerance: sqrt of float64's machine epsilon.
    double sum = p[0], carry = 0.0;
    for (int i = 1; i < k; ++i) {
      const double y = p[i] - carry;
      const double t = sum + y;
      carry = (t - sum) - y;
      sum = t;
    }
    if (std::isnan(sum)) throw std::invalid_argument("choice: probabilities contain NaN");
    for (int i = 0; i < k; ++i) {
      if (p[i] < 0) throw std::invalid_argument("choice: probabilities are not non-negative");
    }
    if (std::abs(sum - 1.0) > std::sqrt(std::numeric_limits<double>::epsilon())) {
      throw std::invalid_argument("choice: probabilities do not sum to 1");
    }
    std::vector<double> cdf(p, p + k);
    for (int i = 1; i < k; ++i) cdf[i] += cdf[i - 1];  // np.cumsum adds left to right
    const double last = cdf.back();
    for (double& c : cdf) c /= last;
    return cdf;
  }

  // The ziggurat's 256 layers for the standard normal: x[i] the layers' right edges (x[0] = 0,
  // x[255] = r), f[i] = exp(-x[i]^2 / 2), w[i] = x[i] / 2^52 (w[0] the tail's width), and
  // k[i] = round(2^52 x[i-1] / x[i]), the acceptance bound of a 52-bit draw. Built from r and the
  // layer area v, the recurrence NumPy's tables were generated with:
  // x[j+1] = sqrt(-2 log(f(x[j]) + v / x[j])), walking down from r.
  struct Ziggurat {
    uint64_t k[256];
    double w[256];
    double f[256];

    static const Ziggurat& Get() {
      static const Ziggurat tables;
      return tables;
    }

    Ziggurat() {
      constexpr double kArea = 0.0049286732339746519;  // v: the area of every layer
      constexpr double kScale = 0x1.0p52;              // rabs has 52 bits
      double x[256];
      x[255] = kNormalR;
      f[255] = std::exp(-0.5 * kNormalR * kNormalR);
      for (int i = 254; i >= 1; --i) {
        x[i] = std::sqrt(-2.0 * std::log(f[i + 1] + kArea / x[i + 1]));
        f[i] = std::exp(-0.5 * x[i] * x[i]);
        // NumPy's tables were computed where this one exp came out one ulp above the correctly
        // rounded value (which glibc returns); every other entry is the correctly rounded
        // recurrence. Reproduce it: f[38] and every layer below it inherit it.
        if (i == kOffByOneLayer) f[i] = std::nextafter(f[i], 1.0);
      }
      x[0] = 0.0;
      f[0] = 1.0;
      k[0] = static_cast<uint64_t>(std::nearbyint(kNormalR * f[255] / kArea * kScale));
      w[0] = kArea / f[255] / kScale;
      for (int i = 1; i < 256; ++i) {
        k[i] = static_cast<uint64_t>(std::nearbyint(x[i - 1] / x[i] * kScale));  // k[1] = 0
        w[i] = x[i] / kScale;
      }
    }
    static constexpr int kOffByOneLayer = 38;
  };

  Uint128 state_ = 0;
  Uint128 increment_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
};

}  // namespace pp
