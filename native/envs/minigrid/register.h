// Registration of minigrid's MiniGrid-* tasks and BabyAI-* levels (minigrid 3.2.0's ids and kwargs).
// Call once with the registry the pool looks tasks up in; the family needs no other entry point.
#pragma once

#include "core/registry.h"

namespace pp {

// Adds the MiniGrid-* ids of minigrid 3.2.0 but the WFC ones (family "minigrid").
void RegisterMiniGrid(Registry& registry);
// Adds the BabyAI-* levels of minigrid 3.2.0 (family "minigrid").
void RegisterBabyAI(Registry& registry);

}  // namespace pp
