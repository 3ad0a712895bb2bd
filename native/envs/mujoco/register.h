// Registration of Gymnasium's MuJoCo tasks (family "mujoco"), each as -v4 and -v5.
// Used by family.cc (the entry point of families/mujoco.so) and by native/bench/mujoco_raw.cc.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp::mujoco {

// Adds every MuJoCo task to `registry`. `assets_dir` becomes the default of each task's
// `assets_dir` config key: where bare `xml_file` names (Gymnasium's defaults) are looked up.
void RegisterMujoco(Registry& registry, const std::string& assets_dir);

}  // namespace pp::mujoco
