// BabyAI's level machinery (minigrid/envs/babyai/core/): RoomGridLevel (generate until the
// instruction validates, verify it every step, max_steps from the instruction) and LevelGen.
#pragma once

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "envs/minigrid/babyai_instr.h"
#include "envs/minigrid/room_grid.h"

namespace pp::minigrid::babyai {

// RejectSampling: the level generated something it does not want; generate again.
struct RejectSampling : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The "babyai" kwargs: room_size, num_rows, num_cols with the level's defaults.
inline Pos LevelGridSize(const Config& c) {
  return RoomGridSize(static_cast<int>(c.GetInt("room_size")), static_cast<int>(c.GetInt("num_rows")),
                      static_cast<int>(c.GetInt("num_cols")));
}

class RoomGridLevel : public RoomGridEnv {
 public:
  static Pos GridSize(const Config& c) { return LevelGridSize(c); }
  // 0: max_steps set per episode from the instruction; levels with a fixed one say so.
  static int64_t DefaultMaxSteps(const Config& /*c*/) { return 0; }

  RoomGridLevel(const EnvSpec& spec, int env_id)
      : RoomGridEnv(spec, env_id, static_cast<int>(spec.config.GetInt("room_size")),
                    static_cast<int>(spec.config.GetInt("num_rows")), static_cast<int>(spec.config.GetInt("num_cols"))),
        fixed_max_steps_(spec.max_episode_steps > 0) {}

 protected:
  // The level's gen_mission: objects, agent, and instrs_.
  virtual void GenMission() = 0;
  // LevelGen's unblocking (validate_instrs checks it only where the level has the attribute).
  virtual bool Unblocking() const { return false; }

  // RoomGridLevel._gen_grid: generate until the instruction validates, then its surface is the
  // mission; then RoomGridLevel.reset's reset_verifier and max_steps.
  void GenGrid() override {
    for (;;) {
      try {
        world_.Reset(width_, height_);
        RoomGridEnv::GenGrid();
        GenMission();
        Validate(*instrs_);
      } catch (const RecursionFailed&) {
        continue;
      } catch (const RejectSampling&) {
        continue;
      }
      break;
    }
    mission_ = Surface(*instrs_);
    ResetVerifier(*instrs_);
    if (!fixed_max_steps_) max_steps_ = NumNavs(*instrs_) * room_size_ * room_size_ * num_rows_ * num_cols_;
  }

  StepOutcome DoStep(int action) override {
    StepOutcome out = BaseStep(action);
    if (action == kDrop) UpdateObjsPoss(*instrs_);
    const Status status = Verify(*instrs_, action);
    if (status == Status::kSuccess) {
      out.terminated = true;
      out.reward = SuccessReward();
    } else if (status == Status::kFailure) {
      out.terminated = true;
      out.reward = 0.0;
    }
    return out;
  }

  // --- RoomGridLevel's and RoomGrid's helpers ---

  // add_distractors: colour then kind drawn per object (skipped if all_unique and already there),
  // in room (i, j) or a random one.
  std::vector<int> AddDistractors(std::optional<int> i, std::optional<int> j, int num, bool all_unique = true) {
    static const std::vector<ObjType> kKinds = {kKey, kBall, kBox};
    std::vector<std::pair<ObjType, Color>> objs;
    for (const Room& room : rooms_) {
      for (int id : room.objs) objs.emplace_back(world_.obj(id).type, world_.obj(id).color);
    }
    std::vector<int> dists;
    while (static_cast<int>(dists.size()) < num) {
      const Color color = RandColor();
      const ObjType type = RandElem(kKinds);
      if (all_unique && std::find(objs.begin(), objs.end(), std::make_pair(type, color)) != objs.end()) continue;
      const int ri = i ? *i : RandInt(0, num_cols_);
      const int rj = j ? *j : RandInt(0, num_rows_);
      dists.push_back(AddObject(ri, rj, type, color));
      objs.emplace_back(type, color);
    }
    return dists;
  }

