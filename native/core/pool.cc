// The env pool's state machine: validation on send, the job a worker runs, and batch hand-off.
#include "pool.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>

namespace pp {
namespace {

std::string EnvIdError(int env_id, const std::string& what) {
  return "env " + std::to_string(env_id) + ": " + what;
}

template <typename T>
bool CheckDiscrete(const std::byte* data, std::size_t count, double low, double high, double* bad) {
  const T* v = reinterpret_cast<const T*>(data);
  for (std::size_t i = 0; i < count; ++i) {
    const double x = static_cast<double>(v[i]);
    if (x < low || x > high) {
      *bad = x;
      return false;
    }
  }
  return true;
}

template <typename T>
bool HasNaN(const std::byte* data, std::size_t count) {
  const T* v = reinterpret_cast<const T*>(data);
  for (std::size_t i = 0; i < count; ++i) {
    if (std::isnan(v[i])) return true;
  }
  return false;
}

}  // namespace

Pool::Pool(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options)
    : task_(std::move(task)),
      spec_(std::move(spec)),
      options_(std::move(options)),
      batch_size_(options_.batch_size),
      ordered_(batch_size_ == options_.num_envs),
      // Twice the most jobs ever queued, so a push rarely meets a cell still being released.
      queue_(2 * static_cast<std::size_t>(std::max(1, options_.num_envs))) {
  const int num_envs = options_.num_envs;
  if (num_envs <= 0) throw std::invalid_argument("num_envs must be >= 1, got " + std::to_string(num_envs));
  if (batch_size_ <= 0) throw std::invalid_argument("batch_size must be >= 1, got " + std::to_string(batch_size_));
  if (batch_size_ > num_envs) {
    throw std::invalid_argument("batch_size (" + std::to_string(batch_size_) + ") must be <= num_envs (" +
                                std::to_string(num_envs) + ")");
  }
  if (options_.num_threads < 0) {
    throw std::invalid_argument("num_threads must be >= 0, got " + std::to_string(options_.num_threads));
  }
  if (options_.thread_affinity_offset < -1) {
    throw std::invalid_argument("thread_affinity_offset must be >= -1, got " +
                                std::to_string(options_.thread_affinity_offset));
  }
  if (options_.seeds.size() != static_cast<std::size_t>(num_envs)) {
    throw std::invalid_argument("need one seed per env");
  }
  if (spec_.max_num_players < 1) throw std::invalid_argument("max_num_players must be >= 1");
  if (spec_.max_num_players > 1 && options_.autoreset_mode == AutoresetMode::kSameStep) {
    // The reset inside the step may change the number of players, so the final step's per-player
    // rows and the new episode's cannot share one row range.
    throw std::invalid_argument(
        "autoreset_mode='same_step' is not supported for multi-player envs; use 'next_step' or 'disabled'");
  }
  options_.batch_size = batch_size_;

  // The block layout: core fields, then the env's own fields, then same_step's final copies.
  BlockLayout layout;
  const auto batch = static_cast<std::size_t>(batch_size_);
  const std::size_t player_capacity = batch * static_cast<std::size_t>(spec_.max_num_players);
  auto add_scalar = [&](const char* name, Dtype dtype) {
    return layout.Add(name, dtype, {}, DtypeSize(dtype), batch, false);
  };
  fields_.env_id = add_scalar("info:env_id", Dtype::kInt32);
  fields_.elapsed_step = add_scalar("info:elapsed_step", Dtype::kInt32);
  fields_.reward = add_scalar("reward", Dtype::kFloat64);
  fields_.terminated = add_scalar("terminated", Dtype::kBool);
  fields_.truncated = add_scalar("truncated", Dtype::kBool);
  if (spec_.max_num_players > 1) {
    fields_.players_env_id =
        layout.Add("info:players.env_id", Dtype::kInt32, {}, sizeof(int32_t), player_capacity, true);
  }
  if (options_.episode_stats) {
    fields_.episode_r = add_scalar("info:episode.r", Dtype::kFloat64);
    fields_.episode_l = add_scalar("info:episode.l", Dtype::kInt64);
    fields_.episode_t = add_scalar("info:episode.t", Dtype::kFloat64);
    fields_.episode_mask = add_scalar("info:_episode", Dtype::kBool);
  }
  for (const FieldSpec& f : spec_.state) {
    fields_.state.push_back(
        layout.Add(f.name, f.dtype, f.shape, f.RowBytes(), f.per_player ? player_capacity : batch, f.per_player));
  }
  if (options_.autoreset_mode == AutoresetMode::kSameStep) {
    fields_.final_mask = add_scalar("info:_final", Dtype::kBool);
    for (const FieldSpec& f : spec_.state) {
      // With one player a per-player row is the env's row, so it has a final copy too.
      fields_.final_state.push_back(f.per_player && spec_.max_num_players > 1
                                        ? -1
                                        : layout.Add("final:" + f.name, f.dtype, f.shape, f.RowBytes(), batch,
                                                     false));
    }
  }
  free_list_ = std::make_shared<BlockFreeList>(std::move(layout));

  // A claimed output index is at most num_envs ahead of the first unreceived one, so this many
  // blocks in the ring can never be overrun.
  const int ring_size = (num_envs + batch_size_ - 1) / batch_size_ + 1;
  for (int i = 0; i < ring_size; ++i) ring_.push_back(free_list_->Acquire());

  envs_ = std::vector<EnvState>(static_cast<std::size_t>(num_envs));
  seen_.assign(static_cast<std::size_t>(num_envs), 0);
  for (const FieldSpec& f : spec_.action) {
    action_row_bytes_.push_back(f.RowBytes() * (f.per_player ? spec_.max_num_players : 1));
  }
  for (int i = 0; i < num_envs; ++i) {
    EnvState& s = envs_[static_cast<std::size_t>(i)];
    s.env = task_->make_env(spec_, i);
    s.env->SetAllocator(this);
    s.env->Seed(options_.seeds[static_cast<std::size_t>(i)]);
    std::size_t total = 0;
    for (std::size_t b : action_row_bytes_) total += b;
    s.action_storage.resize(total);
    std::size_t offset = 0;
    for (std::size_t b : action_row_bytes_) {
      s.action_rows.push_back(s.action_storage.data() + offset);
      offset += b;
    }
    s.slot_rows.resize(spec_.state.size());
  }

  int num_threads = options_.num_threads;
  if (num_threads == 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads = std::min(num_threads, num_envs);
  options_.num_threads = num_threads;
  // The calling thread steps envs too while it waits, so it is one of the threads: in sync mode a
  // single env runs entirely on the caller, with no thread hand-off at all. In async mode it helps
  // in recv() (without a timeout), and while it is busy elsewhere (the policy, in Python) the
  // workers go on with the envs in flight: num_threads - 1 workers keep num_threads CPUs busy
  // without oversubscribing them (measured: HalfCheetah-v5, 2 CPUs, 16 envs / batch 8, 95% of two
  // pinned raw loops with one worker, 85-87% with two). At least one worker, since an async
  // caller need not be waiting.
  const int num_workers = ordered_ ? num_threads - 1 : std::max(1, num_threads - 1);
  workers_ = std::make_unique<WorkerPool>(num_workers, options_.thread_affinity_offset, &queue_,
                                          [this](int env_id) { RunJob(env_id); });
}

Pool::~Pool() {
  Close();
  for (OutputBlock* b : ring_) BlockFreeList::Release(b);
}

void Pool::Close() {
  if (closed_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(ready_mu_);
    ready_cv_.notify_all();
  }
  std::lock_guard<std::mutex> lock(api_mu_);
  workers_->Stop();
}

void Pool::CheckOpen() const {
  if (closed_.load(std::memory_order_relaxed)) throw ClosedError("the pool is closed");
}

void Pool::CheckEnvIds(const int32_t* env_ids, int n, const char* what) {
  if (n <= 0) throw std::invalid_argument(std::string(what) + " needs at least one env id");
  // Duplicates are found by stamping each id with this call's generation: no clearing, no allocation.
  if (++seen_generation_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    seen_generation_ = 1;
  }
  for (int k = 0; k < n; ++k) {
    const int32_t id = env_ids[k];
    if (id < 0 || id >= options_.num_envs) {
      throw std::invalid_argument(std::string(what) + ": env id " + std::to_string(id) + " is out of range [0, " +
                                  std::to_string(options_.num_envs) + ")");
    }
    uint32_t& stamp = seen_[static_cast<std::size_t>(id)];
    if (stamp == seen_generation_) {
      throw std::invalid_argument(std::string(what) + ": env id " + std::to_string(id) + " appears twice");
    }
    stamp = seen_generation_;
    if (envs_[static_cast<std::size_t>(id)].pending) {
      throw std::invalid_argument(std::string(what) + ": " +
                                  EnvIdError(id, "its previous result has not been received yet (recv() first)"));
    }
  }
}

void Pool::Send(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, bool caller_waits) {
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  CheckEnvIds(env_ids, n, "send");
  if (actions.size() != spec_.action.size()) {
    throw std::invalid_argument("expected " + std::to_string(spec_.action.size()) + " action arrays, got " +
                                std::to_string(actions.size()));
  }
  for (int k = 0; k < n; ++k) {
    const EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    if (!s.ever_reset) throw std::invalid_argument(EnvIdError(env_ids[k], "step before reset; call reset() first"));
    if (s.episode_over && options_.autoreset_mode == AutoresetMode::kDisabled) {
      throw std::invalid_argument(EnvIdError(
          env_ids[k], "its episode is over and autoreset_mode='disabled'; reset it first (reset_mask)"));
    }
  }
  // Values: discrete actions in range, no NaN where the env forbids it.
  for (std::size_t f = 0; f < spec_.action.size(); ++f) {
    const FieldSpec& field = spec_.action[f];
    const std::size_t count = action_row_bytes_[f] / DtypeSize(field.dtype) * static_cast<std::size_t>(n);
    const std::byte* data = actions[f];
    if (field.space == SpaceKind::kDiscrete) {
      double bad = 0;
      bool ok = true;
      switch (field.dtype) {
        case Dtype::kInt8: ok = CheckDiscrete<int8_t>(data, count, field.low[0], field.high[0], &bad); break;
        case Dtype::kUInt8: ok = CheckDiscrete<uint8_t>(data, count, field.low[0], field.high[0], &bad); break;
        case Dtype::kInt16: ok = CheckDiscrete<int16_t>(data, count, field.low[0], field.high[0], &bad); break;
        case Dtype::kInt32: ok = CheckDiscrete<int32_t>(data, count, field.low[0], field.high[0], &bad); break;
        case Dtype::kInt64: ok = CheckDiscrete<int64_t>(data, count, field.low[0], field.high[0], &bad); break;
        default: break;
      }
      if (!ok) {
        throw std::invalid_argument("action '" + field.name + "' must be in [" +
                                    std::to_string(static_cast<int64_t>(field.low[0])) + ", " +
                                    std::to_string(static_cast<int64_t>(field.high[0])) + "], got " +
                                    std::to_string(static_cast<int64_t>(bad)));
      }
    } else if (!field.allow_nan && DtypeIsFloat(field.dtype)) {
      const bool nan = field.dtype == Dtype::kFloat32 ? HasNaN<float>(data, count) : HasNaN<double>(data, count);
      if (nan) throw std::invalid_argument("action '" + field.name + "' contains NaN, which this env does not accept");
    }
  }
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    for (std::size_t f = 0; f < action_row_bytes_.size(); ++f) {
      std::memcpy(const_cast<std::byte*>(s.action_rows[f]), actions[f] + action_row_bytes_[f] * static_cast<std::size_t>(k), action_row_bytes_[f]);
    }
    s.job = JobKind::kStep;
    s.reseed = false;
  }
  Enqueue(env_ids, n, caller_waits);
}

void Pool::Reset(const int32_t* env_ids, int n, const uint64_t* seeds, bool caller_waits) {
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  CheckEnvIds(env_ids, n, "reset");
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.job = JobKind::kReset;
    s.reseed = seeds != nullptr;
    if (seeds != nullptr) s.seed = seeds[k];
  }
  Enqueue(env_ids, n, caller_waits);
}

