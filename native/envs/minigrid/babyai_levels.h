// BabyAI's levels (minigrid/envs/babyai/: goto, open, pickup, putnext, unlock, other, synth):
// each level's gen_mission, drawing in minigrid's order, quirks included.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "envs/minigrid/babyai_level.h"
#include "envs/minigrid/room_envs.h"

namespace pp::minigrid::babyai {

inline int IntKw(const EnvSpec& spec, const std::string& key) { return static_cast<int>(spec.config.GetInt(key)); }
// A colour kwarg: "" is None.
inline int ColorKw(const EnvSpec& spec, const std::string& key) {
  const std::string& name = spec.config.GetString(key);
  if (name.empty()) return kAny;
  for (int c = 0; c < kNumColors; ++c) {
    if (name == ColorName(static_cast<Color>(c))) return c;
  }
  throw std::invalid_argument("babyai: " + key + " must be a colour name or '', got '" + name + "'");
}

// GoToRedBallGrey, GoToRedBall, GoToRedBallNoDists: one room, a red ball and num_dists distractors
// (grey ones for GoToRedBallGrey).
class GoToRedBall final : public RoomGridLevel {
 public:
  GoToRedBall(const EnvSpec& spec, int env_id, bool grey)
      : RoomGridLevel(spec, env_id), grey_(grey), num_dists_(IntKw(spec, "num_dists")) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    const int obj = AddObject(0, 0, kBall, kRed);
    const std::vector<int> dists = AddDistractors(std::nullopt, std::nullopt, num_dists_, false);
    if (grey_) {
      for (int d : dists) world_.obj(d).color = kGrey;
    }
    CheckObjsReachable();
    instrs_ = Action(InstrKind::kGoTo, Desc(kBall, kRed));
    (void)obj;
  }

 private:
  const bool grey_;
  const int num_dists_;
};

// GoToObj: one room, one object.
class GoToObj final : public RoomGridLevel {
 public:
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    const int obj = AddDistractors(std::nullopt, std::nullopt, 1)[0];
    instrs_ = Action(InstrKind::kGoTo, Desc(world_.obj(obj).type, world_.obj(obj).color));
  }
};

// GoToLocal: one room, num_dists objects, go to one of them.
class GoToLocal final : public RoomGridLevel {
 public:
  GoToLocal(const EnvSpec& spec, int env_id) : RoomGridLevel(spec, env_id), num_dists_(IntKw(spec, "num_dists")) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    const std::vector<int> objs = AddDistractors(std::nullopt, std::nullopt, num_dists_, false);
    CheckObjsReachable();
    const int obj = RandElem(objs);
    instrs_ = Action(InstrKind::kGoTo, Desc(world_.obj(obj).type, world_.obj(obj).color));
  }

 private:
  const int num_dists_;
};

// GoTo (GoToOpen, GoToObjMaze*): the 3x3 maze, num_dists objects, maybe every door open.
class GoTo final : public RoomGridLevel {
 public:
  GoTo(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id),
        num_dists_(IntKw(spec, "num_dists")),
        doors_open_(spec.config.GetBool("doors_open")) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    ConnectAll();
    const std::vector<int> objs = AddDistractors(std::nullopt, std::nullopt, num_dists_, false);
    CheckObjsReachable();
    const int obj = RandElem(objs);
    instrs_ = Action(InstrKind::kGoTo, Desc(world_.obj(obj).type, world_.obj(obj).color));
    if (doors_open_) OpenAllDoors();
  }

 private:
  const int num_dists_;
  const bool doors_open_;
};

// GoToImpUnlock and Unlock. minigrid compares its drawn room indices (NumPy integers) with `is`,
// which never holds: the key may land in the locked room, and every room gets distractors.
class LockedDoorLevel final : public RoomGridLevel {
 public:
  LockedDoorLevel(const EnvSpec& spec, int env_id, bool go_to) : RoomGridLevel(spec, env_id), go_to_(go_to) {}

