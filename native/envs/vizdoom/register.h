// Registration of the ViZDoom tasks (family "vizdoom"): one task per scenario of the vizdoom wheel.
// Used by family.cc (the entry point of families/vizdoom.so).
#pragma once

#include <string>

#include "core/registry.h"

namespace pp::vizdoom {

// A scenario's file stem (`deadly_corridor`) as EnvPool names its task (`DeadlyCorridor-v1`):
// each `_`-separated part capitalised, as envpool/vizdoom/registration.py.
std::string ScenarioToTaskId(const std::string& stem);

// Adds a task for every `<name>.cfg` in `scenario_dir` whose game data the wheel ships (its
// scenario WAD next to it; an IWAD, if it names one, among freedoom1/freedoom2). `vizdoom_dir` is
// the installed vizdoom package (the engine and the IWADs). Returns how many tasks it added.
int RegisterVizdoom(Registry& registry, const std::string& scenario_dir, const std::string& vizdoom_dir);

}  // namespace pp::vizdoom
