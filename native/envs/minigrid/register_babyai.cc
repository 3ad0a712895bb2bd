// Registers minigrid's BabyAI-* levels: per id, the level class, minigrid's registered kwargs and
// the level's max_steps (0: minigrid's per-episode value, from the instruction).
#include <string>
#include <utility>
#include <vector>

#include "core/task_maker.h"
#include "envs/minigrid/babyai_levels.h"
#include "envs/minigrid/register.h"

namespace pp {

namespace {

using minigrid::MiniGridDefaults;

using MaxSteps = int64_t (*)(const Config&);

// A level's config: the room grid (room_size, num_rows, num_cols) and its own kwargs.
Config Level(int64_t room_size, int64_t num_rows, int64_t num_cols, Config extra = {}) {
  extra.Set("room_size", room_size);
  extra.Set("num_rows", num_rows);
  extra.Set("num_cols", num_cols);
  return MiniGridDefaults(false, std::move(extra));
}

// LevelGen's kwargs with its defaults, overridden by `extra`.
Config Gen(int64_t room_size, int64_t num_rows, int64_t num_cols, Config extra) {
  Config c{{"num_dists", int64_t{18}},
           {"locked_room_prob", 0.5},
           {"locations", true},
           {"unblocking", true},
           {"implicit_unlock", true},
           {"action_kinds", std::string("goto,pickup,open,putnext")},
           {"instr_kinds", std::string("action,and,seq")}};
  for (const auto& [key, value] : extra.values()) c.Set(key, value);
  return Level(room_size, num_rows, num_cols, std::move(c));
}

// The spec of a level: minigrid's max_steps for the config by EnvT's formula (0: per episode), or
// the id's own where one class serves ids with different ones.
template <typename EnvT, typename... Args>
void AddWith(Registry& registry, std::string id, Config defaults, MaxSteps max_steps, Args... args) {
  SpecMaker spec = [max_steps](const std::string& /*task_id*/, const Config& config) {
    return minigrid::MiniGridSpec(config, EnvT::kNumActions, EnvT::GridSize(config), max_steps(config),
                                  minigrid::kBabyAIMissionBytes);
  };
  registry.Add(MakeTask<EnvT>(std::move(id), "minigrid", std::move(defaults), std::move(spec), std::nullopt, args...));
}
template <typename EnvT, typename... Args>
void Add(Registry& registry, std::string id, Config defaults, Args... args) {
  AddWith<EnvT>(registry, std::move(id), std::move(defaults), &EnvT::DefaultMaxSteps, args...);
}

}  // namespace

void RegisterBabyAI(Registry& registry) {
  using namespace minigrid::babyai;
  Add<GoToRedBall>(registry, "BabyAI-GoToRedBallGrey-v0", Level(8, 1, 1, {{"num_dists", int64_t{7}}}), true);
  Add<GoToRedBall>(registry, "BabyAI-GoToRedBall-v0", Level(8, 1, 1, {{"num_dists", int64_t{7}}}), false);
  Add<GoToRedBall>(registry, "BabyAI-GoToRedBallNoDists-v0", Level(8, 1, 1, {{"num_dists", int64_t{0}}}), false);
  Add<GoToObj>(registry, "BabyAI-GoToObj-v0", Level(8, 1, 1));
  Add<GoToObj>(registry, "BabyAI-GoToObjS4-v0", Level(4, 1, 1));
  Add<GoToObj>(registry, "BabyAI-GoToObjS6-v1", Level(6, 1, 1));
  Add<GoToLocal>(registry, "BabyAI-GoToLocal-v0", Level(8, 1, 1, {{"num_dists", int64_t{8}}}));
  for (const auto& [size, dists] : std::vector<std::pair<int64_t, int64_t>>{
           {5, 2}, {6, 2}, {6, 3}, {6, 4}, {7, 4}, {7, 5}, {8, 2}, {8, 3}, {8, 4}, {8, 5}, {8, 6}, {8, 7}}) {
    Add<GoToLocal>(registry, "BabyAI-GoToLocalS" + std::to_string(size) + "N" + std::to_string(dists) + "-v0",
                   Level(size, 1, 1, {{"num_dists", dists}}));
  }
  auto go_to = [&](const std::string& id, int64_t size, int64_t rows, int64_t cols, int64_t dists, bool open) {
    Add<GoTo>(registry, id, Level(size, rows, cols, {{"num_dists", dists}, {"doors_open", open}}));
  };
  go_to("BabyAI-GoTo-v0", 8, 3, 3, 18, false);
  go_to("BabyAI-GoToOpen-v0", 8, 3, 3, 18, true);
  go_to("BabyAI-GoToObjMaze-v0", 8, 3, 3, 1, false);
  go_to("BabyAI-GoToObjMazeOpen-v0", 8, 3, 3, 1, true);
  go_to("BabyAI-GoToObjMazeS4R2-v0", 4, 2, 2, 1, false);
  for (int64_t size : {4, 5, 6, 7}) go_to("BabyAI-GoToObjMazeS" + std::to_string(size) + "-v0", size, 3, 3, 1, false);
  Add<LockedDoorLevel>(registry, "BabyAI-GoToImpUnlock-v0", Level(8, 3, 3), true);
  Add<LevelGenLevel>(registry, "BabyAI-GoToSeq-v0",
                     Gen(8, 3, 3,
                         {{"action_kinds", std::string("goto")},
                          {"locked_room_prob", 0.0},
                          {"locations", false},
                          {"unblocking", false}}));
  Add<LevelGenLevel>(registry, "BabyAI-GoToSeqS5R2-v0",
                     Gen(5, 2, 2,
                         {{"num_dists", int64_t{4}},
                          {"action_kinds", std::string("goto")},
                          {"locked_room_prob", 0.0},
                          {"locations", false},
                          {"unblocking", false}}));
  Add<GoToRedBlueBall>(registry, "BabyAI-GoToRedBlueBall-v0", Level(8, 1, 1, {{"num_dists", int64_t{7}}}));
  Add<DoorsLevel>(registry, "BabyAI-GoToDoor-v0", Level(7, 3, 3), int{DoorsLevel::kGoToDoor});
  Add<DoorsLevel>(registry, "BabyAI-GoToObjDoor-v0", Level(8, 3, 3), int{DoorsLevel::kGoToObjDoor});
  Add<OpenLevel>(registry, "BabyAI-Open-v0", Level(8, 3, 3));
  Add<OpenRedDoor>(registry, "BabyAI-OpenRedDoor-v0", Level(5, 1, 2));
  for (const auto& [id, debug, select_by] :
       std::vector<std::tuple<std::string, bool, std::string>>{{"BabyAI-OpenDoor-v0", false, ""},
                                                               {"BabyAI-OpenDoorDebug-v0", true, ""},
                                                               {"BabyAI-OpenDoorColor-v0", false, "color"},
                                                               {"BabyAI-OpenDoorLoc-v0", false, "loc"}}) {
    Add<OpenDoor>(registry, id, Level(8, 3, 3, {{"debug", debug}, {"select_by", select_by}}));
  }
  for (const auto& [id, first, second, strict] : std::vector<std::tuple<std::string, std::string, std::string, bool>>{
           {"BabyAI-OpenTwoDoors-v0", "", "", false},
           {"BabyAI-OpenRedBlueDoors-v0", "red", "blue", false},
           {"BabyAI-OpenRedBlueDoorsDebug-v0", "red", "blue", true}}) {
    Add<OpenTwoDoors>(registry, id,
                      Level(6, 3, 3, {{"first_color", first}, {"second_color", second}, {"strict", strict}}));
  }
  for (const auto& [id, doors, debug] :
       std::vector<std::tuple<std::string, int64_t, bool>>{{"BabyAI-OpenDoorsOrderN2-v0", 2, false},
                                                           {"BabyAI-OpenDoorsOrderN4-v0", 4, false},
                                                           {"BabyAI-OpenDoorsOrderN2Debug-v0", 2, true},
                                                           {"BabyAI-OpenDoorsOrderN4Debug-v0", 4, true}}) {
    Add<OpenDoorsOrder>(registry, id, Level(6, 3, 3, {{"num_doors", doors}, {"debug", debug}}));
  }
  Add<PickupLevel>(registry, "BabyAI-Pickup-v0", Level(8, 3, 3), false);
  Add<PickupLevel>(registry, "BabyAI-UnblockPickup-v0", Level(8, 3, 3), true);
  Add<LevelGenLevel>(registry, "BabyAI-PickupLoc-v0",
                     Gen(8, 1, 1,
                         {{"action_kinds", std::string("pickup")},
                          {"instr_kinds", std::string("action")},
                          {"num_dists", int64_t{8}},
                          {"locked_room_prob", 0.0},
                          {"locations", true},
                          {"unblocking", false}}));
  Add<PickupDist>(registry, "BabyAI-PickupDist-v0", Level(7, 1, 1, {{"debug", false}}));
  Add<PickupDist>(registry, "BabyAI-PickupDistDebug-v0", Level(7, 1, 1, {{"debug", true}}));
  Add<PickupAbove>(registry, "BabyAI-PickupAbove-v0", Level(6, 3, 3));
  Add<PutNextLocal>(registry, "BabyAI-PutNextLocal-v0", Level(8, 1, 1, {{"num_objs", int64_t{8}}}));
  Add<PutNextLocal>(registry, "BabyAI-PutNextLocalS5N3-v0", Level(5, 1, 1, {{"num_objs", int64_t{3}}}));
  Add<PutNextLocal>(registry, "BabyAI-PutNextLocalS6N4-v0", Level(6, 1, 1, {{"num_objs", int64_t{4}}}));
  for (const auto& [name, size, objs, carrying] :
       std::vector<std::tuple<std::string, int64_t, int64_t, bool>>{{"S4N1", 4, 1, false},
                                                                    {"S5N2", 5, 2, false},
                                                                    {"S5N1", 5, 1, false},
                                                                    {"S6N3", 6, 3, false},
                                                                    {"S7N4", 7, 4, false},
                                                                    {"S5N2Carrying", 5, 2, true},
                                                                    {"S6N3Carrying", 6, 3, true},
                                                                    {"S7N4Carrying", 7, 4, true}}) {
    Add<TwoRoomPutNext>(registry, "BabyAI-PutNext" + name + "-v0",
                        Level(size, 1, 2, {{"objs_per_room", objs}, {"start_carrying", carrying}}), false);
  }
  Add<LockedDoorLevel>(registry, "BabyAI-Unlock-v0", Level(8, 3, 3), false);
  Add<UnlockLocal>(registry, "BabyAI-UnlockLocal-v0", Level(8, 3, 3, {{"distractors", false}}), false);
  Add<UnlockLocal>(registry, "BabyAI-UnlockLocalDist-v0", Level(8, 3, 3, {{"distractors", true}}), false);
  Add<UnlockLocal>(registry, "BabyAI-KeyInBox-v0", Level(8, 3, 3), true);
  // BabyAI's UnlockPickup tests `max is None` (the builtin) for its default: its max_steps stays
  // per episode.
  Add<UnlockPickupLevel>(registry, "BabyAI-UnlockPickup-v0", Level(6, 1, 2, {{"distractors", false}}), false);
  Add<UnlockPickupLevel>(registry, "BabyAI-UnlockPickupDist-v0", Level(6, 1, 2, {{"distractors", true}}), false);
  AddWith<UnlockPickupLevel>(
      registry, "BabyAI-BlockedUnlockPickup-v0", Level(6, 1, 2), [](const Config&) -> int64_t { return 16 * 36; },
      true);
  Add<UnlockToUnlock>(registry, "BabyAI-UnlockToUnlock-v0", Level(6, 1, 3));
  Add<DoorsLevel>(registry, "BabyAI-ActionObjDoor-v0", Level(7, 3, 3), int{DoorsLevel::kActionObjDoor});
  for (int64_t size : {5, 6, 7}) {
    Add<FindObj>(registry, "BabyAI-FindObjS" + std::to_string(size) + "-v0", Level(size, 3, 3));
  }
  Add<KeyCorridorLevel>(registry, "BabyAI-KeyCorridor-v0", Level(6, 3, 3, {{"obj_type", std::string("ball")}}));
  for (const auto& [size, rows] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {3, 2}, {3, 3}, {4, 3}, {5, 3}, {6, 3}}) {
    Add<KeyCorridorLevel>(registry, "BabyAI-KeyCorridorS" + std::to_string(size) + "R" + std::to_string(rows) + "-v0",
                          Level(size, rows, 3, {{"obj_type", std::string("ball")}}));
  }
  for (int64_t size : {8, 12, 16, 20}) {
    Add<OneRoom>(registry, "BabyAI-OneRoomS" + std::to_string(size) + "-v0", Level(size, 1, 1));
  }
  const MaxSteps move_two = [](const Config& c) -> int64_t {
    return 16 * c.GetInt("room_size") * c.GetInt("room_size");
  };
  AddWith<TwoRoomPutNext>(registry, "BabyAI-MoveTwoAcrossS5N2-v0", Level(5, 1, 2, {{"objs_per_room", int64_t{2}}}),
                          move_two, true);
  AddWith<TwoRoomPutNext>(registry, "BabyAI-MoveTwoAcrossS8N9-v0", Level(8, 1, 2, {{"objs_per_room", int64_t{9}}}),
                          move_two, true);
  const Config synth{
      {"instr_kinds", std::string("action")}, {"locations", false}, {"unblocking", true}, {"implicit_unlock", false}};
  Add<LevelGenLevel>(registry, "BabyAI-Synth-v0", Gen(8, 3, 3, synth));
  Add<LevelGenLevel>(registry, "BabyAI-SynthS5R2-v0", Gen(5, 2, 3, synth));
  Add<LevelGenLevel>(registry, "BabyAI-SynthLoc-v0",
                     Gen(8, 3, 3,
                         {{"instr_kinds", std::string("action")},
                          {"locations", true},
                          {"unblocking", true},
                          {"implicit_unlock", false}}));
  Add<LevelGenLevel>(registry, "BabyAI-SynthSeq-v0",
                     Gen(8, 3, 3, {{"locations", true}, {"unblocking", true}, {"implicit_unlock", false}}));
  Add<LevelGenLevel>(registry, "BabyAI-MiniBossLevel-v0",
                     Gen(5, 2, 2, {{"num_dists", int64_t{7}}, {"locked_room_prob", 0.25}}));
  Add<LevelGenLevel>(registry, "BabyAI-BossLevel-v0", Gen(8, 3, 3, {}));
  Add<LevelGenLevel>(registry, "BabyAI-BossLevelNoUnlock-v0",
                     Gen(8, 3, 3, {{"locked_room_prob", 0.0}, {"implicit_unlock", false}}));
}

}  // namespace pp
