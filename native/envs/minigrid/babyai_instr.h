// BabyAI's instruction language as data (minigrid/envs/babyai/core/verifier.py): object
// descriptions and the instruction tree (go to, open, pick up, put next; and, before, after).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "envs/minigrid/world.h"

namespace pp::minigrid::babyai {

inline constexpr int kAny = -1;  // ObjDesc's None (any type, any colour, no location)

// LOC_NAMES
enum Loc : int { kLeft = 0, kRightLoc = 1, kFront = 2, kBehind = 3 };
inline constexpr int kNumLocs = 4;

// ObjDesc: a type, colour and location relative to the agent (each possibly None), and the objects
// of the grid it matched (ids, and the positions of those on the grid).
struct ObjDesc {
  int type = kAny;
  int color = kAny;
  int loc = kAny;
  std::vector<int> obj_set;
  std::vector<Pos> obj_poss;
};

enum class InstrKind { kGoTo, kOpen, kPickup, kPutNext, kBefore, kAfter, kAnd };
// A verifier's answer; kNotYet is the "False" Python's sequence instructions start from.
enum class Status { kNotYet, kContinue, kSuccess, kFailure };

struct Instr {
  InstrKind kind = InstrKind::kGoTo;
  bool strict = false;
  ObjDesc desc;                 // desc, or PutNext's desc_move
  ObjDesc desc_fixed;           // PutNext's
  std::unique_ptr<Instr> a, b;  // the sequence instructions' parts
  int pre_carrying = kNone;     // Pickup / PutNext
  Status a_done = Status::kNotYet, b_done = Status::kNotYet;

  bool IsAction() const {
    return kind == InstrKind::kGoTo || kind == InstrKind::kOpen || kind == InstrKind::kPickup ||
           kind == InstrKind::kPutNext;
  }
};

inline std::unique_ptr<Instr> Action(InstrKind kind, ObjDesc desc, bool strict = false) {
  auto instr = std::make_unique<Instr>();
  instr->kind = kind;
  instr->desc = std::move(desc);
  instr->strict = strict;
  return instr;
}
inline std::unique_ptr<Instr> PutNext(ObjDesc move, ObjDesc fixed, bool strict = false) {
  auto instr = Action(InstrKind::kPutNext, std::move(move), strict);
  instr->desc_fixed = std::move(fixed);
  return instr;
}
inline std::unique_ptr<Instr> Sequence(InstrKind kind, std::unique_ptr<Instr> a, std::unique_ptr<Instr> b) {
  auto instr = std::make_unique<Instr>();
  instr->kind = kind;
  instr->a = std::move(a);
  instr->b = std::move(b);
  return instr;
}
inline ObjDesc Desc(int type, int color = kAny, int loc = kAny) {
  ObjDesc d;
  d.type = type;
  d.color = color;
  d.loc = loc;
  return d;
}

}  // namespace pp::minigrid::babyai
