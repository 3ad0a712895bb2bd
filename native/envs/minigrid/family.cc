// The MiniGrid env library (families/minigrid.so): minigrid's grid worlds and BabyAI levels, drawn from NumPy's
// stream in minigrid's order. Loaded like every other family, through the one loader.
#include "core/family.h"

#include "envs/minigrid/register.h"

PP_REGISTER_FAMILY(registry) {
  pp::RegisterMiniGrid(*registry);
  pp::RegisterBabyAI(*registry);
}
