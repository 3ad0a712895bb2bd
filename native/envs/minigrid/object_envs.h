// The MiniGrid tasks about objects and doors on one open grid (minigrid/envs/): GoToDoor,
// GoToObject, PutNear, Fetch, RedBlueDoors, LockedRoom, Playground.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "envs/minigrid/minigrid_env.h"
#include "envs/minigrid/navigation_envs.h"

namespace pp::minigrid {

inline std::string Describe(Color color, ObjType type) { return std::string(ColorName(color)) + " " + TypeName(type); }

// GoToDoor / GoToObject end on `done` (reward if next to the target) or on `toggle` (no reward).
inline StepOutcome GoToOutcome(StepOutcome out, int action, Pos agent, Pos target, double success_reward) {
  if (action == kToggle) out.terminated = true;
  if (action == kDone) {
    if ((agent.x == target.x && std::abs(agent.y - target.y) == 1) ||
        (agent.y == target.y && std::abs(agent.x - target.x) == 1)) {
      out.reward = success_reward;
    }
    out.terminated = true;
  }
  return out;
}

// GoToDoorEnv: a room of random size with four doors of distinct colours; go next to one.
class GoToDoorEnv final : public MiniGridEnv, public SquareTask<4> {
 public:
  GoToDoorEnv(const EnvSpec& spec, int env_id) : MiniGridEnv(spec, env_id, GridSize(spec.config)) {
    if (width_ < 5) throw std::invalid_argument("GoToDoor: size must be >= 5");
  }

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("goto_door"));
    SetPos(c, "target_pos", target_);
    c.Set("target_color", int64_t{world_.obj(world_.Get(target_.x, target_.y)).color});
  }

  void GenGrid() override {
    const int w = RandInt(5, width_ + 1);
    const int h = RandInt(5, height_ + 1);
    world_.WallRect(0, 0, w, h);
    Pos doors[4];
    doors[0] = {RandInt(2, w - 2), 0};
    doors[1] = {RandInt(2, w - 2), h - 1};
    doors[2] = {0, RandInt(2, h - 2)};
    doors[3] = {w - 1, RandInt(2, h - 2)};
    std::vector<Color> colors;
    while (colors.size() < 4) {
      const Color c = RandColor();
      if (std::find(colors.begin(), colors.end(), c) == colors.end()) colors.push_back(c);
    }
    for (int i = 0; i < 4; ++i)
      world_.Set(doors[i].x, doors[i].y, world_.New(kDoor, colors[static_cast<std::size_t>(i)]));
    PlaceAgent({0, 0}, {w, h});
    const int idx = RandInt(0, 4);
    target_ = doors[idx];
    mission_ = std::string("go to the ") + ColorName(colors[static_cast<std::size_t>(idx)]) + " door";
  }

  StepOutcome DoStep(int action) override {
    return GoToOutcome(BaseStep(action), action, agent_, target_, SuccessReward());
  }

 private:
  Pos target_;
};

// GoToObjectEnv: numObjs distinct objects; go next to the named one.
class GoToObjectEnv final : public MiniGridEnv, public SquareTask<5> {
 public:
  GoToObjectEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)), num_objs_(ConfigInt(spec.config, "numObjs")) {}

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("goto_object"));
    SetPos(c, "target_pos", target_);
    SetKind(c, "target", target_kind_.first, target_kind_.second);
  }

  void GenGrid() override {
    static const std::vector<ObjType> kKinds = {kKey, kBall, kBox};
    world_.WallRect(0, 0, width_, height_);
    std::vector<std::pair<ObjType, Color>> objs;
    std::vector<Pos> positions;
    while (static_cast<int>(objs.size()) < num_objs_) {
      const ObjType type = RandElem(kKinds);
      const Color color = RandColor();
      if (std::find(objs.begin(), objs.end(), std::make_pair(type, color)) != objs.end()) continue;
      positions.push_back(PlaceObj(world_.New(type, color)));
      objs.emplace_back(type, color);
    }
    PlaceAgent();
    const int idx = RandInt(0, static_cast<int64_t>(objs.size()));
    target_ = positions[static_cast<std::size_t>(idx)];
    target_kind_ = objs[static_cast<std::size_t>(idx)];
    mission_ = "go to the " + Describe(target_kind_.second, target_kind_.first);
  }

  StepOutcome DoStep(int action) override {
    return GoToOutcome(BaseStep(action), action, agent_, target_, SuccessReward());
  }

 private:
  const int num_objs_;
  Pos target_;
  std::pair<ObjType, Color> target_kind_;
};

