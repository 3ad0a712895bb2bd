// The ViZDoom task table, built from the scenario files present at run time: the vizdoom wheel
// decides which scenarios exist, and the task ids follow EnvPool's (basic -> Basic-v1).
#include "envs/vizdoom/register.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "core/task_maker.h"
#include "envs/vizdoom/vizdoom_env.h"

namespace pp::vizdoom {

std::string ScenarioToTaskId(const std::string& stem) {
  std::string id;
  bool start = true;
  for (const char c : stem) {
    if (c == '_') {
      start = true;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    id += static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = false;
  }
  return id + "-v1";
}

namespace {

// The value of `key = value` in a ViZDoom config file (its own syntax: one setting per line, `#`
// comments), or "" when the file does not set it.
std::string CfgValue(const std::filesystem::path& cfg, const std::string& key) {
  std::ifstream in(cfg);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      const auto b = s.find_first_not_of(" \t\r");
      const auto e = s.find_last_not_of(" \t\r");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    if (trim(line.substr(0, eq)) == key) return trim(line.substr(eq + 1));
  }
  return "";
}

}  // namespace

int RegisterVizdoom(Registry& registry, const std::string& scenario_dir, const std::string& vizdoom_dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (scenario_dir.empty() || !fs::is_directory(scenario_dir, error)) return 0;
  int added = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(scenario_dir, error)) {
    if (entry.path().extension() != ".cfg") continue;
    const std::string wad = CfgValue(entry.path(), "doom_scenario_path");
    if (!wad.empty() && !fs::exists(fs::path(scenario_dir) / wad, error)) continue;
    // doom.cfg and doom2.cfg need the commercial IWADs, which no wheel ships.
    const std::string iwad = CfgValue(entry.path(), "doom_game_path");
    if (!iwad.empty() && iwad != "freedoom1.wad" && iwad != "freedoom2.wad") continue;
    const std::string stem = entry.path().stem().string();
    Config defaults = VizdoomDefaults(entry.path().string(), vizdoom_dir);
    // The screen's channels follow the scenario's screen_format (GRAY8: one; else ViZDoom's default
    // CRCGCB or the RGB the file names: three), as EnvPool's observation does.
    std::string format = CfgValue(entry.path(), "screen_format");
    for (char& c : format) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    defaults.Set("gray_scale", format == "GRAY8");
    // cig's and multi_duel's maps have deathmatch starts only: without -deathmatch their engine exits
    // at start ("No player 1 start"), so their tasks default to it, as ViZDoom's own examples run them.
    if (stem == "cig" || stem == "multi_duel") defaults.Set("game_args", std::string("-deathmatch"));
    registry.Add(
        MakeTask<VizdoomEnv>(ScenarioToTaskId(stem), "vizdoom", std::move(defaults),
                             [](const std::string& /*id*/, const Config& config) { return MakeVizdoomSpec(config); }));
    ++added;
  }
  return added;
}

}  // namespace pp::vizdoom
