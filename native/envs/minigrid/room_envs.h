// The MiniGrid tasks built on RoomGrid (minigrid/envs/): KeyCorridor, Unlock, UnlockPickup,
// BlockedUnlockPickup and the ObstructedMaze family (v0 and v1).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "envs/minigrid/navigation_envs.h"
#include "envs/minigrid/room_grid.h"

namespace pp::minigrid {

// Tasks won by picking up one object (`target_`).
class PickupTask : public RoomGridEnv {
 public:
  using RoomGridEnv::RoomGridEnv;

 protected:
  StepOutcome DoStep(int action) override {
    StepOutcome out = BaseStep(action);
    if (action == kPickup && carrying_ != kNone && carrying_ == target_) {
      out.reward = SuccessReward();
      out.terminated = true;
    }
    return out;
  }
  void SetPickupMission(int target) {
    target_ = target;
    const Obj& o = world_.obj(target);
    mission_ = std::string("pick up the ") + ColorName(o.color) + " " + TypeName(o.type);
  }

  int target_ = kNone;
};

inline ObjType ObjKind(const std::string& name) {
  if (name == "key") return kKey;
  if (name == "ball") return kBall;
  if (name == "box") return kBox;
  throw std::invalid_argument("minigrid: obj_type must be 'key', 'ball' or 'box', got '" + name + "'");
}

// KeyCorridorEnv: the object is behind a locked door off the corridor; its key is elsewhere.
class KeyCorridorEnv final : public PickupTask {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 30 * c.GetInt("room_size") * c.GetInt("room_size"); }
  static Pos GridSize(const Config& c) { return RoomGridSize(ConfigInt(c, "room_size"), ConfigInt(c, "num_rows"), 3); }
  KeyCorridorEnv(const EnvSpec& spec, int env_id)
      : PickupTask(spec, env_id, ConfigInt(spec.config, "room_size"), ConfigInt(spec.config, "num_rows"), 3),
        kind_(ObjKind(spec.config.GetString("obj_type"))) {}

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("key_corridor"));
    SetObj(c, "target", target_);
  }

  void GenGrid() override {
    RoomGridEnv::GenGrid();
    const int obj = GenKeyCorridor(kind_);
    SetPickupMission(obj);
  }

 private:
  const ObjType kind_;
};

// UnlockEnv: open the locked door with the key in the same room.
class UnlockEnv final : public RoomGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 8 * 36; }
  static Pos GridSize(const Config& /*c*/) { return RoomGridSize(6, 1, 2); }
  UnlockEnv(const EnvSpec& spec, int env_id) : RoomGridEnv(spec, env_id, 6, 1, 2) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("unlock")); }

  void GenGrid() override {
    RoomGridEnv::GenGrid();
    door_ = AddDoor(0, 0, 0, std::nullopt, true);
    AddObject(0, 0, kKey, world_.obj(door_).color);
    PlaceAgentInRoom(0, 0);
    mission_ = "open the door";
  }
  StepOutcome DoStep(int action) override {
    StepOutcome out = BaseStep(action);
    if (action == kToggle && world_.obj(door_).is_open) {
      out.reward = SuccessReward();
      out.terminated = true;
    }
    return out;
  }

 private:
  int door_ = kNone;
};

// UnlockPickupEnv and BlockedUnlockPickupEnv: the box is behind a locked door (blocked by a ball).
class UnlockPickupEnv final : public PickupTask {
 public:
  // BlockedUnlockPickup's 16 * 36 is given at its registration
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 8 * 36; }
  static Pos GridSize(const Config& /*c*/) { return RoomGridSize(6, 1, 2); }
  UnlockPickupEnv(const EnvSpec& spec, int env_id, bool blocked)
      : PickupTask(spec, env_id, 6, 1, 2), blocked_(blocked) {}

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string(blocked_ ? "blocked_unlock_pickup" : "unlock_pickup"));
    SetObj(c, "target", target_);
  }

  void GenGrid() override {
    RoomGridEnv::GenGrid();
    const int obj = AddObject(1, 0, kBox);
    Pos pos;
    const int door = AddDoor(0, 0, 0, std::nullopt, true, &pos);
    if (blocked_) world_.Set(pos.x - 1, pos.y, world_.New(kBall, RandColor()));
    AddObject(0, 0, kKey, world_.obj(door).color);
    PlaceAgentInRoom(0, 0);
    SetPickupMission(obj);
  }

 private:
  const bool blocked_;
};

// ObstructedMaze: find the blue ball behind locked doors whose keys may be in boxes, with green
// balls blocking the doors.
class ObstructedMazeEnv : public PickupTask {
 public:
  ObstructedMazeEnv(const EnvSpec& spec, int env_id, int num_rows, int num_cols)
      : PickupTask(spec, env_id, 6, num_rows, num_cols),
        key_in_box_(spec.config.GetBool("key_in_box")),
        blocked_(spec.config.GetBool("blocked")) {}

 protected:
  // COLOR_NAMES[0], [1], [2]: the ball to find, the blocking balls, the boxes.
  static constexpr Color kBallColor = kColorNames[0], kBlockingColor = kColorNames[1], kBoxColor = kColorNames[2];