 protected:
  void GenMission() override {
    const int id = RandInt(0, num_cols_);
    const int jd = RandInt(0, num_rows_);
    const int door = AddDoor(id, jd, std::nullopt, std::nullopt, true);
    const int locked_room = Index(id, jd);
    const int ik = RandInt(0, num_cols_);
    const int jk = RandInt(0, num_rows_);
    AddObject(ik, jk, kKey, world_.obj(door).color);
    if (go_to_) {
      ConnectAll();
    } else if (RandBool()) {
      std::vector<Color> colors;
      for (Color c : kColorNames) {
        if (c != world_.obj(door).color) colors.push_back(c);
      }
      ConnectAll(colors);
    } else {
      ConnectAll();
    }
    for (int i = 0; i < num_cols_; ++i) {
      for (int j = 0; j < num_rows_; ++j) AddDistractors(i, j, go_to_ ? 2 : 3, false);
    }
    for (;;) {
      PlaceAgentInRoom();
      if (RoomIndexFromPos(agent_) == locked_room) continue;
      break;
    }
    CheckObjsReachable();
    if (go_to_) {
      const int obj = AddDistractors(id, jd, 1, false)[0];
      instrs_ = Action(InstrKind::kGoTo, Desc(world_.obj(obj).type, world_.obj(obj).color));
    } else {
      instrs_ = Action(InstrKind::kOpen, Desc(kDoor, world_.obj(door).color));
    }
  }

 private:
  const bool go_to_;
};

// GoToRedBlueBall: one red or blue ball among distractors that are neither.
class GoToRedBlueBall final : public RoomGridLevel {
 public:
  GoToRedBlueBall(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id), num_dists_(IntKw(spec, "num_dists")) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    const std::vector<int> dists = AddDistractors(std::nullopt, std::nullopt, num_dists_, false);
    for (int d : dists) {
      const Obj& o = world_.obj(d);
      if (o.type == kBall && (o.color == kBlue || o.color == kRed)) throw RejectSampling("one blue or red ball only");
    }
    const Color color = RandIndex(2) == 0 ? kRed : kBlue;
    AddObject(0, 0, kBall, color);
    CheckObjsReachable();
    instrs_ = Action(InstrKind::kGoTo, Desc(kBall, color));
  }

 private:
  const int num_dists_;
};

// GoToDoor, GoToObjDoor, ActionObjDoor: the middle room of the maze with four doors (and objects).
class DoorsLevel final : public RoomGridLevel {
 public:
  enum Variant { kGoToDoor, kGoToObjDoor, kActionObjDoor };
  DoorsLevel(const EnvSpec& spec, int env_id, int variant) : RoomGridLevel(spec, env_id), variant_(variant) {}

 protected:
  void GenMission() override {
    std::vector<int> objs;
    if (variant_ == kGoToObjDoor) {
      PlaceAgentInRoom(1, 1);
      objs = AddDistractors(1, 1, 8, false);
    } else if (variant_ == kActionObjDoor) {
      objs = AddDistractors(1, 1, 5);
    }
    for (int k = 0; k < 4; ++k) {
      objs.push_back(AddDoor(1, 1, std::nullopt, std::nullopt,
                             variant_ == kActionObjDoor ? std::optional<bool>(false) : std::nullopt));
    }
    if (variant_ == kGoToObjDoor) {
      CheckObjsReachable();
    } else {
      PlaceAgentInRoom(1, 1);
    }
    const int obj = RandElem(objs);
    const ObjDesc desc = Desc(world_.obj(obj).type, world_.obj(obj).color);
    if (variant_ != kActionObjDoor) {
      instrs_ = Action(InstrKind::kGoTo, desc);
    } else if (world_.obj(obj).type == kDoor) {
      instrs_ = Action(RandBool() ? InstrKind::kGoTo : InstrKind::kOpen, desc);
    } else {
      instrs_ = Action(RandBool() ? InstrKind::kGoTo : InstrKind::kPickup, desc);
    }
  }

 private:
  const int variant_;
};

// Open: the maze with distractors; open one of its doors (drawn from the per-room door lists).
class OpenLevel final : public RoomGridLevel {
 public:
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    ConnectAll();
    AddDistractors(std::nullopt, std::nullopt, 18, false);
    CheckObjsReachable();
    const int door = RandElem(RoomDoors());
    instrs_ = Action(InstrKind::kOpen, Desc(kDoor, world_.obj(door).color));
  }
};

// OpenRedDoor
class OpenRedDoor final : public RoomGridLevel {
 public:
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    AddDoor(0, 0, 0, kRed, false);
    PlaceAgentInRoom(0, 0);
    instrs_ = Action(InstrKind::kOpen, Desc(kDoor, kRed));
  }
};