  // check_objs_reachable: every object reachable from the agent through empty cells and doors.
  bool CheckObjsReachable(bool raise = true) {
    std::set<std::pair<int, int>> reachable;
    std::vector<Pos> stack{agent_};
    while (!stack.empty()) {
      const Pos p = stack.back();
      stack.pop_back();
      if (!world_.Inside(p.x, p.y)) continue;
      if (!reachable.insert({p.x, p.y}).second) continue;
      const int cell = world_.Get(p.x, p.y);
      if (cell != kNone && world_.obj(cell).type != kDoor) continue;
      stack.push_back({p.x + 1, p.y});
      stack.push_back({p.x - 1, p.y});
      stack.push_back({p.x, p.y + 1});
      stack.push_back({p.x, p.y - 1});
    }
    for (int i = 0; i < world_.width(); ++i) {
      for (int j = 0; j < world_.height(); ++j) {
        const int cell = world_.Get(i, j);
        if (cell == kNone || world_.obj(cell).type == kWall) continue;
        if (!reachable.count({i, j})) {
          if (!raise) return false;
          throw RejectSampling("unreachable object");
        }
      }
    }
    return true;
  }

  // The doors of every room, rooms in column-major order (i outer), each door once per room it
  // belongs to, as `for door in room.doors: if door` collects them.
  std::vector<int> RoomDoors() const {
    std::vector<int> doors;
    for (int i = 0; i < num_cols_; ++i) {
      for (int j = 0; j < num_rows_; ++j) {
        for (int d : rooms_[static_cast<std::size_t>(Index(i, j))].doors) {
          if (d == kOpenWall) throw std::logic_error("babyai: a removed wall where a door was expected");
          if (d != kNone) doors.push_back(d);
        }
      }
    }
    return doors;
  }
  void OpenAllDoors() {
    for (int d : RoomDoors()) world_.obj(d).is_open = true;
  }

  // --- the verifier ---

  static bool PosNextTo(Pos a, Pos b) { return std::abs(a.x - b.x) + std::abs(a.y - b.y) == 1; }

  // ObjDesc.find_matching_objs: scanned column by column; with use_location, the set is found
  // anew (locations relative to the agent, in its room); without, only the positions of the
  // objects already in the set are found again.
  void FindMatching(ObjDesc& d, bool use_location = true) {
    if (use_location) d.obj_set.clear();
    d.obj_poss.clear();
    const Room& room = rooms_[static_cast<std::size_t>(RoomIndexFromPos(agent_))];
    for (int i = 0; i < world_.width(); ++i) {
      for (int j = 0; j < world_.height(); ++j) {
        const int cell = world_.Get(i, j);
        if (cell == kNone) continue;
        if (!use_location && std::find(d.obj_set.begin(), d.obj_set.end(), cell) == d.obj_set.end()) continue;
        const Obj& o = world_.obj(cell);
        if (d.type != kAny && o.type != d.type) continue;
        if (d.color != kAny && o.color != d.color) continue;
        if (use_location && d.loc != kAny) {
          if (i < room.top.x || j < room.top.y || i >= room.top.x + room.size.x || j >= room.top.y + room.size.y)
            continue;
          const int vx = i - agent_.x, vy = j - agent_.y;
          const int d1x = kDirX[agent_dir_], d1y = kDirY[agent_dir_], d2x = -d1y, d2y = d1x;
          const int side = vx * d2x + vy * d2y, ahead = vx * d1x + vy * d1y;
          const bool matches = d.loc == kLeft       ? side < 0
                               : d.loc == kRightLoc ? side > 0
                               : d.loc == kFront    ? ahead > 0
                                                    : ahead < 0;
          if (!matches) continue;
        }
        if (use_location) d.obj_set.push_back(cell);
        d.obj_poss.push_back({i, j});
      }
    }
  }

