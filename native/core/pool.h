// The env pool: num_envs envs stepped by a worker pool, results gathered batch_size at a time.
// Sync when batch_size == num_envs (row i is the i-th env sent); async otherwise (first finished).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "job_queue.h"
#include "env.h"
#include "output_block.h"
#include "registry.h"
#include "spec.h"
#include "worker_pool.h"

namespace pp {

enum class AutoresetMode { kNextStep, kSameStep, kDisabled };

// Errors the Python layer maps to its own exception types.
struct TimeoutError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct ClosedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PoolOptions {
  int num_envs = 1;
  int batch_size = 0;  // 0: num_envs
  int num_threads = 0;  // 0: one per CPU, at most num_envs
  int thread_affinity_offset = -1;  // < 0: no pinning
  std::vector<uint64_t> seeds;  // one per env
  AutoresetMode autoreset_mode = AutoresetMode::kNextStep;
  bool episode_stats = false;
};

// Indices of the fields every block carries, besides the env's own state fields.
struct CoreFields {
  int env_id = -1, elapsed_step = -1, reward = -1, terminated = -1, truncated = -1;
  int players_env_id = -1;  // multi-player only
  int episode_r = -1, episode_l = -1, episode_t = -1, episode_mask = -1;  // episode_stats only
  int final_mask = -1;  // same_step only
  std::vector<int> state;  // block field of each spec.state field
  std::vector<int> final_state;  // same_step: block field holding the final copy, or -1
};

class Pool final : public SlotAllocator {
 public:
  Pool(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options);
  ~Pool() override;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Queue a step for each env in `env_ids`. `actions[k]` points at n rows of action field k (rows
  // in env_ids order; per-player fields have max_num_players rows per env), already of the
  // field's dtype and shape. Validates everything before queueing anything.
  // `caller_waits`: the caller will recv right away and help, so one fewer worker is woken.
  void Send(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, bool caller_waits = false);
  // Queue a reset for each env; `seeds` (optional, one per env) re-seeds its RNG first.
  void Reset(const int32_t* env_ids, int n, const uint64_t* seeds, bool caller_waits = false);
  // Reset these envs now and return their rows (row k is env_ids[k]) in a block of its own, outside
  // the batch order: for partial resets in sync mode. Other envs may be in flight meanwhile.
  OutputBlock* ResetNow(const int32_t* env_ids, int n, const uint64_t* seeds);
  // Wait for the next complete batch. timeout_s < 0 waits for ever. The caller owns the block and
  // gives it back with BlockFreeList::Release.
  OutputBlock* Recv(double timeout_s);
  // Writes the current RGB frame of each env, spec().render_shape bytes apart, on the caller's
  // thread. The envs must have been reset and have no step in flight (received).
  void Render(const int32_t* env_ids, int n, uint8_t* frames);
  // Joins every thread, even with jobs in flight. Idempotent.
  void Close();

  const EnvSpec& spec() const { return spec_; }
  const PoolOptions& options() const { return options_; }
  const BlockLayout& layout() const { return free_list_->layout(); }
  const CoreFields& core_fields() const { return fields_; }
  // Threads stepping envs: the workers, plus the caller in sync mode.
  int num_threads() const { return options_.num_threads; }
  bool closed() const { return closed_; }
  // Sent but not yet returned by Recv.
  int outstanding() const { return outstanding_; }
  int blocks_allocated() const { return free_list_->allocated(); }

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
    OutputBlock* forced_block = nullptr;  // ResetNow: the row is fixed by the caller
    int forced_row = -1;
    std::vector<std::byte> action_storage;
    std::vector<const std::byte*> action_rows;
    // The output row of the running job.
    OutputBlock* block = nullptr;
    int row = -1;
    int player_row = -1;
    int num_players = 0;
    std::vector<std::byte*> slot_rows;
    // Episode bookkeeping, written by the worker, read by the API thread after Recv.
    bool ever_reset = false;
    bool episode_over = false;  // the last step terminated or truncated (or the env raised)
    bool pending = false;       // sent, not yet returned by Recv (API thread only)
    double episode_return = 0.0;
    int64_t episode_length = 0;
    std::chrono::steady_clock::time_point episode_start;
  };

  // Spins (with pause) for up to kRecvSpinMicros until done() holds; returns whether it did.
  template <typename Done>
  static bool SpinUntil(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(kRecvSpinMicros);
    for (;;) {
      for (int i = 0; i < 64; ++i) {
        if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
      if (std::chrono::steady_clock::now() >= deadline) return false;
    }
  }
  static constexpr int kRecvSpinMicros = 50;

  void CheckOpen() const;
  void CheckEnvIds(const int32_t* env_ids, int n, const char* what);
  void Enqueue(const int32_t* env_ids, int n, bool caller_waits);
  void PushJob(int env_id);
  void RunJob(int env_id);
  void ClaimRow(EnvState& s);
  void WriteCoreFields(EnvState& s, const StepResult& r, bool episode_done);
  void FinishRow(EnvState& s);
  void StartEpisodeStats(EnvState& s);
  void CopyToFinal(EnvState& s);

  std::shared_ptr<const TaskEntry> task_;  // keeps make_env alive
  EnvSpec spec_;
  PoolOptions options_;
  int batch_size_;
  bool ordered_;  // sync mode: rows in send order
  CoreFields fields_;
  std::shared_ptr<BlockFreeList> free_list_;
  std::vector<EnvState> envs_;
  std::vector<std::size_t> action_row_bytes_;  // per action field, per env (all players)
  std::vector<uint32_t> seen_;  // CheckEnvIds' duplicate stamps
  uint32_t seen_generation_ = 0;

  // Output indices: index i goes to row i % batch_size of block i / batch_size.
  std::vector<OutputBlock*> ring_;
  std::atomic<int64_t> write_index_{0};  // async: claimed by workers as they finish
  int64_t send_index_ = 0;               // sync: assigned at send
  int64_t read_block_ = 0;

  JobQueue queue_;
  std::unique_ptr<WorkerPool> workers_;
  std::mutex ready_mu_;
  std::condition_variable ready_cv_;
  std::atomic<bool> closed_{false};
  int outstanding_ = 0;
  std::mutex api_mu_;  // serialises Send/Reset/Recv/Close
};

}  // namespace pp
