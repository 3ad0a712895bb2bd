// Polling a condition for a bounded time before sleeping on it: a futex wake-up is an
// inter-processor interrupt on a VM, often longer than the wait it ends.
#pragma once

#include <chrono>

namespace pp {

// The CPU's hint that this thread is spinning on memory another core writes (x86's pause; a no-op
// elsewhere).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls done() (with the CPU's pause hint, the clock read every 64 polls) until it holds or
// `deadline` passes; returns whether it held.
template <typename Done>
bool SpinUntil(std::chrono::steady_clock::time_point deadline, Done done) {
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

}  // namespace pp