  std::string Surface(ObjDesc& d) {
    FindMatching(d);
    if (d.obj_set.empty()) throw std::logic_error("babyai: no object matching description");
    std::string s = d.type != kAny ? TypeName(static_cast<ObjType>(d.type)) : "object";
    if (d.color != kAny) s = std::string(ColorName(static_cast<Color>(d.color))) + " " + s;
    if (d.loc == kFront) {
      s += " in front of you";
    } else if (d.loc == kBehind) {
      s += " behind you";
    } else if (d.loc == kLeft) {
      s += " on your left";
    } else if (d.loc == kRightLoc) {
      s += " on your right";
    }
    return (d.obj_set.size() > 1 ? "a " : "the ") + s;
  }
  std::string Surface(Instr& instr) {
    switch (instr.kind) {
      case InstrKind::kGoTo: return "go to " + Surface(instr.desc);
      case InstrKind::kOpen: return "open " + Surface(instr.desc);
      case InstrKind::kPickup: return "pick up " + Surface(instr.desc);
      case InstrKind::kPutNext: {
        std::string s = "put " + Surface(instr.desc);
        return s + " next to " + Surface(instr.desc_fixed);
      }
      case InstrKind::kBefore: {
        std::string s = Surface(*instr.a);
        return s + ", then " + Surface(*instr.b);
      }
      case InstrKind::kAfter: {
        std::string s = Surface(*instr.a);
        return s + " after you " + Surface(*instr.b);
      }
      case InstrKind::kAnd: {
        std::string s = Surface(*instr.a);
        return s + " and " + Surface(*instr.b);
      }
    }
    return {};
  }

  void ResetVerifier(Instr& instr) {
    if (instr.IsAction()) {
      instr.pre_carrying = kNone;
      FindMatching(instr.desc);
      if (instr.kind == InstrKind::kPutNext) FindMatching(instr.desc_fixed);
      return;
    }
    ResetVerifier(*instr.a);
    ResetVerifier(*instr.b);
    instr.a_done = instr.b_done = Status::kNotYet;
  }

  void UpdateObjsPoss(Instr& instr) {
    if (instr.IsAction()) {
      FindMatching(instr.desc, false);
      if (instr.kind == InstrKind::kPutNext) FindMatching(instr.desc_fixed, false);
      return;
    }
    UpdateObjsPoss(*instr.a);
    UpdateObjsPoss(*instr.b);
  }

  bool ObjsNext(const Instr& instr) const {
    for (int a : instr.desc.obj_set) {
      for (const Pos& b : instr.desc_fixed.obj_poss) {
        if (PosNextTo(world_.obj(a).cur_pos, b)) return true;
      }
    }
    return false;
  }

  Status Verify(Instr& instr, int action) {
    switch (instr.kind) {
      case InstrKind::kOpen: {
        if (action != kToggle) return Status::kContinue;
        const Pos f = FrontPos();
        const int front = world_.Get(f.x, f.y);
        for (int door : instr.desc.obj_set) {
          if (front != kNone && front == door && world_.obj(door).is_open) return Status::kSuccess;
        }
        if (instr.strict && front != kNone && world_.obj(front).type == kDoor) return Status::kFailure;
        return Status::kContinue;
      }
      case InstrKind::kGoTo: {
        const Pos f = FrontPos();
        for (const Pos& p : instr.desc.obj_poss) {
          if (p == f) return Status::kSuccess;
        }
        return Status::kContinue;
      }
      case InstrKind::kPickup: {
        const int pre = instr.pre_carrying;
        instr.pre_carrying = carrying_;
        if (action != kPickup) return Status::kContinue;
        for (int obj : instr.desc.obj_set) {
          if (pre == kNone && carrying_ == obj) return Status::kSuccess;
        }
        if (instr.strict && carrying_ != kNone) return Status::kFailure;
        instr.pre_carrying = carrying_;
        return Status::kContinue;
      }
      case InstrKind::kPutNext: {
        const int pre = instr.pre_carrying;
        instr.pre_carrying = carrying_;
        if (instr.strict && action == kPickup && carrying_ != kNone) return Status::kFailure;
        if (action != kDrop) return Status::kContinue;
        for (int a : instr.desc.obj_set) {
          if (pre != a) continue;
          for (const Pos& b : instr.desc_fixed.obj_poss) {
            if (PosNextTo(world_.obj(a).cur_pos, b)) return Status::kSuccess;
          }
        }
        return Status::kContinue;
      }
      case InstrKind::kBefore:
        if (instr.a_done == Status::kSuccess) {
          instr.b_done = Verify(*instr.b, action);
          if (instr.b_done == Status::kFailure) return Status::kFailure;
          if (instr.b_done == Status::kSuccess) return Status::kSuccess;
        } else {
          instr.a_done = Verify(*instr.a, action);
          if (instr.a_done == Status::kFailure) return Status::kFailure;
          if (instr.a_done == Status::kSuccess) return Verify(instr, action);
          if (instr.strict && Verify(*instr.b, action) == Status::kSuccess) return Status::kFailure;
        }
        return Status::kContinue;
      case InstrKind::kAfter:
        if (instr.b_done == Status::kSuccess) {
          instr.a_done = Verify(*instr.a, action);
          if (instr.a_done == Status::kSuccess) return Status::kSuccess;
          if (instr.a_done == Status::kFailure) return Status::kFailure;
        } else {
          instr.b_done = Verify(*instr.b, action);
          if (instr.b_done == Status::kFailure) return Status::kFailure;
          if (instr.b_done == Status::kSuccess) return Verify(instr, action);
          if (instr.strict && Verify(*instr.a, action) == Status::kSuccess) return Status::kFailure;
        }
        return Status::kContinue;
      case InstrKind::kAnd:
        if (instr.a_done != Status::kSuccess) instr.a_done = Verify(*instr.a, action);
        if (instr.b_done != Status::kSuccess) instr.b_done = Verify(*instr.b, action);
        if (instr.a_done == Status::kSuccess && instr.b_done == Status::kSuccess) return Status::kSuccess;
        return Status::kContinue;
    }
    return Status::kContinue;
  }

