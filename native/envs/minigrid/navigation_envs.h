// The MiniGrid tasks that are about getting somewhere (minigrid/envs/): Empty, DoorKey, FourRooms,
// MultiRoom, LavaGap, SimpleCrossing/LavaCrossing, DistShift, Memory, Dynamic-Obstacles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

// An optional position kwarg (agent_start_pos, goal_pos, ...): () is minigrid's None.
inline std::optional<Pos> OptionalPos(const Config& config, const std::string& key) {
  const std::vector<double>& v = config.GetFloats(key);
  if (v.empty()) return std::nullopt;
  if (v.size() != 2) throw std::invalid_argument("minigrid: " + key + " must be (x, y) or () for None");
  return Pos{static_cast<int>(v[0]), static_cast<int>(v[1])};
}

inline int ConfigInt(const Config& config, const std::string& key) { return static_cast<int>(config.GetInt(key)); }

// The size x size grid of the tasks whose kwarg `size` sets both sides.
inline Pos SquareGrid(const Config& config) { return {ConfigInt(config, "size"), ConfigInt(config, "size")}; }

// GridSize and DefaultMaxSteps of a task on a size x size grid whose max_steps defaults to
// kStepsPerCell * size * size.
template <int64_t kStepsPerCell>
struct SquareTask {
  static int64_t DefaultMaxSteps(const Config& c) { return kStepsPerCell * c.GetInt("size") * c.GetInt("size"); }
  static Pos GridSize(const Config& c) { return SquareGrid(c); }
};

// EmptyEnv: a goal in the bottom-right corner; the agent at agent_start_pos or anywhere.
class EmptyEnv final : public MiniGridEnv, public SquareTask<4> {
 public:
  EmptyEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        start_(OptionalPos(spec.config, "agent_start_pos")),
        start_dir_(ConfigInt(spec.config, "agent_start_dir")) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("empty")); }

  void GenGrid() override {
    world_.WallRect(0, 0, width_, height_);
    PutObj(world_.New(kGoal, kGreen), width_ - 2, height_ - 2);
    PlaceAgentAt(start_, start_dir_);
    mission_ = "get to the green goal square";
  }

 private:
  const std::optional<Pos> start_;
  const int start_dir_;
};

// DoorKeyEnv: a wall splits the grid; the key on the agent's side opens the locked door.
class DoorKeyEnv final : public MiniGridEnv, public SquareTask<10> {
 public:
  DoorKeyEnv(const EnvSpec& spec, int env_id) : MiniGridEnv(spec, env_id, GridSize(spec.config)) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("doorkey")); }

  void GenGrid() override {
    world_.WallRect(0, 0, width_, height_);
    PutObj(world_.New(kGoal, kGreen), width_ - 2, height_ - 2);
    const int split = RandInt(2, width_ - 2);
    world_.VertWall(split, 0);
    PlaceAgent({0, 0}, {split, height_});
    const int door = RandInt(1, height_ - 2);
    PutObj(world_.New(kDoor, kYellow, false, true), split, door);
    PlaceObj(world_.New(kKey, kYellow), {0, 0}, {split, height_});
    mission_ = "use the key to open the door and then get to the goal";
  }
};

// FourRoomsEnv: four 9x9 rooms joined by one gap per inner wall.
class FourRoomsEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 100; }
  static Pos GridSize(const Config& /*c*/) { return {19, 19}; }
  FourRoomsEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        agent_pos_(OptionalPos(spec.config, "agent_pos")),
        goal_pos_(OptionalPos(spec.config, "goal_pos")) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("four_rooms")); }

  void GenGrid() override {
    OuterWalls(world_);
    const int room_w = width_ / 2, room_h = height_ / 2;
    for (int j = 0; j < 2; ++j) {
      for (int i = 0; i < 2; ++i) {
        const int x_l = i * room_w, y_t = j * room_h, x_r = x_l + room_w, y_b = y_t + room_h;
        if (i + 1 < 2) {
          world_.VertWall(x_r, y_t, room_h);
          world_.Set(x_r, RandInt(y_t + 1, y_b), kNone);
        }
        if (j + 1 < 2) {
          world_.HorzWall(x_l, y_b, room_w);
          world_.Set(RandInt(x_l + 1, x_r), y_b, kNone);
        }
      }
    }
    if (agent_pos_) {
      agent_ = *agent_pos_;
      world_.Set(agent_.x, agent_.y, kNone);
      agent_dir_ = RandInt(0, 4);
    } else {
      PlaceAgent();
    }
    if (goal_pos_) {
      PutObj(world_.New(kGoal, kGreen), goal_pos_->x, goal_pos_->y);
    } else {
      PlaceObj(world_.New(kGoal, kGreen));
    }
    mission_ = "reach the goal";  // MissionSpace.sample() at construction: the fixed mission
  }

 private:
  const std::optional<Pos> agent_pos_, goal_pos_;
};