// OpenDoor (Debug, Color, Loc): four doors of distinct colours, the first named by colour or by
// a location.
class OpenDoor final : public RoomGridLevel {
 public:
  OpenDoor(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id),
        debug_(spec.config.GetBool("debug")),
        select_by_(spec.config.GetString("select_by")) {
    if (!select_by_.empty() && select_by_ != "color" && select_by_ != "loc") {
      throw std::invalid_argument("babyai: select_by must be 'color', 'loc' or ''");
    }
  }

 protected:
  void GenMission() override {
    const std::vector<Color> colors = RandSubset(std::vector<Color>(kColorNames.begin(), kColorNames.end()), 4);
    std::vector<int> doors;
    for (int i = 0; i < 4; ++i) doors.push_back(AddDoor(1, 1, i, colors[static_cast<std::size_t>(i)], false));
    std::string select_by = select_by_;
    if (select_by.empty()) select_by = RandIndex(2) == 0 ? "color" : "loc";
    const ObjDesc desc =
        select_by == "color" ? Desc(kDoor, world_.obj(doors[0]).color) : Desc(kDoor, kAny, RandIndex(kNumLocs));
    PlaceAgentInRoom(1, 1);
    instrs_ = Action(InstrKind::kOpen, desc, debug_);
  }

 private:
  const bool debug_;
  const std::string select_by_;
};

// OpenTwoDoors (OpenRedBlueDoors): open the door on the left, then the one on the right.
class OpenTwoDoors final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 20 * 36; }
  OpenTwoDoors(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id),
        first_(ColorKw(spec, "first_color")),
        second_(ColorKw(spec, "second_color")),
        strict_(spec.config.GetBool("strict")) {}

 protected:
  void GenMission() override {
    const std::vector<Color> colors = RandSubset(std::vector<Color>(kColorNames.begin(), kColorNames.end()), 2);
    const Color first = first_ == kAny ? colors[0] : static_cast<Color>(first_);
    const Color second = second_ == kAny ? colors[1] : static_cast<Color>(second_);
    const int door1 = AddDoor(1, 1, 2, first, false);
    const int door2 = AddDoor(1, 1, 0, second, false);
    PlaceAgentInRoom(1, 1);
    instrs_ = Sequence(InstrKind::kBefore, Action(InstrKind::kOpen, Desc(kDoor, world_.obj(door1).color), strict_),
                       Action(InstrKind::kOpen, Desc(kDoor, world_.obj(door2).color)));
  }

 private:
  const int first_, second_;
  const bool strict_;
};

// OpenDoorsOrder: open one door, or two in a given order.
class OpenDoorsOrder final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 20 * 36; }
  OpenDoorsOrder(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id), num_doors_(IntKw(spec, "num_doors")), debug_(spec.config.GetBool("debug")) {
    if (num_doors_ < 2 || num_doors_ > 4) throw std::invalid_argument("babyai: num_doors must be in 2..4");
  }

 protected:
  void GenMission() override {
    const std::vector<Color> colors =
        RandSubset(std::vector<Color>(kColorNames.begin(), kColorNames.end()), num_doors_);
    std::vector<int> doors;
    for (int i = 0; i < num_doors_; ++i)
      doors.push_back(AddDoor(1, 1, std::nullopt, colors[static_cast<std::size_t>(i)], false));
    PlaceAgentInRoom(1, 1);
    const std::vector<int> two = RandSubset(doors, 2);
    const ObjDesc d1 = Desc(kDoor, world_.obj(two[0]).color), d2 = Desc(kDoor, world_.obj(two[1]).color);
    const int mode = RandInt(0, 3);
    if (mode == 0) {
      instrs_ = Action(InstrKind::kOpen, d1, debug_);
    } else {
      instrs_ = Sequence(mode == 1 ? InstrKind::kBefore : InstrKind::kAfter, Action(InstrKind::kOpen, d1, debug_),
                         Action(InstrKind::kOpen, d2, debug_));
    }
  }

 private:
  const int num_doors_;
  const bool debug_;
};

// Pickup and UnblockPickup: the maze with distractors; pick one up (UnblockPickup: only levels
// where some object is blocked).
class PickupLevel final : public RoomGridLevel {
 public:
  PickupLevel(const EnvSpec& spec, int env_id, bool unblock) : RoomGridLevel(spec, env_id), unblock_(unblock) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    ConnectAll();
    const std::vector<int> objs = AddDistractors(std::nullopt, std::nullopt, unblock_ ? 20 : 18, false);
    if (unblock_) {
      if (CheckObjsReachable(false)) throw RejectSampling("all objects reachable");
    } else {
      CheckObjsReachable();
    }
    const int obj = RandElem(objs);
    instrs_ = Action(InstrKind::kPickup, Desc(world_.obj(obj).type, world_.obj(obj).color));
  }

 private:
  const bool unblock_;
};