OutputBlock* Pool::ResetNow(const int32_t* env_ids, int n, const uint64_t* seeds) {
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  CheckEnvIds(env_ids, n, "reset");
  OutputBlock* block = free_list_->Acquire();
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.job = JobKind::kReset;
    s.reseed = seeds != nullptr;
    if (seeds != nullptr) s.seed = seeds[k];
    s.forced_block = block;
    s.forced_row = k;
    PushJob(env_ids[k]);
  }
  workers_->Wake(n - 1);
  while (block->rows_done.load(std::memory_order_acquire) < n) {
    if (closed_.load()) throw ClosedError("the pool was closed during reset");
    if (!workers_->RunOne()) std::this_thread::yield();
  }
  if (spec_.max_num_players == 1) block->player_rows.store(n, std::memory_order_relaxed);
  return block;
}

void Pool::Render(const int32_t* env_ids, int n, uint8_t* frames) {
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  if (spec_.render_shape.empty()) throw std::invalid_argument(spec_.task_id + " does not render");
  CheckEnvIds(env_ids, n, "render");
  std::size_t frame_bytes = 1;
  for (int d : spec_.render_shape) frame_bytes *= static_cast<std::size_t>(d);
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    if (!s.ever_reset) throw std::invalid_argument(EnvIdError(env_ids[k], "render before reset; call reset() first"));
  }
  for (int k = 0; k < n; ++k) {
    envs_[static_cast<std::size_t>(env_ids[k])].env->Render(frames + static_cast<std::size_t>(k) * frame_bytes);
  }
}