// MultiRoomEnv: a chain of rooms joined by closed doors, each placed off a random wall of the last.
class MultiRoomEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return c.GetInt("maxNumRooms") * 20; }
  static Pos GridSize(const Config& c) { return {ConfigInt(c, "width"), ConfigInt(c, "height")}; }
  MultiRoomEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        min_rooms_(ConfigInt(spec.config, "minNumRooms")),
        max_rooms_(ConfigInt(spec.config, "maxNumRooms")),
        max_room_size_(ConfigInt(spec.config, "maxRoomSize")) {
    if (min_rooms_ < 1 || max_rooms_ < min_rooms_ || max_room_size_ < 4) {
      throw std::invalid_argument("MultiRoom: needs 0 < minNumRooms <= maxNumRooms and maxRoomSize >= 4");
    }
  }

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("multi_room")); }

  struct Room {
    Pos top, size, entry;
  };

  void GenGrid() override {
    std::vector<Room> rooms;
    const int num_rooms = RandInt(min_rooms_, max_rooms_ + 1);
    while (static_cast<int>(rooms.size()) < num_rooms) {
      std::vector<Room> current;
      const int ex = RandInt(0, width_ - 2);
      const Pos entry{ex, RandInt(0, width_ - 2)};  // minigrid draws both from the width
      PlaceRoom(num_rooms, current, 4, max_room_size_, 2, entry);
      if (current.size() > rooms.size()) rooms = current;
    }
    int prev_color = -1;
    for (std::size_t idx = 0; idx < rooms.size(); ++idx) {
      const Room& room = rooms[idx];
      for (int i = 0; i < room.size.x; ++i) {
        world_.Set(room.top.x + i, room.top.y, world_.NewWall());
        world_.Set(room.top.x + i, room.top.y + room.size.y - 1, world_.NewWall());
      }
      for (int j = 0; j < room.size.y; ++j) {
        world_.Set(room.top.x, room.top.y + j, world_.NewWall());
        world_.Set(room.top.x + room.size.x - 1, room.top.y + j, world_.NewWall());
      }
      if (idx > 0) {
        std::vector<Color> colors;  // sorted(COLOR_NAMES minus the previous door's colour)
        for (Color c : kColorNames) {
          if (c != prev_color) colors.push_back(c);
        }
        const Color color = RandElem(colors);
        world_.Set(room.entry.x, room.entry.y, world_.New(kDoor, color));
        prev_color = color;
      }
    }
    PlaceAgent(rooms.front().top, rooms.front().size);
    PlaceObj(world_.New(kGoal, kGreen), rooms.back().top, rooms.back().size);
    mission_ = "traverse the rooms to get to the goal";
  }

  // _placeRoom: a room of random size entered through `entry` on wall `entry_wall`, then (up to
  // eight tries) the next room off one of its other walls. False if this room does not fit.
  bool PlaceRoom(int num_left, std::vector<Room>& rooms, int min_size, int max_size, int entry_wall, Pos entry) {
    const int size_x = RandInt(min_size, max_size + 1);
    const int size_y = RandInt(min_size, max_size + 1);
    Pos top;
    if (rooms.empty()) {
      top = entry;
    } else if (entry_wall == 0) {
      top.x = entry.x - size_x + 1;
      top.y = RandInt(entry.y - size_y + 2, entry.y);
    } else if (entry_wall == 1) {
      top.x = RandInt(entry.x - size_x + 2, entry.x);
      top.y = entry.y - size_y + 1;
    } else if (entry_wall == 2) {
      top.x = entry.x;
      top.y = RandInt(entry.y - size_y + 2, entry.y);
    } else {
      top.x = RandInt(entry.x - size_x + 2, entry.x);
      top.y = entry.y;
    }
    if (top.x < 0 || top.y < 0) return false;
    if (top.x + size_x > width_ || top.y + size_y >= height_) return false;
    for (std::size_t r = 0; r + 1 < rooms.size(); ++r) {  // every room but the one entered from
      const Room& room = rooms[r];
      const bool apart = top.x + size_x < room.top.x || room.top.x + room.size.x <= top.x ||
                         top.y + size_y < room.top.y || room.top.y + room.size.y <= top.y;
      if (!apart) return false;
    }
    rooms.push_back(Room{top, {size_x, size_y}, entry});
    if (num_left == 1) return true;
    for (int attempt = 0; attempt < 8; ++attempt) {
      std::vector<int> walls;
      for (int w = 0; w < 4; ++w) {
        if (w != entry_wall) walls.push_back(w);
      }
      const int exit_wall = RandElem(walls);
      const int next_entry_wall = (exit_wall + 2) % 4;
      Pos exit;
      if (exit_wall == 0) {
        exit = {top.x + size_x - 1, top.y + RandInt(1, size_y - 1)};
      } else if (exit_wall == 1) {
        exit = {top.x + RandInt(1, size_x - 1), top.y + size_y - 1};
      } else if (exit_wall == 2) {
        exit = {top.x, top.y + RandInt(1, size_y - 1)};
      } else {
        exit = {top.x + RandInt(1, size_x - 1), top.y};
      }
      if (PlaceRoom(num_left - 1, rooms, min_size, max_size, next_entry_wall, exit)) break;
    }
    return true;
  }

 private:
  const int min_rooms_, max_rooms_, max_room_size_;
};