// PickupDist (Debug): five objects, one named by type, colour or both.
class PickupDist final : public RoomGridLevel {
 public:
  PickupDist(const EnvSpec& spec, int env_id) : RoomGridLevel(spec, env_id), debug_(spec.config.GetBool("debug")) {}

 protected:
  void GenMission() override {
    const std::vector<int> objs = AddDistractors(std::nullopt, std::nullopt, 5);
    PlaceAgentInRoom(0, 0);
    const int obj = RandElem(objs);
    int type = world_.obj(obj).type, color = world_.obj(obj).color;
    const int select_by = RandIndex(3);  // ["type", "color", "both"]
    if (select_by == 1) type = kAny;
    if (select_by == 0) color = kAny;
    instrs_ = Action(InstrKind::kPickup, Desc(type, color), debug_);
  }

 private:
  const bool debug_;
};

// PickupAbove: the object is in the room above the agent's.
class PickupAbove final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 8 * 36; }
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    const int obj = AddObject(1, 0);
    AddDoor(1, 1, 3, std::nullopt, false);
    PlaceAgentInRoom(1, 1);
    ConnectAll();
    instrs_ = Action(InstrKind::kPickup, Desc(world_.obj(obj).type, world_.obj(obj).color));
  }
};

// PutNextLocal: one room of distinct objects; put one next to another.
class PutNextLocal final : public RoomGridLevel {
 public:
  PutNextLocal(const EnvSpec& spec, int env_id) : RoomGridLevel(spec, env_id), num_objs_(IntKw(spec, "num_objs")) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom();
    const std::vector<int> objs = AddDistractors(std::nullopt, std::nullopt, num_objs_, true);
    CheckObjsReachable();
    const std::vector<int> two = RandSubset(objs, 2);
    const Obj &a = world_.obj(two[0]), &b = world_.obj(two[1]);
    instrs_ = PutNext(Desc(a.type, a.color), Desc(b.type, b.color));
  }

 private:
  const int num_objs_;
};

// PutNext (Carrying) and MoveTwoAcross: two rooms joined by a removed wall, objects in each.
class TwoRoomPutNext final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& c) {
    return 8 * c.GetInt("room_size") * c.GetInt("room_size");  // MoveTwoAcross: 16, at its registration
  }
  TwoRoomPutNext(const EnvSpec& spec, int env_id, bool move_two)
      : RoomGridLevel(spec, env_id),
        move_two_(move_two),
        objs_per_room_(IntKw(spec, "objs_per_room")),
        start_carrying_(!move_two && spec.config.GetBool("start_carrying")) {}

 protected:
  void GenMission() override {
    PlaceAgentInRoom(0, 0);
    std::vector<int> left = AddDistractors(0, 0, objs_per_room_);
    std::vector<int> right = AddDistractors(1, 0, objs_per_room_);
    RemoveWall(0, 0, 0);
    auto desc = [&](int id) { return Desc(world_.obj(id).type, world_.obj(id).color); };
    if (move_two_) {
      left = RandSubset(left, 2);
      right = RandSubset(right, 2);
      instrs_ =
          Sequence(InstrKind::kBefore, PutNext(desc(left[0]), desc(right[0])), PutNext(desc(right[1]), desc(left[1])));
      return;
    }
    int a = RandElem(left);
    int b = RandElem(right);
    if (RandBool()) std::swap(a, b);
    obj_a_ = a;
    instrs_ = PutNext(desc(a), desc(b));
  }

  // PutNext.reset: after the first observation, the agent holds object a.
  void AfterReset() override {
    if (!start_carrying_) return;
    const Pos p = world_.obj(obj_a_).cur_pos;  // init_pos: place_obj sets both
    world_.Set(p.x, p.y, kNone);
    carrying_ = obj_a_;
  }

 private:
  const bool move_two_;
  const int objs_per_room_;
  const bool start_carrying_;
  int obj_a_ = kNone;
};

// UnlockLocal (Dist) and KeyInBox: a locked door of the middle room, its key (in a box) there.
class UnlockLocal final : public RoomGridLevel {
 public:
  UnlockLocal(const EnvSpec& spec, int env_id, bool key_in_box)
      : RoomGridLevel(spec, env_id),
        key_in_box_(key_in_box),
        distractors_(!key_in_box && spec.config.GetBool("distractors")) {}

