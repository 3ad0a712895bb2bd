// Registration of Gymnasium's toy-text tasks (FrozenLake, Taxi, CliffWalking, Blackjack).
// Call once with the registry the pool looks tasks up in; the family needs no other entry point.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp {

// Adds FrozenLake-v1, FrozenLake8x8-v1, Taxi-v3, Taxi-v4, CliffWalking-v1, CliffWalkingSlippery-v1 and
// Blackjack-v1 (family "toy_text") with Gymnasium's registered kwargs, time limits and thresholds.
// `img_dir` and `font_dir` are gymnasium/envs/toy_text/img and font, whose sprites and font render()
// draws (read at an env's first render()), in the layout of the Gymnasium whose art img/ holds (1.1 to
// 1.3, or 1.4: toy_text::DetectArt).
void RegisterToyText(Registry& registry, const std::string& img_dir, const std::string& font_dir);

}  // namespace pp
