// The checks on a batch of actions before any of it is queued: one array per action field,
// discrete values in range, no NaN where the env forbids it. The only place these rules live.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "spec.h"

namespace pp {

class ActionCheck {
 public:
  explicit ActionCheck(const EnvSpec& spec);

  // Bytes of action field f for one env: max_num_players rows for per-player fields, else one.
  const std::vector<std::size_t>& row_bytes() const { return row_bytes_; }

  // Each check throws std::invalid_argument saying what is wrong.
  // One array per action field.
  void CheckCount(const std::vector<const std::byte*>& actions) const {
    if (actions.size() != fields_.size()) ThrowCount(actions.size());
  }
  // `actions[f]` points at n env rows of field f (row_bytes()[f] apart), of the field's dtype:
  // discrete values in range and no NaN where the field forbids it. Names the first bad value.
  void CheckValues(const std::vector<const std::byte*>& actions, int n) const;

 private:
  [[noreturn]] void ThrowCount(std::size_t got) const;

  struct Field {
    std::string name;
    Dtype dtype;
    bool discrete;
    double low, high;  // discrete only, inclusive
    bool allow_nan;
    std::size_t elements;  // values per env (all its players)
  };
  std::vector<Field> fields_;
  std::vector<std::size_t> row_bytes_;
};

}  // namespace pp