void Pool::PushJob(int env_id) {
  // At most num_envs jobs are queued, but a push can still find its cell taken: a consumer that
  // claimed the item one lap earlier may not have marked the cell free yet (it was preempted).
  // That consumer is running or runnable, so waiting for it always ends.
  while (!queue_.TryPush(env_id)) std::this_thread::yield();
}

void Pool::Enqueue(const int32_t* env_ids, int n, bool caller_waits) {
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.pending = true;
    s.assigned_index = ordered_ ? send_index_++ : -1;
  }
  outstanding_ += n;
  for (int k = 0; k < n; ++k) PushJob(env_ids[k]);
  workers_->Wake(caller_waits ? n - 1 : n);
}

OutputBlock* Pool::Recv(double timeout_s) {
  std::unique_lock<std::mutex> api_lock(api_mu_);
  CheckOpen();
  if (outstanding_ < batch_size_) {
    throw std::logic_error("recv() would wait for ever: " + std::to_string(outstanding_) +
                           " env(s) in flight but batch_size is " + std::to_string(batch_size_) +
                           "; send() actions (or reset) first");
  }
  const std::size_t slot = static_cast<std::size_t>(read_block_ % static_cast<int64_t>(ring_.size()));
  OutputBlock* block = ring_[slot];
  const bool forever = timeout_s < 0;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(forever ? 0.0 : timeout_s));
  // While it waits, the caller runs queued jobs itself rather than sleep: in sync mode it is one of
  // the stepping threads; in async mode its core would otherwise idle, and a job it runs still
  // takes its row in finishing order. With a timeout it only waits (in async mode), so a long step
  // cannot hold it past the deadline.
  const bool help = ordered_ || forever;
  auto ready = [&] {
    return block->rows_done.load(std::memory_order_acquire) >= batch_size_ || closed_.load() ||
           (help && !queue_.EmptyApprox());
  };
  while (block->rows_done.load(std::memory_order_acquire) < batch_size_) {
    CheckOpen();
    if (help && workers_->RunOne()) continue;
    // The batch is finishing on other threads: spin a little before sleeping on it (a futex
    // wake-up is an inter-processor interrupt on a VM, often longer than the last env step).
    if (SpinUntil(ready)) continue;
    std::unique_lock<std::mutex> lock(ready_mu_);
    if (forever) {
      ready_cv_.wait(lock, ready);
    } else if (!ready_cv_.wait_until(lock, deadline, ready)) {
      throw TimeoutError("recv() timed out after " + std::to_string(timeout_s) + " s waiting for " +
                         std::to_string(batch_size_ - block->rows_done.load()) + " more env(s)");
    }
  }
  ring_[slot] = free_list_->Acquire();
  ++read_block_;
  // Single-player envs claim no player rows; their per-player fields have one row per env.
  if (spec_.max_num_players == 1) block->player_rows.store(batch_size_, std::memory_order_relaxed);
  const auto* ids = reinterpret_cast<const int32_t*>(block->field(fields_.env_id));
  for (int r = 0; r < batch_size_; ++r) envs_[static_cast<std::size_t>(ids[r])].pending = false;
  outstanding_ -= batch_size_;
  return block;
}

