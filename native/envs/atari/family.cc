// The Atari env library (families/atari.so, GPL-2.0: it links ALE). Its tasks are the ROMs of the
// installed ale-py wheel; without ale-py the family is not loaded and everything else works.
#include "core/family.h"

#include "envs/atari/register.h"

PP_FAMILY_RESOURCES("rom_dir ale_py roms\n")

PP_REGISTER_FAMILY(registry) { pp::atari::RegisterAtari(*registry, registry->Resource("rom_dir")); }