// PutNearEnv: pick up the named object and drop it next to the other named one.
class PutNearEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 5 * c.GetInt("size"); }
  static Pos GridSize(const Config& c) { return SquareGrid(c); }
  PutNearEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)), num_objs_(ConfigInt(spec.config, "numObjs")) {}

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("put_near"));
    SetKind(c, "move", move_.first, move_.second);
    SetPos(c, "move_pos", move_pos_);
    SetKind(c, "target", target_kind_.first, target_kind_.second);
    SetPos(c, "target_pos", target_pos_);
  }

  void GenGrid() override {
    static const std::vector<ObjType> kKinds = {kKey, kBall, kBox};
    OuterWalls(world_);
    std::vector<std::pair<ObjType, Color>> objs;
    std::vector<Pos> positions;
    auto near_obj = [&positions](Pos p) {
      for (const Pos& q : positions) {
        if (std::abs(p.x - q.x) <= 1 && std::abs(p.y - q.y) <= 1) return true;
      }
      return false;
    };
    while (static_cast<int>(objs.size()) < num_objs_) {
      const ObjType type = RandElem(kKinds);
      const Color color = RandColor();
      if (std::find(objs.begin(), objs.end(), std::make_pair(type, color)) != objs.end()) continue;
      positions.push_back(PlaceObj(world_.New(type, color), {0, 0}, {-1, -1}, near_obj));
      objs.emplace_back(type, color);
    }
    PlaceAgent();
    const int n = static_cast<int>(objs.size());
    const int move = RandInt(0, n);
    int target;
    do {
      target = RandInt(0, n);
    } while (target == move);
    move_ = objs[static_cast<std::size_t>(move)];
    move_pos_ = positions[static_cast<std::size_t>(move)];
    target_pos_ = positions[static_cast<std::size_t>(target)];
    target_kind_ = objs[static_cast<std::size_t>(target)];
    mission_ = "put the " + Describe(move_.second, move_.first) + " near the " +
               Describe(target_kind_.second, target_kind_.first);
  }

  StepOutcome DoStep(int action) override {
    const int before = carrying_;
    StepOutcome out = BaseStep(action);
    const Pos o = FrontPos();
    if (action == kPickup && carrying_ != kNone) {
      const Obj& c = world_.obj(carrying_);
      if (c.type != move_.first || c.color != move_.second) out.terminated = true;
    }
    if (action == kDrop && before != kNone) {
      if (world_.Get(o.x, o.y) == before && std::abs(o.x - target_pos_.x) <= 1 && std::abs(o.y - target_pos_.y) <= 1) {
        out.reward = SuccessReward();
      }
      out.terminated = true;
    }
    return out;
  }

 private:
  const int num_objs_;
  std::pair<ObjType, Color> move_, target_kind_;
  Pos move_pos_, target_pos_;
};