void Pool::ClaimRow(EnvState& s) {
  if (s.forced_block != nullptr) {
    s.block = s.forced_block;
    s.row = s.forced_row;
    s.forced_block = nullptr;
    s.player_row = -1;
    s.num_players = 0;
    return;
  }
  // acq_rel: the claim chain orders this worker's read of ring_ after the Recv that refilled the
  // slot (an env sent after that Recv claimed an earlier index with a release).
  const int64_t index = ordered_ ? s.assigned_index : write_index_.fetch_add(1, std::memory_order_acq_rel);
  s.block = ring_[static_cast<std::size_t>((index / batch_size_) % static_cast<int64_t>(ring_.size()))];
  s.row = static_cast<int>(index % batch_size_);
  s.player_row = -1;
  s.num_players = 0;
}

Slot Pool::Allocate(int env_id, int num_players) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (num_players < 0 || num_players > spec_.max_num_players) {
    throw std::out_of_range("Allocate: num_players " + std::to_string(num_players) + " not in [0, " +
                            std::to_string(spec_.max_num_players) + "]");
  }
  if (s.block == nullptr) ClaimRow(s);
  if (spec_.max_num_players == 1) {
    s.player_row = s.row;
  } else if (s.player_row < 0 || num_players > s.num_players) {
    s.player_row = s.block->player_rows.fetch_add(num_players, std::memory_order_relaxed);
    auto* players = reinterpret_cast<int32_t*>(s.block->field(fields_.players_env_id));
    for (int p = 0; p < num_players; ++p) players[s.player_row + p] = env_id;
  }
  s.num_players = num_players;
  const auto& layout = free_list_->layout().fields();
  for (std::size_t f = 0; f < spec_.state.size(); ++f) {
    const BlockField& bf = layout[static_cast<std::size_t>(fields_.state[f])];
    const auto row = static_cast<std::size_t>(bf.per_player ? s.player_row : s.row);
    s.slot_rows[f] = s.block->field(fields_.state[f]) + row * bf.row_bytes;
  }
  return Slot(s.slot_rows.data(), num_players);
}

