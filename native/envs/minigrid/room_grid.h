// RoomGrid (minigrid/core/roomgrid.py): a num_rows x num_cols grid of square rooms sharing walls,
// with doors between neighbours, objects placed in rooms and connect_all; KeyCorridor, Unlock,
// ObstructedMaze and (later) the BabyAI levels are built on it.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "envs/minigrid/minigrid_env.h"

namespace pp::minigrid {

struct Room {
  Pos top, size;
  // doors[k]: kNone (wall), kOpenWall (removed by remove_wall) or the door's object id.
  std::array<int, 4> doors{kNone, kNone, kNone, kNone};
  std::array<std::optional<Pos>, 4> door_pos;
  std::array<int, 4> neighbors{-1, -1, -1, -1};  // room index, -1 at the border
  bool locked = false;
  std::vector<int> objs;
};

inline constexpr int kOpenWall = -3;  // Room.doors[k] = True

// RoomGrid's (width, height) for rooms of room_size (walls shared) in num_rows x num_cols.
inline Pos RoomGridSize(int room_size, int num_rows, int num_cols) {
  return {(room_size - 1) * num_cols + 1, (room_size - 1) * num_rows + 1};
}

class RoomGridEnv : public MiniGridEnv {
 public:
  RoomGridEnv(const EnvSpec& spec, int env_id, int room_size, int num_rows, int num_cols)
      : MiniGridEnv(spec, env_id, RoomGridSize(room_size, num_rows, num_cols).x,
                    RoomGridSize(room_size, num_rows, num_cols).y),
        room_size_(room_size),
        num_rows_(num_rows),
        num_cols_(num_cols) {
    if (room_size < 3 || num_rows < 1 || num_cols < 1) throw std::invalid_argument("minigrid: bad room grid");
  }

 protected:
  // RoomGrid._gen_grid: the rooms' walls, one door position drawn per shared wall (right, then
  // down, room by room in row order), and the agent in the middle room's centre facing right.
  void GenGrid() override {
    rooms_.assign(static_cast<std::size_t>(num_rows_ * num_cols_), Room{});
    for (int j = 0; j < num_rows_; ++j) {
      for (int i = 0; i < num_cols_; ++i) {
        Room& room = RoomAt(i, j);
        room.top = {i * (room_size_ - 1), j * (room_size_ - 1)};
        room.size = {room_size_, room_size_};
        world_.WallRect(room.top.x, room.top.y, room.size.x, room.size.y);
      }
    }
    for (int j = 0; j < num_rows_; ++j) {
      for (int i = 0; i < num_cols_; ++i) {
        Room& room = RoomAt(i, j);
        const int x_l = room.top.x + 1, y_l = room.top.y + 1;
        const int x_m = room.top.x + room.size.x - 1, y_m = room.top.y + room.size.y - 1;
        if (i < num_cols_ - 1) {
          room.neighbors[0] = Index(i + 1, j);
          room.door_pos[0] = Pos{x_m, RandInt(y_l, y_m)};
        }
        if (j < num_rows_ - 1) {
          room.neighbors[1] = Index(i, j + 1);
          room.door_pos[1] = Pos{RandInt(x_l, x_m), y_m};
        }
        if (i > 0) {
          room.neighbors[2] = Index(i - 1, j);
          room.door_pos[2] = rooms_[static_cast<std::size_t>(room.neighbors[2])].door_pos[0];
        }
        if (j > 0) {
          room.neighbors[3] = Index(i, j - 1);
          room.door_pos[3] = rooms_[static_cast<std::size_t>(room.neighbors[3])].door_pos[1];
        }
      }
    }
    agent_ = {(num_cols_ / 2) * (room_size_ - 1) + room_size_ / 2, (num_rows_ / 2) * (room_size_ - 1) + room_size_ / 2};
    agent_dir_ = 0;
  }

  int Index(int i, int j) const { return j * num_cols_ + i; }
  Room& RoomAt(int i, int j) {
    if (i < 0 || j < 0 || i >= num_cols_ || j >= num_rows_) throw std::out_of_range("minigrid: no such room");
    return rooms_[static_cast<std::size_t>(Index(i, j))];
  }
  int RoomIndexFromPos(Pos p) const { return Index(p.x / (room_size_ - 1), p.y / (room_size_ - 1)); }

  // place_in_room: anywhere in the room (walls excluded by occupancy), not next to the agent.
  Pos PlaceInRoom(int i, int j, int obj) {
    Room& room = RoomAt(i, j);
    const Pos agent = agent_;
    const Pos pos = PlaceObj(
        obj, room.top, room.size, [agent](Pos p) { return std::abs(agent.x - p.x) + std::abs(agent.y - p.y) < 2; },
        1000);
    RoomAt(i, j).objs.push_back(obj);
    return pos;
  }

  // add_object: kind and colour drawn when not given (kind first). Returns the object's id.
  int AddObject(int i, int j, std::optional<ObjType> kind = std::nullopt, std::optional<Color> color = std::nullopt,
                Pos* pos = nullptr) {
    static const std::vector<ObjType> kKinds = {kKey, kBall, kBox};
    const ObjType k = kind ? *kind : RandElem(kKinds);
    const Color c = color ? *color : RandColor();
    const int obj = world_.New(k, c);
    const Pos p = PlaceInRoom(i, j, obj);
    if (pos != nullptr) *pos = p;
    return obj;
  }

