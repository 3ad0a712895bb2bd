// The pool's API: env ids, actions and seeds checked, jobs set up and handed to the scheduler, and
// batches handed off by the ring. Rows are written by the job runner, threads run by the scheduler.
#include "pool.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace pp {

namespace {

// How many forks separate this process from the one that loaded the module: 0 there, +1 in each
// forked child (pthread_atfork's child handler), so a pool can tell that it was inherited.
std::atomic<int> fork_generation{0};
int ForkGeneration() {
  static const bool registered = [] {
    pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1, std::memory_order_relaxed); });
    return true;
  }();
  (void)registered;
  return fork_generation.load(std::memory_order_relaxed);
}

std::chrono::steady_clock::duration Seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

// Takes `mu` by `until`, or returns false. Polls with a growing pause rather than a timed mutex:
// std::timed_mutex's timed lock is pthread_mutex_clocklock, which ThreadSanitizer does not see (it
// then reports the unlock as wrong), and this runs only while another thread is receiving, so a
// hand-over up to kMaxPause late costs nothing that matters.
bool LockUntil(std::mutex& mu, std::chrono::steady_clock::time_point until) {
  constexpr std::chrono::microseconds kMaxPause{2000};
  std::chrono::microseconds pause{50};
  for (;;) {
    if (mu.try_lock()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return false;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, until - now));
    pause = std::min(2 * pause, kMaxPause);
  }
}

}  // namespace

Pool::Pool(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options)
    : Pool(std::move(task), PreparePool(std::move(spec), std::move(options))) {}

Pool::Pool(std::shared_ptr<const TaskEntry> task, PreparedPool prepared)
    : task_(std::move(task)),
      fork_generation_(ForkGeneration()),
      creator_pid_(getpid()),
      spec_(std::move(prepared.spec)),
      options_(std::move(prepared.options)),
      fields_(std::move(prepared.output.fields)),
      action_check_(spec_),
      ring_(std::move(prepared.output.blocks), options_.num_envs, *options_.batch_size,
            *options_.batch_size == options_.num_envs),
      reset_blocks_(prepared.reset_blocks ? std::make_shared<BlockFreeList>(std::move(*prepared.reset_blocks))
                                          : nullptr),
      runner_(spec_, options_, fields_, ring_, envs_) {
  const int num_envs = options_.num_envs;
  envs_ = std::vector<EnvState>(static_cast<std::size_t>(num_envs));
  seen_.assign(static_cast<std::size_t>(num_envs), 0);
  const std::vector<std::size_t>& action_row_bytes = action_check_.row_bytes();
  for (int i = 0; i < num_envs; ++i) {
    EnvState& s = envs_[static_cast<std::size_t>(i)];
    const EnvSpec& env_spec = options_.env_specs.empty() ? spec_ : options_.env_specs[static_cast<std::size_t>(i)];
    s.env = task_->make_env(env_spec, i);
    runner_.Attach(*s.env);
    EnvDriver(*s.env).Seed(options_.seeds[static_cast<std::size_t>(i)]);
    s.split = dynamic_cast<SplitPhaseEnv*>(s.env.get());
    std::size_t total = 0;
    for (std::size_t b : action_row_bytes) total += b;
    s.action_storage.resize(total);
    std::size_t offset = 0;
    for (std::size_t b : action_row_bytes) {
      s.action_rows.push_back(s.action_storage.data() + offset);
      offset += b;
    }
    s.slot_rows.resize(spec_.state.size());
  }

  // num_threads is resolved (PreparePool).
  scheduler_ = std::make_unique<DefaultScheduler>(envs_, runner_, ring_, closed_, options_.num_threads,
                                                  options_.thread_affinity_offset);
}

Pool::~Pool() { Close(); }

void Pool::Close() {
  if (closed_.exchange(true)) return;
  if (forked()) {
    Abandon();
    return;
  }
  ring_.WakeAll();
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    scheduler_->Stop();
  }
  // A thread receiving leaves after the job it is running (it sees closed_): wait for it, so that
  // no thread is still stepping an env when Close returns. Not under api_mu_, which it may need.
  std::lock_guard<std::mutex> receivers(recv_mu_);
  // Nothing steps, resets or renders an env any more (each checks closed_ first): release them now,
  // not when the last Python reference to the pool goes, since an env may hold processes (ViZDoom's
  // engines) that close() must end.
  for (EnvState& s : envs_) s.env.reset();
}

void Pool::CheckOpen() const {
  if (closed_.load(std::memory_order_relaxed)) throw ClosedError("the pool is closed");
  CheckNotForked();
}

void Pool::CheckNotForked() const {
  if (forked()) {
    throw ForkedError(
        "this pool was made before the process forked: its threads run only in the parent "
        "process (pid " +
        std::to_string(creator_pid_) + "); make a new pool in this one");
  }
}

