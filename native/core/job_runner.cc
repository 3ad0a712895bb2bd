// JobRunner: one env's job, and the rows it writes.
#include "job_runner.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pp {

void JobRunner::ClaimRow(EnvState& s) {
  if (s.forced.block != nullptr) {
    s.out = s.forced;
    s.forced = RowRef{};
  } else {
    s.out = ring_.Claim(s.assigned_index);
  }
  s.player_row = -1;
  s.num_players = 0;
}

Slot JobRunner::Allocate(int env_id, int num_players) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (num_players < 0 || num_players > spec_.max_num_players) {
    throw std::out_of_range("Allocate: num_players " + std::to_string(num_players) + " not in [0, " +
                            std::to_string(spec_.max_num_players) + "]");
  }
  if (s.out.block == nullptr) ClaimRow(s);
  if (spec_.max_num_players == 1) {
    s.player_row = s.out.row;
  } else if (s.player_row < 0 || num_players > s.num_players) {
    s.player_row = s.out.block->player_rows.fetch_add(num_players, std::memory_order_relaxed);
    int32_t* players = &At<int32_t>(*s.out.block, fields_.players_env_id, 0);
    for (int p = 0; p < num_players; ++p) players[s.player_row + p] = env_id;
  }
  s.num_players = num_players;
  const auto& layout = ring_.layout().fields();
  for (std::size_t f = 0; f < spec_.state.size(); ++f) {
    const BlockField& bf = layout[static_cast<std::size_t>(fields_.state[f])];
    const auto row = static_cast<std::size_t>(bf.per_player ? s.player_row : s.out.row);
    s.slot_rows[f] = s.out.block->field(fields_.state[f]) + row * bf.row_bytes;
  }
  return Slot(s.slot_rows.data(), num_players);
}

// The row of an env that raised holds zeros in every state field: the env may have written part
// of it, or nothing, which would leave an earlier batch's values there. Per-player fields: the
// player rows it claimed, if any (with one player, the env's row).
void JobRunner::WriteFailedRow(EnvState& s, const char* message) {
  if (s.out.block == nullptr) ClaimRow(s);
  OutputBlock& block = *s.out.block;
  block.AddError(s.out.row, s.env->env_id(), message);
  const auto& layout = ring_.layout().fields();
  for (std::size_t f = 0; f < spec_.state.size(); ++f) {
    const BlockField& bf = layout[static_cast<std::size_t>(fields_.state[f])];
    auto row = static_cast<std::size_t>(s.out.row);
    std::size_t rows = 1;
    if (bf.per_player && spec_.max_num_players > 1) {
      if (s.player_row < 0) continue;  // it claimed no player rows
      row = static_cast<std::size_t>(s.player_row);
      rows = static_cast<std::size_t>(s.num_players);
    }
    std::memset(block.field(fields_.state[f]) + row * bf.row_bytes, 0, rows * bf.row_bytes);
  }
  WriteRow(s, StepResult{}, false);
}

}  // namespace pp