// LavaGapEnv: a vertical strip of lava (or walls) with one gap.
class LavaGapEnv final : public MiniGridEnv, public SquareTask<4> {
 public:
  LavaGapEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        obstacle_(ObstacleType(spec.config.GetString("obstacle_type"))) {}

  static ObjType ObstacleType(const std::string& name) {
    if (name == "lava") return kLava;
    if (name == "wall") return kWall;
    throw std::invalid_argument("minigrid: unknown obstacle_type '" + name + "', expected 'lava' or 'wall'");
  }

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("lava_gap")); }

  void GenGrid() override {
    if (width_ < 5 || height_ < 5) throw std::invalid_argument("LavaGap: size must be >= 5");
    world_.WallRect(0, 0, width_, height_);
    agent_ = {1, 1};
    agent_dir_ = 0;
    PutObj(world_.New(kGoal, kGreen), width_ - 2, height_ - 2);
    const int gx = RandInt(2, width_ - 2);
    const int gy = RandInt(1, height_ - 1);
    world_.VertWall(gx, 1, height_ - 2, obstacle_);
    world_.Set(gx, gy, kNone);
    mission_ = obstacle_ == kLava ? "avoid the lava and get to the green goal square"
                                  : "find the opening and get to the green goal square";
  }

 private:
  const ObjType obstacle_;
};

