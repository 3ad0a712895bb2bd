// The MPE env library (families/mpe.so): mpe2's multi-agent particle worlds, every agent a player of
// the core's per-player rows. Loaded like every other family, through the one loader.
#include "core/family.h"

#include "envs/mpe/register.h"

PP_REGISTER_FAMILY(registry) { pp::RegisterMpe(*registry); }
