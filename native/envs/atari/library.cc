// The entry points of parallel_pool/_atari_envs.so (GPL-2.0: it links ALE): parallel_pool/__init__.py
// sets the ROM directory of the installed ale_py, then _native.load_library() registers.
#include <string>

#include "core/registry.h"
#include "envs/atari/register.h"

namespace {
std::string& RomDir() {
  static std::string dir;
  return dir;
}
}  // namespace

#define PP_EXPORT extern "C" __attribute__((visibility("default")))

// The ale_py/roms directory, found by the Python package; call before parallel_pool_register.
PP_EXPORT void parallel_pool_atari_set_rom_dir(const char* dir) { RomDir() = dir != nullptr ? dir : ""; }

// Called once by parallel_pool._native.load_library with the pool's registry.
PP_EXPORT void parallel_pool_register(pp::Registry* registry) { pp::atari::RegisterAtari(*registry, RomDir()); }
