// The classic-control env library (families/classic_control.so): Gymnasium's classic-control tasks.
// Loaded like every other family, through the one loader (core/family_loader.h).
#include "core/family.h"

#include "envs/classic_control/register.h"

// Pendulum's render() draws Gymnasium's own arrow image, read from the installed gymnasium (never
// copied here): assets/clockwise.png under envs/classic_control.
PP_FAMILY_RESOURCES("classic_control_dir gymnasium envs/classic_control\n")

PP_REGISTER_FAMILY(registry) { pp::RegisterClassicControl(*registry, registry->Resource("classic_control_dir")); }