  // validate_instrs
  void Validate(Instr& instr) {
    std::vector<int> locked_colors;
    if (Unblocking()) {
      for (int i = 0; i < num_cols_; ++i) {
        for (int j = 0; j < num_rows_; ++j) {
          for (int d : rooms_[static_cast<std::size_t>(Index(i, j))].doors) {
            if (d >= 0 && world_.obj(d).is_locked) locked_colors.push_back(world_.obj(d).color);
          }
        }
      }
    }
    if (instr.kind == InstrKind::kPutNext) {
      ResetVerifier(instr);
      for (int a : instr.desc.obj_set) {
        if (std::find(instr.desc_fixed.obj_set.begin(), instr.desc_fixed.obj_set.end(), a) !=
            instr.desc_fixed.obj_set.end()) {
          throw RejectSampling("there are objects that match both lhs and rhs of PutNext");
        }
      }
      if (ObjsNext(instr)) throw RejectSampling("objs already next to each other");
    }
    if (instr.IsAction()) {
      if (!Unblocking()) return;
      for (const ObjDesc* d : {&instr.desc, instr.kind == InstrKind::kPutNext ? &instr.desc_fixed : nullptr}) {
        if (d == nullptr) continue;
        if (d->type == kKey && std::find(locked_colors.begin(), locked_colors.end(), d->color) != locked_colors.end()) {
          throw RejectSampling("cannot do anything with/to a key that can be used to open a door");
        }
      }
      return;
    }
    Validate(*instr.a);
    Validate(*instr.b);
  }

  static int NumNavs(const Instr& instr) {
    if (instr.kind == InstrKind::kPutNext) return 2;
    if (instr.IsAction()) return 1;
    return NumNavs(*instr.a) + NumNavs(*instr.b);
  }

  const bool fixed_max_steps_;
  std::unique_ptr<Instr> instrs_;
};

// LevelGen: a random instruction over a maze with distractors and maybe a locked room.
class LevelGen : public RoomGridLevel {
 public:
  LevelGen(const EnvSpec& spec, int env_id)
      : RoomGridLevel(spec, env_id),
        num_dists_(static_cast<int>(spec.config.GetInt("num_dists"))),
        locked_room_prob_(spec.config.GetFloat("locked_room_prob")),
        locations_(spec.config.GetBool("locations")),
        unblocking_(spec.config.GetBool("unblocking")),
        implicit_unlock_(spec.config.GetBool("implicit_unlock")),
        action_kinds_(Kinds(spec.config.GetString("action_kinds"), {"goto", "pickup", "open", "putnext"})),
        instr_kinds_(Kinds(spec.config.GetString("instr_kinds"), {"action", "and", "seq"})) {}

  // A comma-separated list of names, each one of `known`, as indices into `known`.
  static std::vector<int> Kinds(const std::string& list, const std::vector<std::string>& known) {
    std::vector<int> out;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      const std::string name = list.substr(start, end - start);
      const auto it = std::find(known.begin(), known.end(), name);
      if (it == known.end()) throw std::invalid_argument("babyai: unknown kind '" + name + "' in '" + list + "'");
      out.push_back(static_cast<int>(it - known.begin()));
      start = end + 1;
    }
    return out;
  }

