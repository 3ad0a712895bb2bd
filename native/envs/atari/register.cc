// The Atari task table, built from the ROM files present at run time: the ale-py wheel decides
// which games exist, and the task ids follow ale_py's Gymnasium ids (ALE/Pong-v5 -> Pong-v5).
#include "envs/atari/register.h"

#include <ale/common/Log.hpp>
#include <cctype>
#include <filesystem>
#include <memory>
#include <mutex>

#include "core/task_maker.h"
#include "envs/atari/atari_env.h"

namespace pp::atari {

std::string RomIdToName(const std::string& rom_id) {
  std::string name;
  bool previous_is_letter = false;
  for (const char c : rom_id) {
    const bool letter = std::isalpha(static_cast<unsigned char>(c)) != 0;
    if (c != '_') {
      name += static_cast<char>(letter && !previous_is_letter ? std::toupper(static_cast<unsigned char>(c))
                                                              : std::tolower(static_cast<unsigned char>(c)));
    }
    previous_is_letter = letter;
  }
  return name;
}

int RegisterAtari(Registry& registry, const std::string& rom_dir) {
  // ALE logs every ROM load to stdout; only its errors are worth printing.
  static std::once_flag quiet;
  std::call_once(quiet, [] { ale::Logger::setMode(ale::Logger::Error); });
  namespace fs = std::filesystem;
  std::error_code error;
  if (rom_dir.empty() || !fs::is_directory(rom_dir, error)) return 0;
  int added = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(rom_dir, error)) {
    // Only ROMs ALE knows (ale-py ships a few it cannot play, e.g. combat.bin).
    if (entry.path().extension() != ".bin" || !RomSettingsFor(entry.path().string())) continue;
    registry.Add(MakeTask<AtariEnv>(
        RomIdToName(entry.path().stem().string()) + "-v5", "atari", AtariDefaults(entry.path().string()),
        [](const std::string& /*id*/, const Config& config) { return MakeAtariSpec(config); }));
    ++added;
  }
  return added;
}

}  // namespace pp::atari
