// Registration of minigrid's MiniGrid-* tasks (minigrid 3.2.0's ids, kwargs and step limits).
// Call once with the registry the pool looks tasks up in; the family needs no other entry point.
#pragma once

#include "core/registry.h"

namespace pp {

// Adds the MiniGrid-* ids of minigrid 3.2.0 but the WFC ones (family "minigrid").
void RegisterMiniGrid(Registry& registry);

}  // namespace pp