  void GenGrid() override {
    RoomGridEnv::GenGrid();
    door_colors_ = RandSubset(std::vector<Color>(kColorNames.begin(), kColorNames.end()), kNumColors);
    mission_ = std::string("pick up the ") + ColorName(kBallColor) + " ball";
  }

  Color DoorColor(int k) const {
    return door_colors_[static_cast<std::size_t>(((k % kNumColors) + kNumColors) % kNumColors)];
  }

  // ObstructedMazeEnv.add_door's door and blocking ball (v1's add_locked_door).
  int AddBlockedDoor(int i, int j, int door_idx, Color color, bool locked, bool blocked) {
    Pos pos;
    const int door = AddDoor(i, j, door_idx, color, locked, &pos);
    if (blocked) world_.Set(pos.x - kDirX[door_idx], pos.y - kDirY[door_idx], world_.New(kBall, kBlockingColor));
    return door;
  }
  // The key of a door, in a box if key_in_box, placed in room (i, j).
  void AddKey(int i, int j, Color color, bool key_in_box) {
    int obj = world_.New(kKey, color);
    if (key_in_box) {
      const int box = world_.New(kBox, kBoxColor);
      world_.obj(box).contains = obj;
      obj = box;
    }
    PlaceInRoom(i, j, obj);
  }
  // ObstructedMazeEnv.add_door
  int AddMazeDoor(int i, int j, int door_idx, Color color, bool locked, bool key_in_box, bool blocked) {
    const int door = AddBlockedDoor(i, j, door_idx, color, locked, blocked);
    if (locked) AddKey(i, j, world_.obj(door).color, key_in_box);
    return door;
  }

  const bool key_in_box_, blocked_;
  std::vector<Color> door_colors_;
};

// ObstructedMaze_1Dlhb (1Dl, 1Dlh, 1Dlhb): two rooms and one locked door.
class ObstructedMaze1Env final : public ObstructedMazeEnv {
 public:
  // num_rooms_visited 2, room_size 6
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 4 * 2 * 36; }
  static Pos GridSize(const Config& /*c*/) { return RoomGridSize(6, 1, 2); }
  ObstructedMaze1Env(const EnvSpec& spec, int env_id) : ObstructedMazeEnv(spec, env_id, 1, 2) {}

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("obstructed_maze_1dlhb"));
    SetObj(c, "target", target_);
  }

  void GenGrid() override {
    ObstructedMazeEnv::GenGrid();
    AddMazeDoor(0, 0, 0, door_colors_[0], true, key_in_box_, blocked_);
    target_ = AddObject(1, 0, kBall, kBallColor);
    PlaceAgentInRoom(0, 0);
  }
};

// ObstructedMaze_Full (v0) and ObstructedMaze_Full_V1: a 3x3 maze, num_quarters of it used; v1
// places each side room's keys after both its doors.
class ObstructedMazeFullEnv final : public ObstructedMazeEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 4 * c.GetInt("num_rooms_visited") * 36; }
  static Pos GridSize(const Config& /*c*/) { return RoomGridSize(6, 3, 3); }
  ObstructedMazeFullEnv(const EnvSpec& spec, int env_id, bool v1)
      : ObstructedMazeEnv(spec, env_id, 3, 3),
        v1_(v1),
        num_quarters_(ConfigInt(spec.config, "num_quarters")),
        agent_room_(OptionalPos(spec.config, "agent_room").value_or(Pos{1, 1})) {
    if (num_quarters_ < 1 || num_quarters_ > 4) throw std::invalid_argument("ObstructedMaze: num_quarters in 1..4");
  }

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string(v1_ ? "obstructed_maze_full_v1" : "obstructed_maze_full"));
    SetObj(c, "target", target_);
  }

  void GenGrid() override {
    ObstructedMazeEnv::GenGrid();
    static constexpr Pos kSideRooms[4] = {{2, 1}, {1, 2}, {0, 1}, {1, 0}};
    static constexpr Pos kCorners[4] = {{2, 0}, {2, 2}, {0, 2}, {0, 0}};
    for (int i = 0; i < num_quarters_; ++i) {
      const Pos side = kSideRooms[i];
      AddMazeDoor(1, 1, i, DoorColor(i), false, false, false);
      for (int k : {-1, 1}) {
        const int door_idx = ((i + k) % 4 + 4) % 4;
        if (v1_) {
          AddBlockedDoor(side.x, side.y, door_idx, DoorColor(i + k), true, blocked_);
        } else {
          AddMazeDoor(side.x, side.y, door_idx, DoorColor(i + k), true, key_in_box_, blocked_);
        }
      }
      if (v1_) {
        for (int k : {-1, 1}) AddKey(side.x, side.y, DoorColor(i + k), key_in_box_);
      }
    }
    const Pos ball_room = kCorners[RandIndex(num_quarters_)];
    target_ = AddObject(ball_room.x, ball_room.y, kBall, kBallColor);
    PlaceAgentInRoom(agent_room_.x, agent_room_.y);
  }

 private:
  const bool v1_;
  const int num_quarters_;
  const Pos agent_room_;
};

}  // namespace pp::minigrid