void Pool::StartEpisodeStats(EnvState& s) {
  s.episode_return = 0.0;
  s.episode_length = 0;
  if (options_.episode_stats) s.episode_start = std::chrono::steady_clock::now();
}

void Pool::WriteCoreFields(EnvState& s, const StepResult& r, bool episode_done) {
  OutputBlock& b = *s.block;
  const int row = s.row;
  reinterpret_cast<int32_t*>(b.field(fields_.env_id))[row] = s.env->env_id();
  reinterpret_cast<int32_t*>(b.field(fields_.elapsed_step))[row] = s.env->elapsed_step();
  reinterpret_cast<double*>(b.field(fields_.reward))[row] = r.reward;
  reinterpret_cast<bool*>(b.field(fields_.terminated))[row] = r.terminated;
  reinterpret_cast<bool*>(b.field(fields_.truncated))[row] = r.truncated;
  if (options_.episode_stats) {
    double t = 0.0;
    if (episode_done) {
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - s.episode_start;
      t = std::round(elapsed.count() * 1e6) / 1e6;  // Gymnasium rounds to microseconds
    }
    reinterpret_cast<double*>(b.field(fields_.episode_r))[row] = episode_done ? s.episode_return : 0.0;
    reinterpret_cast<int64_t*>(b.field(fields_.episode_l))[row] = episode_done ? s.episode_length : 0;
    reinterpret_cast<double*>(b.field(fields_.episode_t))[row] = t;
    reinterpret_cast<bool*>(b.field(fields_.episode_mask))[row] = episode_done;
  }
  if (fields_.final_mask >= 0) reinterpret_cast<bool*>(b.field(fields_.final_mask))[row] = false;
}

