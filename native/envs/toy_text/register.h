// Registration of Gymnasium's toy-text tasks (FrozenLake, Taxi, CliffWalking, Blackjack).
// Call once with the registry the pool looks tasks up in; the family needs no other entry point.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp {

// Adds FrozenLake-v1, FrozenLake8x8-v1, Taxi-v3, CliffWalking-v1, CliffWalkingSlippery-v1 and
// Blackjack-v1 (family "toy_text") with Gymnasium's registered kwargs, time limits and thresholds.
// `img_dir` and `font_dir` are gymnasium/envs/toy_text/img and font, whose sprites and font render()
// draws (read when an env is made).
void RegisterToyText(Registry& registry, const std::string& img_dir, const std::string& font_dir);

}  // namespace pp