 protected:
  void GenMission() override {
    const int door = AddDoor(1, 1, std::nullopt, std::nullopt, true);
    if (key_in_box_) {
      const int key = world_.New(kKey, world_.obj(door).color);
      const int box = world_.New(kBox, RandColor());
      world_.obj(box).contains = key;
      PlaceInRoom(1, 1, box);
    } else {
      AddObject(1, 1, kKey, world_.obj(door).color);
      if (distractors_) AddDistractors(1, 1, 3);
    }
    PlaceAgentInRoom(1, 1);
    instrs_ = Action(InstrKind::kOpen, Desc(kDoor));
  }

 private:
  const bool key_in_box_, distractors_;
};

// UnlockPickup (Dist), BlockedUnlockPickup: the box behind a locked door (blocked by a ball).
class UnlockPickupLevel final : public RoomGridLevel {
 public:
  UnlockPickupLevel(const EnvSpec& spec, int env_id, bool blocked)
      : RoomGridLevel(spec, env_id), blocked_(blocked), distractors_(!blocked && spec.config.GetBool("distractors")) {}

 protected:
  void GenMission() override {
    const int obj = AddObject(1, 0, kBox);
    Pos pos;
    const int door = AddDoor(0, 0, 0, std::nullopt, true, &pos);
    if (blocked_) world_.Set(pos.x - 1, pos.y, world_.New(kBall, RandColor()));
    AddObject(0, 0, kKey, world_.obj(door).color);
    if (distractors_) AddDistractors(std::nullopt, std::nullopt, 4);
    PlaceAgentInRoom(0, 0);
    instrs_ = Action(InstrKind::kPickup, blocked_ ? Desc(kBox) : Desc(kBox, world_.obj(obj).color));
  }

 private:
  const bool blocked_, distractors_;
};

// UnlockToUnlock: two locked doors in a row, each key behind the other door.
class UnlockToUnlock final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 30 * 36; }
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    const std::vector<Color> colors = RandSubset(std::vector<Color>(kColorNames.begin(), kColorNames.end()), 2);
    AddDoor(0, 0, 0, colors[0], true);
    AddObject(2, 0, kKey, colors[0]);
    AddDoor(1, 0, 0, colors[1], true);
    AddObject(1, 0, kKey, colors[1]);
    AddObject(0, 0, kBall);
    PlaceAgentInRoom(1, 0);
    instrs_ = Action(InstrKind::kPickup, Desc(kBall));
  }
};

// FindObjS5/6/7: an object in a random room (drawn as (row, column) into add_object's (i, j)).
class FindObj final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 20 * c.GetInt("room_size") * c.GetInt("room_size"); }
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    const int i = RandInt(0, num_rows_);
    const int j = RandInt(0, num_cols_);
    const int obj = AddObject(i, j);
    PlaceAgentInRoom(1, 1);
    ConnectAll();
    instrs_ = Action(InstrKind::kPickup, Desc(world_.obj(obj).type));
  }
};

// KeyCorridor (BabyAI's): as MiniGrid's, with an instruction.
class KeyCorridorLevel final : public RoomGridLevel {
 public:
  static int64_t DefaultMaxSteps(const Config& c) { return 30 * c.GetInt("room_size") * c.GetInt("room_size"); }
  KeyCorridorLevel(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id), kind_(ObjKind(spec.config.GetString("obj_type"))) {}

 protected:
  void GenMission() override {
    const int obj = GenKeyCorridor(kind_);
    instrs_ = Action(InstrKind::kPickup, Desc(world_.obj(obj).type));
  }

 private:
  const ObjType kind_;
};

// OneRoomS8/12/16/20: pick up the ball.
class OneRoom final : public RoomGridLevel {
 public:
  using RoomGridLevel::RoomGridLevel;

 protected:
  void GenMission() override {
    const int obj = AddObject(0, 0, kBall);
    PlaceAgentInRoom();
    instrs_ = Action(InstrKind::kPickup, Desc(world_.obj(obj).type));
  }
};

// LevelGen's levels (GoToSeq, PickupLoc, Synth*, MiniBossLevel, BossLevel*): LevelGen with their kwargs.
class LevelGenLevel final : public LevelGen {
 public:
  using LevelGen::LevelGen;
};

}  // namespace pp::minigrid::babyai
