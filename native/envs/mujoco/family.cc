// The MuJoCo env library (families/mujoco.so): Gymnasium's MuJoCo tasks. It reads Gymnasium's model
// files from the installed gymnasium package (bare `xml_file` names are looked up there).
#include "core/family.h"

#include "envs/mujoco/register.h"

PP_FAMILY_RESOURCES("assets_dir gymnasium envs/mujoco/assets\n")

PP_REGISTER_FAMILY(registry) { pp::mujoco::RegisterMujoco(*registry, registry->Resource("assets_dir")); }
