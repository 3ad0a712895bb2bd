// The classic-control env library (families/classic_control.so): Gymnasium's classic-control tasks.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/classic_control/register.h"

PP_REGISTER_FAMILY(registry) { pp::RegisterClassicControl(*registry); }