  // add_door: door_idx drawn among the room's free sides with a neighbour when not given, then the
  // colour, then `locked`; the room is marked locked (or not) by its last door.
  int AddDoor(int i, int j, std::optional<int> door_idx = std::nullopt, std::optional<Color> color = std::nullopt,
              std::optional<bool> locked = std::nullopt, Pos* pos = nullptr) {
    Room& room = RoomAt(i, j);
    int k;
    if (door_idx) {
      k = *door_idx;
    } else {
      do {
        k = RandInt(0, 4);
      } while (!(room.neighbors[static_cast<std::size_t>(k)] >= 0 && room.doors[static_cast<std::size_t>(k)] == kNone));
    }
    const Color c = color ? *color : RandColor();
    const bool is_locked = locked ? *locked : RandBool();
    if (room.doors[static_cast<std::size_t>(k)] != kNone) throw std::logic_error("minigrid: door already exists");
    room.locked = is_locked;
    const int door = world_.New(kDoor, c, false, is_locked);
    const Pos p = *room.door_pos[static_cast<std::size_t>(k)];
    world_.Set(p.x, p.y, door);
    world_.obj(door).cur_pos = p;
    room.doors[static_cast<std::size_t>(k)] = door;
    rooms_[static_cast<std::size_t>(room.neighbors[static_cast<std::size_t>(k)])]
        .doors[static_cast<std::size_t>((k + 2) % 4)] = door;
    if (pos != nullptr) *pos = p;
    return door;
  }

  // remove_wall
  void RemoveWall(int i, int j, int wall) {
    Room& room = RoomAt(i, j);
    const int tx = room.top.x, ty = room.top.y, w = room.size.x, h = room.size.y;
    if (wall == 0) {
      for (int k = 1; k < h - 1; ++k) world_.Set(tx + w - 1, ty + k, kNone);
    } else if (wall == 1) {
      for (int k = 1; k < w - 1; ++k) world_.Set(tx + k, ty + h - 1, kNone);
    } else if (wall == 2) {
      for (int k = 1; k < h - 1; ++k) world_.Set(tx, ty + k, kNone);
    } else {
      for (int k = 1; k < w - 1; ++k) world_.Set(tx + k, ty, kNone);
    }
    room.doors[static_cast<std::size_t>(wall)] = kOpenWall;
    rooms_[static_cast<std::size_t>(room.neighbors[static_cast<std::size_t>(wall)])]
        .doors[static_cast<std::size_t>((wall + 2) % 4)] = kOpenWall;
  }

  // RoomGrid.place_agent: in room (i, j) (drawn when not given), redrawn until the cell in front
  // is empty or a wall.
  Pos PlaceAgentInRoom(std::optional<int> i = std::nullopt, std::optional<int> j = std::nullopt, bool rand_dir = true) {
    const int ri = i ? *i : RandInt(0, num_cols_);
    const int rj = j ? *j : RandInt(0, num_rows_);
    const Room room = RoomAt(ri, rj);
    for (;;) {
      PlaceAgent(room.top, room.size, rand_dir, 1000);
      const Pos f = FrontPos();
      const int front = world_.Get(f.x, f.y);
      if (front == kNone || world_.obj(front).type == kWall) break;
    }
    return agent_;
  }

  // connect_all: unlocked doors of random colours between random unconnected neighbours until
  // every room is reachable from the agent's.
  std::vector<int> ConnectAll(const std::vector<Color>& door_colors = {kColorNames.begin(), kColorNames.end()},
                              int max_itrs = 5000) {
    const int start = RoomIndexFromPos(agent_);
    std::vector<int> added;
    for (int itrs = 0;;) {
      if (itrs > max_itrs) throw RecursionFailed("minigrid: connect_all failed");
      ++itrs;
      if (static_cast<int>(Reach(start).size()) == num_rows_ * num_cols_) break;
      const int i = RandInt(0, num_cols_);
      const int j = RandInt(0, num_rows_);
      const int k = RandInt(0, 4);
      Room& room = RoomAt(i, j);
      if (!room.door_pos[static_cast<std::size_t>(k)] || room.doors[static_cast<std::size_t>(k)] != kNone) continue;
      const Room& neighbor = rooms_[static_cast<std::size_t>(room.neighbors[static_cast<std::size_t>(k)])];
      if (room.locked || neighbor.locked) continue;
      const Color color = RandElem(door_colors);
      added.push_back(AddDoor(i, j, k, color, false));
    }
    return added;
  }

  // The layout of minigrid's KeyCorridor and BabyAI's KeyCorridor level (3 columns of rooms): the
  // middle column a corridor, an object of `kind` behind a locked door on the right, its key in a
  // room on the left, the agent in the corridor. Returns the object's index.
  int GenKeyCorridor(ObjType kind) {
    for (int j = 1; j < num_rows_; ++j) RemoveWall(1, j, 3);
    const int room = RandInt(0, num_rows_);
    const int door = AddDoor(2, room, 2, std::nullopt, true);
    const int obj = AddObject(2, room, kind);
    const int key_room = RandInt(0, num_rows_);
    AddObject(0, key_room, kKey, world_.obj(door).color);
    PlaceAgentInRoom(1, num_rows_ / 2);
    ConnectAll();
    return obj;
  }

  std::set<int> Reach(int start) const {
    std::set<int> reach;
    std::vector<int> stack{start};
    while (!stack.empty()) {
      const int r = stack.back();
      stack.pop_back();
      if (!reach.insert(r).second) continue;
      const Room& room = rooms_[static_cast<std::size_t>(r)];
      for (int k = 0; k < 4; ++k) {
        if (room.doors[static_cast<std::size_t>(k)] != kNone)
          stack.push_back(room.neighbors[static_cast<std::size_t>(k)]);
      }
    }
    return reach;
  }

  const int room_size_, num_rows_, num_cols_;
  std::vector<Room> rooms_;
};

}  // namespace pp::minigrid