bool Pool::forked() const { return fork_generation_ != ForkGeneration(); }

void Pool::Abandon() {
  scheduler_->Abandon();
  for (EnvState& s : envs_) (void)s.env.release();
}

const std::vector<int>& Pool::RenderShape() const {
  if (spec_.render_shape.empty()) throw std::invalid_argument(spec_.task_id + " does not render");
  return spec_.render_shape;
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
    if (envs_[static_cast<std::size_t>(id)].pending.load(std::memory_order_acquire)) {
      throw std::invalid_argument(std::string(what) + ": env " + std::to_string(id) +
                                  ": its previous result has not been received yet (recv() first)");
    }
  }
}

void Pool::CheckSeeds(std::span<const uint64_t> seeds) const {
  if (!seeds.empty() && seeds.size() != static_cast<std::size_t>(options_.num_envs)) {
    throw std::invalid_argument("need one seed per env of the pool (" + std::to_string(options_.num_envs) + "), got " +
                                std::to_string(seeds.size()));
  }
}

inline void Pool::ValidateSend(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions) {
  CheckEnvIds(env_ids, n, "send");
  action_check_.CheckCount(actions);
  for (int k = 0; k < n; ++k) {
    envs_[static_cast<std::size_t>(env_ids[k])].episode.CheckStep(env_ids[k], options_.autoreset_mode);
  }
  action_check_.CheckValues(actions, n);
}

inline void Pool::SetStepJobs(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions) {
  const std::vector<std::size_t>& row_bytes = action_check_.row_bytes();
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    for (std::size_t f = 0; f < row_bytes.size(); ++f) {
      std::memcpy(const_cast<std::byte*>(s.action_rows[f]), actions[f] + row_bytes[f] * static_cast<std::size_t>(k),
                  row_bytes[f]);
    }
    s.job = JobKind::kStep;
    s.reseed = false;
  }
}

inline void Pool::QueueSteps(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions,
                             bool caller_waits) {
  SetStepJobs(env_ids, n, actions);
  Enqueue(env_ids, n, caller_waits);
}

void Pool::Send(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  ValidateSend(env_ids, n, actions);
  QueueSteps(env_ids, n, actions, false);
}

void Pool::ThrowCannotFill(int n, int in_flight) const {
  throw std::invalid_argument("step() of " + std::to_string(n) + " env(s) cannot fill a batch of " +
                              std::to_string(batch_size()) + " (" + std::to_string(in_flight) +
                              " in flight): step every env, or use send() and recv()");
}

OutputBlock* Pool::Step(const int32_t* env_ids, int n, const std::vector<const std::byte*>& actions, double poll_s,
                        int* rows) {
  CheckNotForked();
  {
    std::lock_guard<std::mutex> lock(api_mu_);
    CheckOpen();
    ValidateSend(env_ids, n, actions);
    const int in_flight = outstanding();
    if (in_flight + n < batch_size()) {
      // EnvPool steps some of the envs in sync mode: their rows alone come back.
      if (rows == nullptr || !ring_.ordered() || spec_.max_num_players != 1 || in_flight != 0) {
        ThrowCannotFill(n, in_flight);
      }
      SetStepJobs(env_ids, n, actions);
      *rows = n;
      return RunNow(env_ids, n, "step");
    }
    QueueSteps(env_ids, n, actions, true);
  }
  if (rows != nullptr) *rows = batch_size();
  return Recv(-1.0, poll_s);
}

void Pool::SetResetJobs(const int32_t* env_ids, int n, std::span<const uint64_t> seeds) {
  CheckEnvIds(env_ids, n, "reset");
  CheckSeeds(seeds);
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.job = JobKind::kReset;
    s.reseed = !seeds.empty();
    if (s.reseed) s.seed = seeds[static_cast<std::size_t>(env_ids[k])];
  }
}

void Pool::Reset(const int32_t* env_ids, int n, std::span<const uint64_t> seeds, bool caller_waits) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  SetResetJobs(env_ids, n, seeds);
  Enqueue(env_ids, n, caller_waits);
}

OutputBlock* Pool::ResetNow(const int32_t* env_ids, int n, std::span<const uint64_t> seeds) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  SetResetJobs(env_ids, n, seeds);
  return RunNow(env_ids, n, "reset");
}

OutputBlock* Pool::RunNow(const int32_t* env_ids, int n, const char* what) {
  // A batch's block holds batch_size rows; n may be more in async mode.
  OutputBlock* block = reset_blocks_ ? reset_blocks_->Acquire() : ring_.AcquireBlock();
  for (int k = 0; k < n; ++k) envs_[static_cast<std::size_t>(env_ids[k])].forced = RowRef{block, k};
  scheduler_->Push(env_ids, n, Scheduler::Caller::kRunsThemAll);
  if (!scheduler_->RunUntilRows(*block, n)) {
    BlockFreeList::Release(block);
    throw ClosedError(std::string("the pool was closed during ") + what);
  }
  if (spec_.max_num_players == 1) block->player_rows.store(n, std::memory_order_relaxed);
  return block;
}

