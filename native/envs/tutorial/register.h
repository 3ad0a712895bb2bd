// Registers the tutorial env family: GuessingGame-v0 (the worked example) and Faulty-v0 (faults).
#pragma once

#include "core/registry.h"

namespace pp {
void RegisterTutorial(Registry& registry);
}  // namespace pp
