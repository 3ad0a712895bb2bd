// Registers the tutorial env family (GuessingGame-v0).
#pragma once

#include "core/registry.h"

namespace pp {
void RegisterTutorial(Registry& registry);
}  // namespace pp
