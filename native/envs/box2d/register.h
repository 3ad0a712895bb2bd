// Registration of Gymnasium's Box2D tasks (LunarLander, BipedalWalker, CarRacing).
// Call once with the registry the pool looks tasks up in; the family then needs no other entry point.
#pragma once

#include "core/registry.h"

namespace pp {

// Adds the Box2D task ids (family "box2d") with Gymnasium's registered time limits and thresholds.
void RegisterBox2d(Registry& registry);

}  // namespace pp
