// Registration of the Atari tasks (family "atari"): one <Game>-v5 per ROM file in a directory.
// Used by family.cc (the entry point of families/atari.so) and by native/bench/atari_raw.cc.
#pragma once

#include <string>

#include "core/registry.h"

namespace pp::atari {

// ALE's ROM id (`space_invaders`) as Gymnasium names the game (`SpaceInvaders`): Python's
// str.title() without the underscores, as ale_py.registration.rom_id_to_name.
std::string RomIdToName(const std::string& rom_id);

// Adds `<Game>-v5` for every `<rom_id>.bin` in `rom_dir` (the installed ale_py/roms directory).
// Returns how many tasks it added.
int RegisterAtari(Registry& registry, const std::string& rom_dir);

}  // namespace pp::atari