// FetchEnv: pick up the named object; picking up anything else ends the episode without reward.
class FetchEnv final : public MiniGridEnv, public SquareTask<5> {
 public:
  FetchEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)), num_objs_(ConfigInt(spec.config, "numObjs")) {}

 protected:
  void DebugExtras(Config& c) const override {
    c.Set("env_name", std::string("fetch"));
    SetKind(c, "target", target_.first, target_.second);
  }

  void GenGrid() override {
    static const std::vector<ObjType> kKinds = {kKey, kBall};
    static const char* const kSyntax[5] = {"get a", "go get a", "fetch a", "go fetch a", "you must fetch a"};
    OuterWalls(world_);
    std::vector<int> objs;
    while (static_cast<int>(objs.size()) < num_objs_) {
      const ObjType type = RandElem(kKinds);
      const Color color = RandColor();
      objs.push_back(world_.New(type, color));
      PlaceObj(objs.back());
    }
    PlaceAgent();
    const Obj& target = world_.obj(objs[static_cast<std::size_t>(RandInt(0, static_cast<int64_t>(objs.size())))]);
    target_ = {target.type, target.color};
    mission_ = std::string(kSyntax[RandInt(0, 5)]) + " " + Describe(target.color, target.type);
  }

  StepOutcome DoStep(int action) override {
    StepOutcome out = BaseStep(action);
    if (carrying_ != kNone) {
      const Obj& c = world_.obj(carrying_);
      out.reward = c.color == target_.second && c.type == target_.first ? SuccessReward() : 0.0;
      out.terminated = true;
    }
    return out;
  }

 private:
  const int num_objs_;
  std::pair<ObjType, Color> target_;
};

// RedBlueDoorEnv: open the red door, then the blue one; the other order ends without reward.
class RedBlueDoorEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 20 * c.GetInt("size") * c.GetInt("size"); }
  static Pos GridSize(const Config& c) { return {2 * ConfigInt(c, "size"), ConfigInt(c, "size")}; }
  RedBlueDoorEnv(const EnvSpec& spec, int env_id)
      : MiniGridEnv(spec, env_id, GridSize(spec.config)), size_(ConfigInt(spec.config, "size")) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("red_blue_door")); }

  void GenGrid() override {
    world_.WallRect(0, 0, 2 * size_, size_);
    world_.WallRect(size_ / 2, 0, size_, size_);
    PlaceAgent({size_ / 2, 0}, {size_, size_});
    red_ = world_.New(kDoor, kRed);
    world_.Set(size_ / 2, RandInt(1, size_ - 1), red_);
    blue_ = world_.New(kDoor, kBlue);
    world_.Set(size_ / 2 + size_ - 1, RandInt(1, size_ - 1), blue_);
    mission_ = "open the red door then the blue door";
  }

  StepOutcome DoStep(int action) override {
    const bool red_before = world_.obj(red_).is_open, blue_before = world_.obj(blue_).is_open;
    StepOutcome out = BaseStep(action);
    if (world_.obj(blue_).is_open) {
      out.reward = red_before ? SuccessReward() : 0.0;
      out.terminated = true;
    } else if (world_.obj(red_).is_open && blue_before) {
      out.reward = 0.0;
      out.terminated = true;
    }
    return out;
  }

 private:
  const int size_;
  int red_ = kNone, blue_ = kNone;
};

