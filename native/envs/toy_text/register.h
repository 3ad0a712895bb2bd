// Registration of Gymnasium's toy-text tasks (FrozenLake, Taxi, CliffWalking, Blackjack).
// Call once with the registry the pool looks tasks up in; the family needs no other entry point.
#pragma once

#include "core/registry.h"

namespace pp {

// Adds FrozenLake-v1, FrozenLake8x8-v1, Taxi-v3, CliffWalking-v1, CliffWalkingSlippery-v1 and
// Blackjack-v1 (family "toy_text") with Gymnasium's registered kwargs, time limits and thresholds.
void RegisterToyText(Registry& registry);

}  // namespace pp
