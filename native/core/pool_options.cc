// PreparePool: the checks of the pool's options, with the Python API's messages.
#include "pool_options.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

namespace pp {

PreparedPool PreparePool(EnvSpec spec, PoolOptions options) {
  const int num_envs = options.num_envs;
  if (num_envs < 1) throw std::invalid_argument("num_envs must be >= 1, got " + std::to_string(num_envs));
  const int batch_size = options.batch_size.value_or(num_envs);
  if (batch_size < 1) throw std::invalid_argument("batch_size must be >= 1, got " + std::to_string(batch_size));
  if (batch_size > num_envs) {
    throw std::invalid_argument("batch_size (" + std::to_string(batch_size) + ") must be <= num_envs (" +
                                std::to_string(num_envs) + ")");
  }
  if (options.num_threads < 0) {
    throw std::invalid_argument("num_threads must be >= 0, got " + std::to_string(options.num_threads));
  }
  if (options.thread_affinity_offset < -1) {
    throw std::invalid_argument("thread_affinity_offset must be >= -1, got " +
                                std::to_string(options.thread_affinity_offset));
  }
  if (options.seeds.size() != static_cast<std::size_t>(num_envs)) {
    throw std::invalid_argument("need one seed per env");
  }
  if (spec.max_num_players < 1) throw std::invalid_argument("max_num_players must be >= 1");
  if (!options.env_specs.empty()) {
    if (options.env_specs.size() != static_cast<std::size_t>(num_envs)) {
      throw std::invalid_argument("env_kwargs needs one entry per env (" + std::to_string(num_envs) + "), got " +
                                  std::to_string(options.env_specs.size()));
    }
    for (std::size_t i = 0; i < options.env_specs.size(); ++i) {
      const EnvSpec& e = options.env_specs[i];
      // The batch has one layout and one pair of spaces: an env's kwargs may change its dynamics,
      // not its fields.
      if (e.state != spec.state || e.action != spec.action || e.max_num_players != spec.max_num_players ||
          e.render_shape != spec.render_shape) {
        throw std::invalid_argument("env_kwargs[" + std::to_string(i) +
                                    "] changes the env's spaces (its observation, action or info fields); "
                                    "every env of a pool must have the same spaces");
      }
    }
  }
  if (spec.max_num_players > 1 && options.autoreset_mode == AutoresetMode::kSameStep) {
    // The reset inside the step may change the number of players, so the final step's per-player
    // rows and the new episode's cannot share one row range.
    throw std::invalid_argument(
        "autoreset_mode='same_step' is not supported for multi-player envs; use 'next_step' or 'disabled'");
  }
  options.batch_size = batch_size;
  // Resolved here, before the pool's members are built: the job lanes are one per stepping thread.
  if (options.num_threads == 0)
    options.num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.num_threads = std::min(options.num_threads, num_envs);
  OutputOptions output_options;
  output_options.batch_size = batch_size;
  output_options.episode_stats = options.episode_stats;
  output_options.same_step = options.autoreset_mode == AutoresetMode::kSameStep;
  OutputLayout output = MakeOutputLayout(spec, output_options);
  std::optional<BlockLayout> reset_blocks;
  if (batch_size < num_envs) {
    output_options.batch_size = num_envs;
    reset_blocks = MakeOutputLayout(spec, output_options).blocks;
  }
  return PreparedPool{std::move(spec), std::move(options), std::move(output), std::move(reset_blocks)};
}

}  // namespace pp
