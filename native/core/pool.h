// The env pool: num_envs envs stepped by a worker pool, results gathered batch_size at a time.
// Sync when batch_size == num_envs (row i is the i-th env sent); async otherwise (first finished).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "action_check.h"
#include "batch_ring.h"
#include "env.h"
#include "episode.h"
#include "job_queue.h"
#include "output_block.h"
#include "output_layout.h"
#include "registry.h"
#include "spec.h"
#include "worker_pool.h"

namespace pp {

// Errors the Python layer maps to its own exception types.
struct TimeoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ClosedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The pool's options; the Pool constructor checks their ranges (std::invalid_argument).
struct PoolOptions {
  int num_envs = 1;
  std::optional<int> batch_size;    // none: num_envs (sync)
  int num_threads = 0;              // 0: one per CPU, at most num_envs
  int thread_affinity_offset = -1;  // -1: no pinning
  std::vector<uint64_t> seeds;      // one per env
  AutoresetMode autoreset_mode = AutoresetMode::kNextStep;
  bool episode_stats = false;
};

class Pool final : public SlotAllocator {
 public:
  Pool(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options);
  ~Pool() override;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Every call below but Close throws ClosedError once the pool is closed, before any other check.
  // Env ids must be in [0, num_envs), distinct, and not in flight (sent and not yet received).

  // Queue a step for each env in `env_ids`. `actions[k]` points at n rows of action field k (rows
  // in env_ids order; per-player fields have max_num_players rows per env), already of the
  // field's dtype and shape. Validates everything before queueing anything.
  void Send(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  // Send, then Recv without a timeout, the caller stepping envs while it waits. Refuses (before
  // queueing anything) a step that cannot complete a batch, which would leave its envs in flight
  // with nobody to receive them.
  OutputBlock* Step(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  // Queue a reset for each env. `seeds`: empty, or one per env of the pool (num_envs), env i being
  // re-seeded with seeds[i] before its reset.
  // `caller_waits`: the caller will recv right away and help, so one fewer worker is woken.
  void Reset(const int32_t* env_ids, int n, std::span<const uint64_t> seeds, bool caller_waits = false);
  // Reset these envs now and return their rows (row k is env_ids[k]) in a block of its own, outside
  // the batch order: for partial resets in sync mode. Other envs may be in flight meanwhile.
  // `seeds` as in Reset.
  OutputBlock* ResetNow(const int32_t* env_ids, int n, std::span<const uint64_t> seeds);
  // Wait for the next complete batch. timeout_s < 0 waits for ever. The caller owns the block and
  // gives it back with BlockFreeList::Release.
  OutputBlock* Recv(double timeout_s);
  // Writes the current RGB frame of each env, render_shape() bytes apart, on the caller's thread.
  // The envs must have been reset and have no step in flight (received).
  void Render(const int32_t* env_ids, int n, uint8_t* frames);
  // Joins every thread, even with jobs in flight. Idempotent.
  void Close();

  // Throws ClosedError when the pool is closed: for a caller that has work of its own to do before
  // calling in (converting arguments), so that a closed pool does none of it.
  void CheckOpen() const;
  // (height, width, 3) of a frame; throws std::invalid_argument when the task does not render.
  const std::vector<int>& RenderShape() const;

  const EnvSpec& spec() const { return spec_; }
  // With batch_size resolved and num_threads the number of threads actually stepping envs.
  const PoolOptions& options() const { return options_; }
  int batch_size() const { return ring_.batch_size(); }
  const BlockLayout& layout() const { return ring_.layout(); }
  const OutputFields& output_fields() const { return fields_; }
  // Threads stepping envs: the workers, plus the caller in sync mode.
  int num_threads() const { return options_.num_threads; }
  bool closed() const { return closed_; }
  // Sent but not yet returned by Recv.
  int outstanding() const { return outstanding_; }
  int blocks_allocated() const {
    return ring_.blocks_allocated() + (reset_now_blocks_ ? reset_now_blocks_->allocated() : 0);
  }

  Slot Allocate(int env_id, int num_players) override;

 private:
  enum class JobKind : uint8_t { kStep, kReset };

  struct alignas(64) EnvState {
    std::unique_ptr<Env> env;
    // The queued job.
    JobKind job = JobKind::kReset;
    bool reseed = false;
    uint64_t seed = 0;
    int64_t assigned_index = -1;  // sync mode: output index fixed at send
    RowRef forced;                // ResetNow: the row is fixed by the caller
    std::vector<std::byte> action_storage;
    std::vector<const std::byte*> action_rows;
    // The output row of the running job.
    RowRef out;
    int player_row = -1;
    int num_players = 0;
    std::vector<std::byte*> slot_rows;
    Episode episode;
    bool pending = false;  // sent, not yet returned by Recv (API thread only)
  };

  // The options checked and resolved, and the output layout they give: built before the members
  // that need them.
  struct Prepared {
    EnvSpec spec;
    PoolOptions options;
    OutputLayout output;
    BlockLayout reset_now_blocks;  // output's fields, num_envs rows each
  };
  static Prepared Prepare(EnvSpec spec, PoolOptions options);
  Pool(std::shared_ptr<const TaskEntry> task, Prepared prepared);

  void CheckEnvIds(const int32_t* env_ids, int n, const char* what);
  void CheckSeeds(std::span<const uint64_t> seeds) const;
  void ValidateSend(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions);
  void QueueSteps(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, bool caller_waits);
  void Enqueue(const int32_t* env_ids, int n, bool caller_waits);
  void PushJob(int env_id);
  void RunJob(int env_id);
  void ClaimRow(EnvState& s);
  void WriteRow(EnvState& s, const StepResult& r, bool episode_done);

  std::shared_ptr<const TaskEntry> task_;  // keeps make_env alive
  EnvSpec spec_;
  PoolOptions options_;
  OutputFields fields_;
  ActionCheck action_check_;
  BatchRing ring_;
  // ResetNow's blocks: it returns up to num_envs rows, more than a batch in async mode, so they
  // hold num_envs rows (the ring's fields, same indices). Sync mode uses the ring's: null.
  std::shared_ptr<BlockFreeList> reset_now_blocks_;
  std::vector<EnvState> envs_;
  std::vector<uint32_t> seen_;  // CheckEnvIds' duplicate stamps
  uint32_t seen_generation_ = 0;

  JobQueue queue_;
  std::unique_ptr<WorkerPool> workers_;
  std::atomic<bool> closed_{false};
  int outstanding_ = 0;
  std::mutex api_mu_;  // serialises Send/Step/Reset/Recv/Close
};

}  // namespace pp
