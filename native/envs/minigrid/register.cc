// Registers minigrid's MiniGrid-* tasks: per task id, minigrid's registered kwargs as config
// defaults, its max_steps as max_episode_steps, and the env class that generates it.
#include "envs/minigrid/register.h"

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/task_maker.h"
#include "envs/minigrid/navigation_envs.h"
#include "envs/minigrid/object_envs.h"
#include "envs/minigrid/room_envs.h"

namespace pp {

namespace {

using minigrid::MiniGridDefaults;
using Floats = std::vector<double>;

using MaxSteps = int64_t (*)(const Config&);

// The spec of an EnvT task: its action count, its grid's size and minigrid's max_steps for the
// config (EnvT's formula, or the id's own where one class serves ids with different ones).
template <typename EnvT, typename... Args>
void AddWith(Registry& registry, std::string id, Config defaults, MaxSteps max_steps, Args... args) {
  SpecMaker spec = [max_steps](const std::string& /*task_id*/, const Config& config) {
    return minigrid::MiniGridSpec(config, EnvT::kNumActions, EnvT::GridSize(config), max_steps(config));
  };
  // minigrid registers no reward threshold.
  registry.Add(MakeTask<EnvT>(std::move(id), "minigrid", std::move(defaults), std::move(spec), std::nullopt, args...));
}
template <typename EnvT, typename... Args>
void Add(Registry& registry, std::string id, Config defaults, Args... args) {
  AddWith<EnvT>(registry, std::move(id), std::move(defaults), &EnvT::DefaultMaxSteps, args...);
}

}  // namespace

void RegisterMiniGrid(Registry& registry) {
  using namespace minigrid;
  // Empty: see_through_walls=True, max_steps 4 size^2.
  for (int64_t size : {5, 6, 8, 16}) {
    const std::string s = std::to_string(size);
    Add<EmptyEnv>(
        registry, "MiniGrid-Empty-" + s + "x" + s + "-v0",
        MiniGridDefaults(true, {{"size", size}, {"agent_start_pos", Floats{1, 1}}, {"agent_start_dir", int64_t{0}}}));
    if (size <= 6) {
      Add<EmptyEnv>(
          registry, "MiniGrid-Empty-Random-" + s + "x" + s + "-v0",
          MiniGridDefaults(true, {{"size", size}, {"agent_start_pos", Floats{}}, {"agent_start_dir", int64_t{0}}}));
    }
  }
  for (int64_t size : {5, 6, 8, 16}) {
    const std::string s = std::to_string(size);
    Add<DoorKeyEnv>(registry, "MiniGrid-DoorKey-" + s + "x" + s + "-v0", MiniGridDefaults(false, {{"size", size}}));
  }
  Add<FourRoomsEnv>(registry, "MiniGrid-FourRooms-v0",
                    MiniGridDefaults(false, {{"agent_pos", Floats{}}, {"goal_pos", Floats{}}}));
  // MultiRoom: (id, minNumRooms, maxNumRooms, maxRoomSize); N4-S5-v0 really has six rooms.
  const std::vector<std::tuple<std::string, int64_t, int64_t, int64_t>> multi_rooms = {
      {"MiniGrid-MultiRoom-N2-S4-v0", 2, 2, 4},
      {"MiniGrid-MultiRoom-N4-S5-v0", 6, 6, 5},
      {"MiniGrid-MultiRoom-N4-S5-v1", 4, 4, 5},
      {"MiniGrid-MultiRoom-N6-v0", 6, 6, 10}};
  for (const auto& [id, min_rooms, max_rooms, room_size] : multi_rooms) {
    Add<MultiRoomEnv>(registry, id,
                      MiniGridDefaults(false, {{"minNumRooms", min_rooms},
                                               {"maxNumRooms", max_rooms},
                                               {"maxRoomSize", room_size},
                                               {"width", int64_t{25}},
                                               {"height", int64_t{25}}}));
  }
  for (const auto& [room_size, num_rows] :
       std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {3, 2}, {3, 3}, {4, 3}, {5, 3}, {6, 3}}) {
    Add<KeyCorridorEnv>(
        registry, "MiniGrid-KeyCorridorS" + std::to_string(room_size) + "R" + std::to_string(num_rows) + "-v0",
        MiniGridDefaults(false, {{"room_size", room_size}, {"num_rows", num_rows}, {"obj_type", std::string("ball")}}));
  }
  for (int64_t size : {5, 6, 7}) {
    Add<LavaGapEnv>(registry, "MiniGrid-LavaGapS" + std::to_string(size) + "-v0",
                    MiniGridDefaults(false, {{"size", size}, {"obstacle_type", std::string("lava")}}));
  }
  for (const auto& [prefix, obstacle] :
       std::vector<std::pair<std::string, std::string>>{{"LavaCrossing", "lava"}, {"SimpleCrossing", "wall"}}) {
    for (const auto& [size, crossings] : std::vector<std::pair<int64_t, int64_t>>{{9, 1}, {9, 2}, {9, 3}, {11, 5}}) {
      Add<CrossingEnv>(
          registry, "MiniGrid-" + prefix + "S" + std::to_string(size) + "N" + std::to_string(crossings) + "-v0",
          MiniGridDefaults(false, {{"size", size}, {"num_crossings", crossings}, {"obstacle_type", obstacle}}));
    }
  }
  Add<UnlockEnv>(registry, "MiniGrid-Unlock-v0", MiniGridDefaults(false));
  Add<UnlockPickupEnv>(registry, "MiniGrid-UnlockPickup-v0", MiniGridDefaults(false), false);
  AddWith<UnlockPickupEnv>(
      registry, "MiniGrid-BlockedUnlockPickup-v0", MiniGridDefaults(false),
      [](const Config&) -> int64_t { return 16 * 36; }, true);
  // ObstructedMaze: max_steps 4 num_rooms_visited room_size^2 with room_size 6.
  for (const auto& [name, key_in_box, blocked] : std::vector<std::tuple<std::string, bool, bool>>{
           {"1Dl", false, false}, {"1Dlh", true, false}, {"1Dlhb", true, true}}) {
    Add<ObstructedMaze1Env>(registry, "MiniGrid-ObstructedMaze-" + name + "-v0",
                            MiniGridDefaults(false, {{"key_in_box", key_in_box}, {"blocked", blocked}}));
  }
  struct Maze {
    std::string name;
    double agent_x, agent_y;
    bool key_in_box, blocked;
    int64_t num_quarters, num_rooms_visited;
    bool v0, v1;
  };
  const std::vector<Maze> mazes = {
      {"2Dl", 2, 1, false, false, 1, 4, true, false}, {"2Dlh", 2, 1, true, false, 1, 4, true, false},
      {"2Dlhb", 2, 1, true, true, 1, 4, true, true},  {"1Q", 1, 1, true, true, 1, 5, true, true},
      {"2Q", 2, 1, true, true, 2, 11, true, true},    {"Full", 1, 1, true, true, 4, 25, true, true}};
  for (const Maze& m : mazes) {
    const Config defaults = MiniGridDefaults(false, {{"agent_room", Floats{m.agent_x, m.agent_y}},
                                                     {"key_in_box", m.key_in_box},
                                                     {"blocked", m.blocked},
                                                     {"num_quarters", m.num_quarters},
                                                     {"num_rooms_visited", m.num_rooms_visited}});
    if (m.v0) Add<ObstructedMazeFullEnv>(registry, "MiniGrid-ObstructedMaze-" + m.name + "-v0", defaults, false);
    if (m.v1) Add<ObstructedMazeFullEnv>(registry, "MiniGrid-ObstructedMaze-" + m.name + "-v1", defaults, true);
  }
  for (int64_t size : {5, 6, 8}) {
    const std::string s = std::to_string(size);
    Add<GoToDoorEnv>(registry, "MiniGrid-GoToDoor-" + s + "x" + s + "-v0", MiniGridDefaults(true, {{"size", size}}));
  }
  for (int64_t size : {6, 8}) {
    const std::string s = std::to_string(size);
    Add<GoToObjectEnv>(registry, "MiniGrid-GoToObject-" + s + "x" + s + "-N2-v0",
                       MiniGridDefaults(true, {{"size", size}, {"numObjs", int64_t{2}}}));
  }
  for (const auto& [size, num_objs] : std::vector<std::pair<int64_t, int64_t>>{{6, 2}, {8, 3}}) {
    const std::string s = std::to_string(size);
    Add<PutNearEnv>(registry, "MiniGrid-PutNear-" + s + "x" + s + "-N" + std::to_string(num_objs) + "-v0",
                    MiniGridDefaults(true, {{"size", size}, {"numObjs", num_objs}}));
  }
  for (int64_t size : {6, 8}) {
    const std::string s = std::to_string(size);
    Add<RedBlueDoorEnv>(registry, "MiniGrid-RedBlueDoors-" + s + "x" + s + "-v0",
                        MiniGridDefaults(false, {{"size", size}}));
  }
  for (const auto& [size, num_objs] : std::vector<std::pair<int64_t, int64_t>>{{5, 2}, {6, 2}, {8, 3}}) {
    const std::string s = std::to_string(size);
    Add<FetchEnv>(registry, "MiniGrid-Fetch-" + s + "x" + s + "-N" + std::to_string(num_objs) + "-v0",
                  MiniGridDefaults(true, {{"size", size}, {"numObjs", num_objs}}));
  }
  for (const auto& [n, row] : std::vector<std::pair<int, int64_t>>{{1, 2}, {2, 5}}) {
    Add<DistShiftEnv>(registry, "MiniGrid-DistShift" + std::to_string(n) + "-v0",
                      MiniGridDefaults(true, {{"width", int64_t{9}},
                                              {"height", int64_t{7}},
                                              {"agent_start_pos", Floats{1, 1}},
                                              {"agent_start_dir", int64_t{0}},
                                              {"strip2_row", row}}));
  }
  Add<LockedRoomEnv>(registry, "MiniGrid-LockedRoom-v0", MiniGridDefaults(false, {{"size", int64_t{19}}}));
  // Dynamic-Obstacles: (size, random start, n_obstacles).
  for (const auto& [size, random, obstacles] : std::vector<std::tuple<int64_t, bool, int64_t>>{
           {5, false, 2}, {5, true, 2}, {6, false, 3}, {6, true, 3}, {8, false, 4}, {16, false, 8}}) {
    const std::string s = std::to_string(size);
    Add<DynamicObstaclesEnv>(
        registry, std::string("MiniGrid-Dynamic-Obstacles-") + (random ? "Random-" : "") + s + "x" + s + "-v0",
        MiniGridDefaults(true, {{"size", size},
                                {"agent_start_pos", random ? Floats{} : Floats{1, 1}},
                                {"agent_start_dir", int64_t{0}},
                                {"n_obstacles", obstacles}}));
  }
  for (const auto& [name, size, random] : std::vector<std::tuple<std::string, int64_t, bool>>{{"S17Random", 17, true},
                                                                                              {"S13Random", 13, true},
                                                                                              {"S13", 13, false},
                                                                                              {"S11", 11, false},
                                                                                              {"S9", 9, false},
                                                                                              {"S7", 7, false}}) {
    Add<MemoryEnv>(registry, "MiniGrid-Memory" + name + "-v0",
                   MiniGridDefaults(false, {{"size", size}, {"random_length", random}}));
  }
  Add<PlaygroundEnv>(registry, "MiniGrid-Playground-v0", MiniGridDefaults(false));
}

}  // namespace pp
