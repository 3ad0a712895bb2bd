// Generator.shuffle of NumPy's stream, which core/numpy_random.h does not offer: the Fisher-Yates
// walk of _generator.pyx with random_interval's masked rejection draws (minigrid's Crossing envs).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/numpy_random.h"

namespace pp::minigrid {

// random_interval(bitgen, max): a uniform integer in [0, max] from the smallest all-ones mask
// >= max, redrawn while above max; 32-bit draws (sharing the generator's buffered half) when max
// fits in 32 bits, as NumPy's distributions.c.
inline uint64_t RandomInterval(NumpyGenerator& rng, uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
  uint64_t value;
  if (max <= 0xffffffffULL) {
    while ((value = (rng.NextU32() & mask)) > max) {
    }
  } else {
    while ((value = (rng.NextU64() & mask)) > max) {
    }
  }
  return value;
}

// Generator.shuffle(x) of a list or a 1-d array: for i from n-1 down to 1, swap x[i] with
// x[random_interval(i)].
template <typename T>
void Shuffle(NumpyGenerator& rng, std::vector<T>& items) {
  for (std::size_t i = items.size(); i-- > 1;) {
    const auto j = static_cast<std::size_t>(RandomInterval(rng, i));
    std::swap(items[i], items[j]);
  }
}

}  // namespace pp::minigrid
