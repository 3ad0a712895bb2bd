// The output-block layout of a pool: the core's own fields, the env's state fields, and same_step's
// final copies, in one BlockLayout; and the writes of the core's fields into one row.
#pragma once

#include <cstdint>
#include <vector>

#include "env.h"
#include "output_block.h"
#include "spec.h"

namespace pp {

// Indices into the block layout of the fields every block carries besides the env's own, and of
// the env's state fields. -1: the pool's options leave the field out.
struct OutputFields {
  int env_id = -1, elapsed_step = -1, reward = -1, terminated = -1, truncated = -1;
  int players_env_id = -1;                                                // multi-player only
  int episode_r = -1, episode_l = -1, episode_t = -1, episode_mask = -1;  // episode_stats only
  int final_mask = -1;                                                    // same_step only
  std::vector<int> state;                                                 // block field of each spec.state field
  std::vector<int> final_state;  // same_step: block field holding the final copy, or -1
};

struct OutputLayout {
  BlockLayout blocks;
  OutputFields fields;
};

// What decides the layout besides the spec.
struct OutputOptions {
  int batch_size = 1;          // rows per block (per-player fields: batch_size * max_num_players)
  bool episode_stats = false;  // info["episode"] and its "_episode" mask
  bool same_step = false;      // autoreset_mode="same_step": the final observation's copies
};

// Core fields first, then the env's state fields in spec order, then same_step's final copies.
OutputLayout MakeOutputLayout(const EnvSpec& spec, const OutputOptions& options);

// Row `row` of field `field`, as T (the field's dtype).
template <typename T>
T& At(const OutputBlock& block, int field, int row) {
  return reinterpret_cast<T*>(block.field(field))[row];
}

// The core's fields of one row: who, how far into the episode, and what the step returned. A step
// with no final observation leaves same_step's mask false.
inline void WriteStepFields(const OutputBlock& block, const OutputFields& f, int row, int env_id, int elapsed_step,
                            const StepResult& r) {
  At<int32_t>(block, f.env_id, row) = env_id;
  At<int32_t>(block, f.elapsed_step, row) = elapsed_step;
  At<double>(block, f.reward, row) = r.reward;
  At<bool>(block, f.terminated, row) = r.terminated;
  At<bool>(block, f.truncated, row) = r.truncated;
  if (f.final_mask >= 0) At<bool>(block, f.final_mask, row) = false;
}

}  // namespace pp
