// The entry points of parallel_pool/_mujoco_envs.so, an env library like any out-of-tree one:
// parallel_pool/__init__.py sets the assets directory, then _native.load_library() registers.
#include <string>

#include "core/registry.h"
#include "envs/mujoco/register.h"

namespace {
std::string& AssetsDir() {
  static std::string dir;
  return dir;
}
}  // namespace

#define PP_EXPORT extern "C" __attribute__((visibility("default")))

// Gymnasium's gymnasium/envs/mujoco/assets directory, found by the Python package (which knows
// where Gymnasium is installed); call before parallel_pool_register. Called through ctypes.
PP_EXPORT void parallel_pool_mujoco_set_assets_dir(const char* dir) { AssetsDir() = dir != nullptr ? dir : ""; }

// Called once by parallel_pool._native.load_library with the pool's registry.
PP_EXPORT void parallel_pool_register(pp::Registry* registry) {
  pp::mujoco::RegisterMujoco(*registry, AssetsDir());
}