 protected:
  bool Unblocking() const override { return unblocking_; }

  void GenMission() override {
    locked_room_ = -1;
    if (np_random().Uniform(0, 1) < locked_room_prob_) AddLockedRoom();
    ConnectAll();
    AddDistractors(std::nullopt, std::nullopt, num_dists_, false);
    for (;;) {
      PlaceAgentInRoom();
      if (RoomIndexFromPos(agent_) == locked_room_) continue;
      break;
    }
    if (!unblocking_) CheckObjsReachable();
    instrs_ = RandInstr(action_kinds_, instr_kinds_);
  }

  void AddLockedRoom() {
    int door;
    for (;;) {
      const int i = RandInt(0, num_cols_);
      const int j = RandInt(0, num_rows_);
      const int door_idx = RandInt(0, 4);
      locked_room_ = Index(i, j);
      if (RoomAt(i, j).neighbors[static_cast<std::size_t>(door_idx)] < 0) continue;
      door = AddDoor(i, j, door_idx, std::nullopt, true);
      break;
    }
    for (;;) {
      const int i = RandInt(0, num_cols_);
      const int j = RandInt(0, num_rows_);
      if (Index(i, j) == locked_room_) continue;
      AddObject(i, j, kKey, world_.obj(door).color);
      break;
    }
  }

  // rand_obj: colour (or None), type, maybe a location, until something matches.
  ObjDesc RandObj(const std::vector<int>& types, int max_tries = 100) {
    for (int tries = 0;;) {
      if (tries > max_tries) throw RecursionFailed("babyai: failed to find suitable object");
      ++tries;
      const int c = RandIndex(kNumColors + 1);  // [None, *COLOR_NAMES]
      const int color = c == 0 ? kAny : kColorNames[static_cast<std::size_t>(c - 1)];
      const int type = RandElem(types);
      int loc = kAny;
      if (locations_ && RandBool()) loc = RandIndex(kNumLocs);
      ObjDesc desc = Desc(type, color, loc);
      FindMatching(desc);
      if (desc.obj_set.empty()) continue;
      if (!implicit_unlock_ && locked_room_ >= 0) {
        const Room& room = rooms_[static_cast<std::size_t>(locked_room_)];
        bool outside = false;
        for (const Pos& p : desc.obj_poss) {
          if (p.x < room.top.x || p.y < room.top.y || p.x >= room.top.x + room.size.x ||
              p.y >= room.top.y + room.size.y) {
            outside = true;
          }
        }
        if (!outside) continue;
      }
      return desc;
    }
  }

  // rand_instr; kinds index into ("goto", "pickup", "open", "putnext") and ("action", "and", "seq").
  std::unique_ptr<Instr> RandInstr(const std::vector<int>& action_kinds, const std::vector<int>& instr_kinds) {
    static const std::vector<int> kAllTypes = {kBox, kBall, kKey, kDoor};  // OBJ_TYPES
    static const std::vector<int> kNotDoor = {kBox, kBall, kKey};
    const int kind = RandElem(instr_kinds);
    if (kind == 0) {
      const int action = RandElem(action_kinds);
      if (action == 0) return Action(InstrKind::kGoTo, RandObj(kAllTypes));
      if (action == 1) return Action(InstrKind::kPickup, RandObj(kNotDoor));
      if (action == 2) return Action(InstrKind::kOpen, RandObj({kDoor}));
      ObjDesc move = RandObj(kNotDoor);
      return PutNext(std::move(move), RandObj(kAllTypes));
    }
    if (kind == 1) {
      auto a = RandInstr(action_kinds, {0});
      return Sequence(InstrKind::kAnd, std::move(a), RandInstr(action_kinds, {0}));
    }
    auto a = RandInstr(action_kinds, {0, 1});
    auto b = RandInstr(action_kinds, {0, 1});
    return Sequence(RandIndex(2) == 0 ? InstrKind::kBefore : InstrKind::kAfter, std::move(a), std::move(b));
  }

  const int num_dists_;
  const double locked_room_prob_;
  const bool locations_, unblocking_, implicit_unlock_;
  const std::vector<int> action_kinds_, instr_kinds_;
  int locked_room_ = -1;
};

}  // namespace pp::minigrid::babyai
