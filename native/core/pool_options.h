// The pool's options, and their checks: what make()'s keyword arguments become, checked and
// resolved before the pool builds anything, with the output layout they give.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "episode.h"
#include "output_block.h"
#include "output_layout.h"
#include "spec.h"

namespace pp {

// The pool's options; PreparePool checks their ranges.
struct PoolOptions {
  int num_envs = 1;
  std::optional<int> batch_size;    // none: num_envs (sync)
  int num_threads = 0;              // 0: one per CPU, at most num_envs
  int thread_affinity_offset = -1;  // -1: no pinning
  std::vector<uint64_t> seeds;      // one per env
  AutoresetMode autoreset_mode = AutoresetMode::kNextStep;
  bool episode_stats = false;
  // Per-env config (make(..., env_kwargs=[...])): empty, every env gets the pool's spec; else one
  // spec per env, each built from its own config, with exactly the pool spec's fields (a different
  // gravity or map per env, never different spaces).
  std::vector<EnvSpec> env_specs;
};

// The options checked and resolved (batch_size and num_threads set), and the output layout they give.
struct PreparedPool {
  EnvSpec spec;
  PoolOptions options;
  OutputLayout output;
  // Async mode: the same fields with num_envs rows, for ResetNow's blocks (it may reset more
  // envs than a batch holds). Sync mode uses the ring's blocks, which hold every env.
  std::optional<BlockLayout> reset_blocks;
};

// Throws std::invalid_argument with the Python API's messages (these are its keyword arguments).
PreparedPool PreparePool(EnvSpec spec, PoolOptions options);

}  // namespace pp
