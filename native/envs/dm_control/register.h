// Registration of dm_control's suite tasks (family "dm_control"), with EnvPool's ids.
// Used by family.cc (the entry point of families/dm_control.so) and by native/bench/mujoco_raw.cc.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp::dm_control {

// Adds every ported suite task to `registry`. `suite_dir` (the installed dm_control/suite) is the
// default of each task's `suite_dir` config key: where its model files are read.
void RegisterDmControl(Registry& registry, const std::string& suite_dir);

}  // namespace pp::dm_control
