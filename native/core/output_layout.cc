// The output-block layout of a pool, built once when the pool is made.
#include "output_layout.h"

#include <cstddef>
#include <string>

namespace pp {

OutputLayout MakeOutputLayout(const EnvSpec& spec, const OutputOptions& options) {
  OutputLayout out;
  BlockLayout& layout = out.blocks;
  OutputFields& fields = out.fields;
  const auto batch = static_cast<std::size_t>(options.batch_size);
  const std::size_t player_capacity = batch * static_cast<std::size_t>(spec.max_num_players);
  auto add_scalar = [&](const char* name, Dtype dtype) {
    return layout.Add(name, dtype, {}, DtypeSize(dtype), batch, false);
  };
  fields.env_id = add_scalar("info:env_id", Dtype::kInt32);
  fields.elapsed_step = add_scalar("info:elapsed_step", Dtype::kInt32);
  fields.reward = add_scalar("reward", Dtype::kFloat64);
  fields.terminated = add_scalar("terminated", Dtype::kBool);
  fields.truncated = add_scalar("truncated", Dtype::kBool);
  if (spec.max_num_players > 1) {
    fields.players_env_id =
        layout.Add("info:players.env_id", Dtype::kInt32, {}, sizeof(int32_t), player_capacity, true);
  }
  if (options.episode_stats) {
    fields.episode_r = add_scalar("info:episode.r", Dtype::kFloat64);
    fields.episode_l = add_scalar("info:episode.l", Dtype::kInt64);
    fields.episode_t = add_scalar("info:episode.t", Dtype::kFloat64);
    fields.episode_mask = add_scalar("info:_episode", Dtype::kBool);
  }
  for (const FieldSpec& f : spec.state) {
    fields.state.push_back(
        layout.Add(f.name, f.dtype, f.shape, f.RowBytes(), f.per_player ? player_capacity : batch, f.per_player));
  }
  if (options.same_step) {
    fields.final_mask = add_scalar("info:_final", Dtype::kBool);
    for (const FieldSpec& f : spec.state) {
      // With one player a per-player row is the env's row, so it has a final copy too; with more,
      // the reset inside the step may change the players, so there is no row to copy into.
      fields.final_state.push_back(f.per_player && spec.max_num_players > 1
                                       ? -1
                                       : layout.Add("final:" + f.name, f.dtype, f.shape, f.RowBytes(), batch, false));
    }
  }
  return out;
}

}  // namespace pp