void Pool::Render(const int32_t* env_ids, int n, uint8_t* frames) {
  CheckNotForked();  // before the lock: a forked child's copy of it may be held for ever
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckReceived(env_ids, n, "render");
  std::size_t frame_bytes = 1;
  for (int d : RenderShape()) frame_bytes *= static_cast<std::size_t>(d);
  for (int k = 0; k < n; ++k) {
    envs_[static_cast<std::size_t>(env_ids[k])].env->Render(frames + static_cast<std::size_t>(k) * frame_bytes);
  }
}

std::vector<Config> Pool::DebugStates(const int32_t* env_ids, int n) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckReceived(env_ids, n, "debug_states");
  std::vector<Config> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) out.push_back(envs_[static_cast<std::size_t>(env_ids[k])].env->DebugState());
  return out;
}

void Pool::CheckReceived(const int32_t* env_ids, int n, const char* what) {
  CheckOpen();
  CheckEnvIds(env_ids, n, what);
  for (int k = 0; k < n; ++k) {
    if (!envs_[static_cast<std::size_t>(env_ids[k])].episode.ever_reset()) {
      throw std::invalid_argument("env " + std::to_string(env_ids[k]) + ": " + what +
                                  " before reset; call reset() first");
    }
  }
}

void Pool::Enqueue(const int32_t* env_ids, int n, bool caller_waits) {
  const bool ordered = ring_.ordered();
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.pending.store(true, std::memory_order_relaxed);
    s.assigned_index = ordered ? ring_.AssignIndex() : -1;
  }
  sent_.store(sent_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  scheduler_->Push(env_ids, n, caller_waits ? Scheduler::Caller::kWaitsForBatch : Scheduler::Caller::kReturns);
}

OutputBlock* Pool::Recv(double timeout_s, double poll_s) {
  const bool forever = timeout_s < 0;
  const bool polled = poll_s > 0;
  // The clock is read only when a wait has a bound: a plain recv() or step() reads none of its own.
  const auto deadline =
      forever ? std::chrono::steady_clock::time_point{} : std::chrono::steady_clock::now() + Seconds(timeout_s);
  auto timed_out = [&] {
    return TimeoutError("recv() timed out after " + std::to_string(timeout_s) + " s waiting for " +
                        std::to_string(ring_.RowsLeft(ring_.front())) + " more env(s)");
  };
  CheckNotForked();
  std::unique_lock<std::mutex> recv_lock(recv_mu_, std::try_to_lock);
  if (!recv_lock.owns_lock()) {
    // Another thread is receiving: wait for it as this call would wait for its batch.
    if (!polled && forever) {
      recv_lock.lock();
    } else {
      auto until = polled ? std::chrono::steady_clock::now() + Seconds(poll_s) : deadline;
      if (polled && !forever) until = std::min(until, deadline);
      if (!LockUntil(recv_mu_, until)) {
        if (!forever && until == deadline) {
          throw TimeoutError("recv() timed out after " + std::to_string(timeout_s) +
                             " s waiting for another thread's recv() to return");
        }
        return nullptr;
      }
      recv_lock = std::unique_lock<std::mutex>(recv_mu_, std::adopt_lock);
    }
  }
  CheckOpen();
  const int batch_size = ring_.batch_size();
  const int in_flight = outstanding();
  if (in_flight < batch_size) {
    throw std::logic_error("recv() would wait for ever: " + std::to_string(in_flight) +
                           " env(s) in flight but batch_size is " + std::to_string(batch_size) +
                           "; send() actions (or reset) first");
  }
  Scheduler::Wait wait;
  wait.forever = forever;
  wait.deadline = deadline;
  wait.poll_s = poll_s;
  switch (scheduler_->WaitForBatch(*ring_.front(), batch_size, wait)) {
    case Scheduler::Outcome::kReady: break;
    case Scheduler::Outcome::kPolled: return nullptr;
    case Scheduler::Outcome::kTimedOut: throw timed_out();
    case Scheduler::Outcome::kClosed: throw ClosedError("the pool is closed");
  }
  OutputBlock* out = ring_.PopFront();
  // Single-player envs claim no player rows; their per-player fields have one row per env.
  if (spec_.max_num_players == 1) out->player_rows.store(batch_size, std::memory_order_relaxed);
  const int32_t* ids = &At<int32_t>(*out, fields_.env_id, 0);
  for (int r = 0; r < batch_size; ++r) {
    envs_[static_cast<std::size_t>(ids[r])].pending.store(false, std::memory_order_release);
  }
  received_.store(received_.load(std::memory_order_relaxed) + batch_size, std::memory_order_release);
  return out;
}

}  // namespace pp
