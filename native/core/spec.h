// The one declaration of an env: its fields (what it outputs, what it takes as action) and config.
// C++ storage, Gymnasium spaces and dm_env specs are all derived from this; nothing is declared twice.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.h"
#include "dtype.h"

namespace pp {

// The kind of space a field becomes in Python.
enum class SpaceKind : uint8_t {
  kBox,       // Box(low, high, shape, dtype)
  kDiscrete,  // Discrete(high - low + 1, start=low); a scalar integer field
  // A string of at most shape[0] bytes, stored uint8 and NUL-padded; Python sees a str (a batch:
  // an array of str), Gymnasium a Text space, dm_env a StringArray. State fields only.
  kText,
};

// Where an info field is in the info of the env the task reproduces (Gymnasium's, ale_py's, ...):
// the strict Gymnasium view returns that info only; make()'s pools return every field in every row.
enum class InfoPresence : uint8_t {
  kAlways,     // in the info of every reset and step
  kStep,       // in a step's info, not a reset's
  kWhereTrue,  // a bool flag, in the info of a row only where it is true
  kExtra,      // not the reference's: EnvPool's or ours
};

// One array field. Names follow the output's Python structure:
//   "obs" (the observation) or "obs:<key>" (a Dict observation),
//   "info:<key>" (an info entry), "info:players.<key>" (a per-player info entry).
// Action fields are named "action" or "action:<key>".
struct FieldSpec {
  std::string name;
  Dtype dtype = Dtype::kFloat32;
  std::vector<int> shape;  // shape of one row (one env, or one player when per_player)
  SpaceKind space = SpaceKind::kBox;
  // Box bounds: empty (unbounded, or the dtype's range), one value (broadcast) or one per element.
  // Discrete: one value each, inclusive.
  std::vector<double> low, high;
  bool per_player = false;
  // Actions only: whether NaN is a valid value (float fields). Envs forbid it by default.
  bool allow_nan = false;
  InfoPresence presence = InfoPresence::kAlways;  // info fields only

  bool operator==(const FieldSpec&) const = default;

  std::size_t NumElements() const {
    return std::accumulate(shape.begin(), shape.end(), std::size_t{1},
                           [](std::size_t a, int b) { return a * static_cast<std::size_t>(b); });
  }
  std::size_t RowBytes() const { return NumElements() * DtypeSize(dtype); }
};

inline FieldSpec Box(std::string name, Dtype dtype, std::vector<int> shape, std::vector<double> low = {},
                     std::vector<double> high = {}) {
  FieldSpec f;
  f.name = std::move(name);
  f.dtype = dtype;
  f.shape = std::move(shape);
  f.low = std::move(low);
  f.high = std::move(high);
  return f;
}

inline FieldSpec Discrete(std::string name, int64_t n, int64_t start = 0, Dtype dtype = Dtype::kInt64) {
  FieldSpec f;
  f.name = std::move(name);
  f.dtype = dtype;
  f.space = SpaceKind::kDiscrete;
  f.low = {static_cast<double>(start)};
  f.high = {static_cast<double>(start + n - 1)};
  return f;
}

// A text field (SpaceKind::kText): printable ASCII of at most `max_length` bytes.
inline FieldSpec Text(std::string name, int max_length) {
  FieldSpec f = Box(std::move(name), Dtype::kUInt8, {max_length});
  f.space = SpaceKind::kText;
  return f;
}

inline FieldSpec WithPresence(FieldSpec f, InfoPresence presence) {
  f.presence = presence;
  return f;
}

inline FieldSpec PerPlayer(FieldSpec f) {
  f.per_player = true;
  return f;
}

// Everything the core needs to know about one task, built from its resolved config.
struct EnvSpec {
  std::string task_id;
  Config config;                  // resolved: defaults with the user's overrides applied
  std::vector<FieldSpec> state;   // what the env writes each step (obs, info)
  std::vector<FieldSpec> action;  // what the env reads each step
  int max_num_players = 1;
  int max_episode_steps = 0;               // 0: no time limit
  std::optional<double> reward_threshold;  // Gymnasium's registered value; none if it has none
  // (height, width, 3) of the RGB frame Env::Render writes; empty: the task cannot render.
  std::vector<int> render_shape;
  // The reference env's metadata["render_fps"]: frames per second of a rendered episode; 0: none.
  double render_fps = 0;
  // Named tables of numbers a task derives from its config, for Python to read (e.g. toy text's
  // transition table "P", rows of (state, action, prob, next_state, reward, terminated)).
  std::map<std::string, std::vector<double>> tables;

  int StateIndex(const std::string& name) const { return IndexOf(state, name); }
  int ActionIndex(const std::string& name) const { return IndexOf(action, name); }

 private:
  static int IndexOf(const std::vector<FieldSpec>& fields, const std::string& name) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == name) return static_cast<int>(i);
    }
    throw std::out_of_range("spec has no field '" + name + "'");
  }
};

}  // namespace pp