// CrossingEnv: num_crossings rivers of lava (or walls), with one crossing per river on a path.
class CrossingEnv final : public MiniGridEnv, public SquareTask<4> {
 public:
  CrossingEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        num_crossings_(ConfigInt(spec.config, "num_crossings")),
        obstacle_(LavaGapEnv::ObstacleType(spec.config.GetString("obstacle_type"))) {
    if (width_ % 2 != 1) throw std::invalid_argument("Crossing: size must be odd");
  }

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("crossing")); }

  void GenGrid() override {
    world_.WallRect(0, 0, width_, height_);
    agent_ = {1, 1};
    agent_dir_ = 0;
    PutObj(world_.New(kGoal, kGreen), width_ - 2, height_ - 2);
    // rivers: (vertical?, position); vertical ones first, as minigrid lists them.
    std::vector<std::pair<bool, int>> rivers;
    for (int i = 2; i < height_ - 2; i += 2) rivers.emplace_back(true, i);
    for (int j = 2; j < width_ - 2; j += 2) rivers.emplace_back(false, j);
    np_random().Shuffle(rivers.data(), rivers.size());
    rivers.resize(std::min(rivers.size(), static_cast<std::size_t>(std::max(num_crossings_, 0))));
    std::vector<int> rivers_v, rivers_h;
    for (const auto& [vertical, pos] : rivers) (vertical ? rivers_v : rivers_h).push_back(pos);
    std::sort(rivers_v.begin(), rivers_v.end());
    std::sort(rivers_h.begin(), rivers_h.end());
    for (int i = 1; i < width_ - 1; ++i) {
      for (int j : rivers_h) PutObj(world_.NewObstacle(obstacle_), i, j);
    }
    for (int i : rivers_v) {
      for (int j = 1; j < height_ - 1; ++j) PutObj(world_.NewObstacle(obstacle_), i, j);
    }
    // path: one step per river, crossing a vertical river moves "horizontally" (true here).
    std::vector<char> path(rivers_v.size(), 1);
    path.insert(path.end(), rivers_h.size(), 0);
    np_random().Shuffle(path.data(), path.size());
    std::vector<int> limits_v{0}, limits_h{0};
    limits_v.insert(limits_v.end(), rivers_v.begin(), rivers_v.end());
    limits_v.push_back(height_ - 1);
    limits_h.insert(limits_h.end(), rivers_h.begin(), rivers_h.end());
    limits_h.push_back(width_ - 1);
    std::size_t room_i = 0, room_j = 0;
    for (const char horizontal : path) {
      int i, j;
      if (horizontal) {
        i = limits_v[room_i + 1];
        j = ChoiceInRange(limits_h[room_j] + 1, limits_h[room_j + 1]);
        ++room_i;
      } else {
        i = ChoiceInRange(limits_v[room_i] + 1, limits_v[room_i + 1]);
        j = limits_h[room_j + 1];
        ++room_j;
      }
      world_.Set(i, j, kNone);
    }
    mission_ = obstacle_ == kLava ? "avoid the lava and get to the green goal square"
                                  : "find the opening and get to the green goal square";
  }

 private:
  // np_random.choice(range(low, high)): an index drawn over the range's length.
  int ChoiceInRange(int low, int high) { return low + static_cast<int>(np_random().Choice(high - low)); }

  const int num_crossings_;
  const ObjType obstacle_;
};

// DistShiftEnv: two strips of lava between the agent and the goal; strip2_row moves the second.
class DistShiftEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 4 * c.GetInt("width") * c.GetInt("height"); }
  static Pos GridSize(const Config& c) { return {ConfigInt(c, "width"), ConfigInt(c, "height")}; }
  DistShiftEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        start_(OptionalPos(spec.config, "agent_start_pos")),
        start_dir_(ConfigInt(spec.config, "agent_start_dir")),
        strip2_row_(ConfigInt(spec.config, "strip2_row")) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("distshift")); }

  void GenGrid() override {
    world_.WallRect(0, 0, width_, height_);
    PutObj(world_.New(kGoal, kGreen), width_ - 2, 1);
    for (int i = 0; i < width_ - 6; ++i) {
      world_.Set(3 + i, 1, world_.New(kLava, kRed));
      world_.Set(3 + i, strip2_row_, world_.New(kLava, kRed));
    }
    PlaceAgentAt(start_, start_dir_);
    mission_ = "get to the green goal square";
  }

 private:
  const std::optional<Pos> start_;
  const int start_dir_, strip2_row_;
};

