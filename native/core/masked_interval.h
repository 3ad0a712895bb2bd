// NumPy's masked rejection draw of a uniform integer, shared by its two streams.
#pragma once

#include <cstdint>

namespace pp {

// A uniform integer in [0, max], NumPy's way: draws masked by the smallest all-ones mask >= max,
// redrawn while above max; 32-bit draws when max fits in 32 bits, else 64-bit ones. Generator's
// random_interval and RandomState's masked bounded draw are this; `gen` has NextU32 and NextU64.
template <typename Gen>
uint64_t MaskedInterval(Gen& gen, uint64_t max) {
  if (max == 0) return 0;
  uint64_t mask = max;
  for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
  uint64_t value;
  if (max <= 0xffffffffULL) {
    while ((value = (gen.NextU32() & mask)) > max) {
    }
  } else {
    while ((value = (gen.NextU64() & mask)) > max) {
    }
  }
  return value;
}

}  // namespace pp
