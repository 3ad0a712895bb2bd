// MiniGrid's world: object kinds, colours and door states with minigrid's integer codes, the
// objects themselves (kept by id, so "the same object" means what Python's `is` means) and the grid.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp::minigrid {

// OBJECT_TO_IDX: the first channel of an observation cell.
enum ObjType : uint8_t {
  kUnseen = 0,
  kEmpty = 1,
  kWall = 2,
  kFloor = 3,
  kDoor = 4,
  kKey = 5,
  kBall = 6,
  kBox = 7,
  kGoal = 8,
  kLava = 9,
  kAgent = 10,
};

// COLOR_TO_IDX: the second channel.
enum Color : uint8_t { kRed = 0, kGreen = 1, kBlue = 2, kPurple = 3, kYellow = 4, kGrey = 5 };
inline constexpr int kNumColors = 6;

// COLOR_NAMES is sorted(COLORS): every random colour is drawn as an index into this order.
inline constexpr std::array<Color, kNumColors> kColorNames = {kBlue, kGreen, kGrey, kPurple, kRed, kYellow};

inline const char* ColorName(Color c) {
  static constexpr const char* kNames[kNumColors] = {"red", "green", "blue", "purple", "yellow", "grey"};
  return kNames[c];
}
inline const char* TypeName(ObjType t) {
  static constexpr const char* kNames[11] = {"unseen", "empty", "wall", "floor", "door", "key",
                                             "ball",   "box",   "goal", "lava",  "agent"};
  return kNames[t];
}

// STATE_TO_IDX: the third channel (doors only).
enum DoorState : uint8_t { kOpen = 0, kClosed = 1, kLocked = 2 };

// DIR_TO_VEC: 0 right (+x), 1 down (+y), 2 left, 3 up.
inline constexpr int kDirX[4] = {1, 0, -1, 0};
inline constexpr int kDirY[4] = {0, 1, 0, -1};

struct Pos {
  int x = -1, y = -1;
  bool operator==(const Pos&) const = default;
};

inline constexpr int kNone = -1;  // no object (an empty cell, nothing carried, an empty box)

// One WorldObj. `contains` is a box's content (an object id or kNone).
struct Obj {
  ObjType type = kWall;
  Color color = kGrey;
  bool is_open = false;
  bool is_locked = false;
  int contains = kNone;
  Pos cur_pos;

  bool CanOverlap() const { return type == kGoal || type == kFloor || type == kLava || (type == kDoor && is_open); }
  bool CanPickup() const { return type == kKey || type == kBall || type == kBox; }
  bool SeeBehind() const { return type != kWall && (type != kDoor || is_open); }
  // WorldObj.encode: (type, colour, state); the state is the door's, 0 for everything else.
  uint8_t State() const {
    if (type != kDoor || is_open) return kOpen;
    return is_locked ? kLocked : kClosed;
  }
};

// Grid plus the objects of one episode. Cells hold object ids; ids index objs, which grows while
// the grid is generated and is cleared at the next reset (its capacity stays: no steady-state
// allocation).
class World {
 public:
  void Reset(int width, int height) {
    if (width < 3 || height < 3) throw std::invalid_argument("minigrid: the grid must be at least 3x3");
    width_ = width;
    height_ = height;
    cells_.assign(static_cast<std::size_t>(width * height), kNone);
    objs_.clear();
  }
  int width() const { return width_; }
  int height() const { return height_; }
  bool Inside(int x, int y) const { return x >= 0 && y >= 0 && x < width_ && y < height_; }

  int New(ObjType type, Color color, bool is_open = false, bool is_locked = false) {
    Obj o;
    o.type = type;
    o.color = color;
    o.is_open = is_open;
    o.is_locked = is_locked;
    objs_.push_back(o);
    return static_cast<int>(objs_.size()) - 1;
  }
  int NewWall() { return New(kWall, kGrey); }
  Obj& obj(int id) { return objs_[static_cast<std::size_t>(id)]; }
  const Obj& obj(int id) const { return objs_[static_cast<std::size_t>(id)]; }

  int Get(int x, int y) const {
    if (!Inside(x, y)) throw std::out_of_range("minigrid: cell outside the grid");
    return cells_[static_cast<std::size_t>(y * width_ + x)];
  }
  void Set(int x, int y, int id) {
    if (!Inside(x, y)) throw std::out_of_range("minigrid: cell outside the grid");
    cells_[static_cast<std::size_t>(y * width_ + x)] = id;
  }
  // Grid.horz_wall / vert_wall / wall_rect; `type` is the obstacle (a wall, or lava for the
  // lava envs), a new object per cell as minigrid's obj_type() calls.
  void HorzWall(int x, int y, int length = -1, ObjType type = kWall) {
    if (length < 0) length = width_ - x;
    for (int i = 0; i < length; ++i) Set(x + i, y, NewObstacle(type));
  }
  void VertWall(int x, int y, int length = -1, ObjType type = kWall) {
    if (length < 0) length = height_ - y;
    for (int j = 0; j < length; ++j) Set(x, y + j, NewObstacle(type));
  }
  void WallRect(int x, int y, int w, int h) {
    HorzWall(x, y, w);
    HorzWall(x, y + h - 1, w);
    VertWall(x, y, h);
    VertWall(x + w - 1, y, h);
  }
  int NewObstacle(ObjType type) { return type == kLava ? New(kLava, kRed) : New(type, kGrey); }

  // The observation code of the cell at (x, y): (type, colour, state), empty as (1, 0, 0).
  void Encode(int id, uint8_t* out) const {
    if (id == kNone) {
      out[0] = kEmpty;
      out[1] = 0;
      out[2] = 0;
      return;
    }
    const Obj& o = obj(id);
    out[0] = o.type;
    out[1] = o.color;
    out[2] = o.State();
  }

 private:
  int width_ = 0, height_ = 0;
  std::vector<int> cells_;
  std::vector<Obj> objs_;
};

// The four outer walls drawn as minigrid's horz_wall/vert_wall calls (not wall_rect).
inline void OuterWalls(World& world) {
  world.HorzWall(0, 0);
  world.HorzWall(0, world.height() - 1);
  world.VertWall(0, 0);
  world.VertWall(world.width() - 1, 0);
}

}  // namespace pp::minigrid