// MemoryEnv: remember the object in the start room, then go to its match at the hallway's end.
class MemoryEnv final : public MiniGridEnv, public SquareTask<5> {
 public:
  MemoryEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)), random_length_(spec.config.GetBool("random_length")) {
    if (height_ % 2 != 1) throw std::invalid_argument("Memory: size must be odd");
  }

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("memory"));
    SetPos(c, "success_pos", success_);
    SetPos(c, "failure_pos", failure_);
  }

  void GenGrid() override {
    OuterWalls(world_);
    const int mid = height_ / 2, upper = mid - 2, lower = mid + 2;
    const int hallway_end = random_length_ ? RandInt(4, width_ - 2) : width_ - 3;
    for (int i = 1; i < 5; ++i) {
      world_.Set(i, upper, world_.NewWall());
      world_.Set(i, lower, world_.NewWall());
    }
    world_.Set(4, upper + 1, world_.NewWall());
    world_.Set(4, lower - 1, world_.NewWall());
    for (int i = 5; i < hallway_end; ++i) {
      world_.Set(i, upper + 1, world_.NewWall());
      world_.Set(i, lower - 1, world_.NewWall());
    }
    for (int j = 0; j < height_; ++j) {
      if (j != mid) world_.Set(hallway_end, j, world_.NewWall());
      world_.Set(hallway_end + 2, j, world_.NewWall());
    }
    agent_ = {RandInt(1, hallway_end + 1), mid};
    agent_dir_ = 0;
    const ObjType start_obj = RandIndex(2) == 0 ? kKey : kBall;  // _rand_elem([Key, Ball])
    world_.Set(1, mid - 1, world_.New(start_obj, kGreen));
    const bool ball_first = RandIndex(2) == 0;  // _rand_elem([[Ball, Key], [Key, Ball]])
    const ObjType first = ball_first ? kBall : kKey, second = ball_first ? kKey : kBall;
    const Pos pos0{hallway_end + 1, mid - 2}, pos1{hallway_end + 1, mid + 2};
    world_.Set(pos0.x, pos0.y, world_.New(first, kGreen));
    world_.Set(pos1.x, pos1.y, world_.New(second, kGreen));
    if (start_obj == first) {
      success_ = {pos0.x, pos0.y + 1};
      failure_ = {pos1.x, pos1.y - 1};
    } else {
      success_ = {pos1.x, pos1.y - 1};
      failure_ = {pos0.x, pos0.y + 1};
    }
    mission_ = "go to the matching object at the end of the hallway";
  }

  StepOutcome DoStep(int action) override {
    StepOutcome out = BaseStep(action == kPickup ? kToggle : action);
    if (agent_ == success_) {
      out.reward = SuccessReward();
      out.terminated = true;
    }
    if (agent_ == failure_) {
      out.reward = 0.0;
      out.terminated = true;
    }
    return out;
  }

 private:
  const bool random_length_;
  Pos success_, failure_;
};

// DynamicObstaclesEnv: balls that move one random cell each step; touching one ends the episode
// with reward -1. Actions: left, right, forward.
class DynamicObstaclesEnv final : public MiniGridEnv {
 public:
  static constexpr int kNumActions = 3;
  static int64_t DefaultMaxSteps(const Config& c) { return 4 * c.GetInt("size") * c.GetInt("size"); }
  static Pos GridSize(const Config& c) { return SquareGrid(c); }
  DynamicObstaclesEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)),
        start_(OptionalPos(spec.config, "agent_start_pos")),
        start_dir_(ConfigInt(spec.config, "agent_start_dir")),
        num_obstacles_(NumObstacles(spec.config)) {}

  // minigrid keeps n_obstacles when n_obstacles <= size / 2 + 1, else int(size / 2).
  static int NumObstacles(const Config& config) {
    const double size = static_cast<double>(config.GetInt("size"));
    const int64_t n = config.GetInt("n_obstacles");
    return static_cast<double>(n) <= size / 2 + 1 ? static_cast<int>(n) : static_cast<int>(size / 2);
  }

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("dynamic_obstacles"));
    std::vector<double> positions;
    for (int id : obstacles_) {
      positions.push_back(world_.obj(id).cur_pos.x);
      positions.push_back(world_.obj(id).cur_pos.y);
    }
    c.Set("obstacle_positions", std::move(positions));
  }

  void GenGrid() override {
    world_.WallRect(0, 0, width_, height_);
    world_.Set(width_ - 2, height_ - 2, world_.New(kGoal, kGreen));
    PlaceAgentAt(start_, start_dir_);
    obstacles_.clear();
    for (int i = 0; i < num_obstacles_; ++i) {
      obstacles_.push_back(world_.New(kBall, kBlue));
      PlaceObj(obstacles_.back(), {0, 0}, {-1, -1}, nullptr, 100);
    }
    mission_ = "get to the green goal square";
  }

  StepOutcome DoStep(int action) override {
    const Pos f = FrontPos();
    const int front = world_.Get(f.x, f.y);
    const bool not_clear = front != kNone && world_.obj(front).type != kGoal;
    for (int id : obstacles_) {
      const Pos old = world_.obj(id).cur_pos;
      try {
        PlaceObj(id, {old.x - 1, old.y - 1}, {3, 3}, nullptr, 100);
        world_.Set(old.x, old.y, kNone);
      } catch (const PlacementFailed&) {
        // minigrid leaves the obstacle where it is when no free cell around it turns up
      }
    }
    StepOutcome out = BaseStep(action);
    if (action == kForward && not_clear) {
      out.reward = -1.0;
      out.terminated = true;
    }
    return out;
  }

 private:
  const std::optional<Pos> start_;
  const int start_dir_, num_obstacles_;
  std::vector<int> obstacles_;
};

}  // namespace pp::minigrid
