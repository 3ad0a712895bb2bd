// The dm_control env library (families/dm_control.so): dm_control's suite tasks. It reads the
// suite's model files from the installed dm_control package (never copied into this tree).
#include "core/family.h"

#include "envs/dm_control/register.h"

PP_FAMILY_RESOURCES("suite_dir dm_control suite\n")

PP_REGISTER_FAMILY(registry) { pp::dm_control::RegisterDmControl(*registry, registry->Resource("suite_dir")); }