// LockedRoomEnv: six side rooms off a corridor; the goal is in the locked one, its key in another.
class LockedRoomEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 10 * c.GetInt("size"); }
  static Pos GridSize(const Config& c) { return SquareGrid(c); }
  LockedRoomEnv(const EnvSpec& spec, int env_id) : MiniGridEnv(spec, env_id, GridSize(spec.config)) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("locked_room")); }

  struct SideRoom {
    Pos top, size, door;
    Color color = kRed;
    bool locked = false;
  };

  Pos RoomPos(const SideRoom& r) {
    return RandPos(r.top.x + 1, r.top.x + r.size.x - 1, r.top.y + 1, r.top.y + r.size.y - 1);
  }

  void GenGrid() override {
    const int w = width_, h = height_;
    for (int i = 0; i < w; ++i) {
      world_.Set(i, 0, world_.NewWall());
      world_.Set(i, h - 1, world_.NewWall());
    }
    for (int j = 0; j < h; ++j) {
      world_.Set(0, j, world_.NewWall());
      world_.Set(w - 1, j, world_.NewWall());
    }
    const int l = w / 2 - 2, r = w / 2 + 2;
    for (int j = 0; j < h; ++j) {
      world_.Set(l, j, world_.NewWall());
      world_.Set(r, j, world_.NewWall());
    }
    std::vector<SideRoom> rooms;
    for (int n = 0; n < 3; ++n) {
      const int j = n * (h / 3);
      for (int i = 0; i < l; ++i) world_.Set(i, j, world_.NewWall());
      for (int i = r; i < w; ++i) world_.Set(i, j, world_.NewWall());
      const int room_w = l + 1, room_h = h / 3 + 1;
      rooms.push_back(SideRoom{{0, j}, {room_w, room_h}, {l, j + 3}});
      rooms.push_back(SideRoom{{r, j}, {room_w, room_h}, {r, j + 3}});
    }
    const int locked = RandIndex(static_cast<int>(rooms.size()));
    rooms[static_cast<std::size_t>(locked)].locked = true;
    const Pos goal = RoomPos(rooms[static_cast<std::size_t>(locked)]);
    world_.Set(goal.x, goal.y, world_.New(kGoal, kGreen));
    std::vector<Color> colors(kColorNames.begin(), kColorNames.end());  // sorted(set(COLOR_NAMES))
    for (SideRoom& room : rooms) {
      const int idx = RandIndex(static_cast<int>(colors.size()));
      room.color = colors[static_cast<std::size_t>(idx)];
      colors.erase(colors.begin() + idx);
      world_.Set(room.door.x, room.door.y, world_.New(kDoor, room.color, false, room.locked));
    }
    int key_room;
    do {
      key_room = RandIndex(static_cast<int>(rooms.size()));
    } while (key_room == locked);
    const Pos key = RoomPos(rooms[static_cast<std::size_t>(key_room)]);
    const Color locked_color = rooms[static_cast<std::size_t>(locked)].color;
    world_.Set(key.x, key.y, world_.New(kKey, locked_color));
    PlaceAgent({l, 0}, {r - l, h});
    mission_ = std::string("get the ") + ColorName(locked_color) + " key from the " +
               ColorName(rooms[static_cast<std::size_t>(key_room)].color) + " room, unlock the " +
               ColorName(locked_color) + " door and go to the goal";
  }
};

// PlaygroundEnv: nine rooms with doors of random colours and twelve random objects; no goal.
class PlaygroundEnv final : public MiniGridEnv {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 100; }
  static Pos GridSize(const Config& /*c*/) { return {19, 19}; }
  PlaygroundEnv(const EnvSpec& spec, int env_id) : MiniGridEnv(spec, env_id, GridSize(spec.config)) {}

 protected:
  void DebugExtras(Config& c) const override { c.Set("env_name", std::string("playground")); }

  void GenGrid() override {
    static const std::vector<ObjType> kKinds = {kKey, kBall, kBox};
    OuterWalls(world_);
    const int room_w = width_ / 3, room_h = height_ / 3;
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 3; ++i) {
        const int x_l = i * room_w, y_t = j * room_h, x_r = x_l + room_w, y_b = y_t + room_h;
        if (i + 1 < 3) {
          world_.VertWall(x_r, y_t, room_h);
          const int y = RandInt(y_t + 1, y_b - 1);
          world_.Set(x_r, y, world_.New(kDoor, RandColor()));
        }
        if (j + 1 < 3) {
          world_.HorzWall(x_l, y_b, room_w);
          const int x = RandInt(x_l + 1, x_r - 1);
          world_.Set(x, y_b, world_.New(kDoor, RandColor()));
        }
      }
    }
    PlaceAgent();
    for (int i = 0; i < 12; ++i) {
      const ObjType type = RandElem(kKinds);
      PlaceObj(world_.New(type, RandColor()));
    }
    mission_ = "";
  }
};

}  // namespace pp::minigrid
