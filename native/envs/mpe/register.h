// Registration of the MPE tasks of mpe2 1.1.1 (their ids, kwargs and defaults).
// Call once with the registry the pool looks tasks up in; the family needs no other entry point.
#pragma once

#include "core/registry.h"

namespace pp {

// Adds simple_v3, simple_spread_v3, simple_tag_v3, simple_adversary_v3, simple_reference_v3,
// simple_speaker_listener_v4, simple_push_v3, simple_crypto_v3 and simple_world_comm_v3 (family "mpe").
void RegisterMpe(Registry& registry);

}  // namespace pp