void Pool::CopyToFinal(EnvState& s) {
  const auto& layout = free_list_->layout().fields();
  for (std::size_t f = 0; f < spec_.state.size(); ++f) {
    const int final_field = fields_.final_state[f];
    if (final_field < 0) continue;
    const std::size_t bytes = layout[static_cast<std::size_t>(final_field)].row_bytes;
    const auto row = static_cast<std::size_t>(s.row);
    std::memcpy(s.block->field(final_field) + row * bytes, s.block->field(fields_.state[f]) + row * bytes, bytes);
  }
  reinterpret_cast<bool*>(s.block->field(fields_.final_mask))[s.row] = true;
}

void Pool::RunJob(int env_id) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  Env& env = *s.env;
  s.block = nullptr;
  try {
    // In same_step mode episode_over is only left set by an env that raised.
    const bool autoreset = s.episode_over && options_.autoreset_mode != AutoresetMode::kDisabled;
    if (s.job == JobKind::kReset || autoreset || !s.ever_reset) {
      if (s.reseed) env.Seed(s.seed);
      env.BeginReset();
      env.Reset();
      if (s.block == nullptr) throw std::logic_error("Reset() did not write its outputs (call Allocate())");
      s.ever_reset = true;
      s.episode_over = false;
      StartEpisodeStats(s);
      WriteCoreFields(s, StepResult{}, false);
    } else {
      env.BeginStep();
      const StepResult r = env.Step(Action(s.action_rows.data()));
      if (s.block == nullptr) throw std::logic_error("Step() did not write its outputs (call Allocate())");
      const bool done = r.terminated || r.truncated;
      s.episode_return += r.reward;
      s.episode_length += 1;
      WriteCoreFields(s, r, done);
      if (done && options_.autoreset_mode == AutoresetMode::kSameStep) {
        CopyToFinal(s);
        env.BeginReset();
        env.Reset();  // writes its observation into the same row
        reinterpret_cast<int32_t*>(s.block->field(fields_.elapsed_step))[s.row] = 0;
        StartEpisodeStats(s);
        s.episode_over = false;
      } else {
        s.episode_over = done;
      }
    }
  } catch (const std::exception& e) {
    // The env's state is unknown now: its result is this error, and its next step resets it.
    try {
      if (s.block == nullptr) ClaimRow(s);
      s.block->AddError(env_id, e.what());
      WriteCoreFields(s, StepResult{}, false);
    } catch (...) {
      // Only allocation failure can land here; the row is still counted below.
    }
    s.episode_over = true;
  }
  FinishRow(s);
}

void Pool::FinishRow(EnvState& s) {
  OutputBlock* block = s.block;
  s.block = nullptr;
  if (block->rows_done.fetch_add(1, std::memory_order_acq_rel) + 1 == batch_size_) {
    std::lock_guard<std::mutex> lock(ready_mu_);
    ready_cv_.notify_all();
  }
}

}  // namespace pp
