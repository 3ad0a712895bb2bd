// Registration of Gymnasium's Box2D tasks (LunarLander, BipedalWalker, CarRacing).
// Call once with the registry the pool looks tasks up in; the family then needs no other entry point.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp {

// Adds the Box2D task ids (family "box2d") with Gymnasium's registered time limits and thresholds.
// `fonts_dir` holds pygame's freesansbold.ttf (CarRacing's score); CarRacing-v3 is registered only
// when it is there (a build with PP_WITH_PYGAME_FONT=OFF leaves it out).
void RegisterBox2d(Registry& registry, const std::string& fonts_dir);

}  // namespace pp
