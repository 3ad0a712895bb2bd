// The pool composes the parts: env ids checked, jobs queued and run, rows written
// through the output layout and the episode bookkeeping, and batches handed off by the ring.
#include "pool.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "job_clock.h"

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

// The batch a receiver waits for is complete: its caller is wanted back.
class BatchComplete final : public PauseSignal {
 public:
  BatchComplete(const OutputBlock* block, int batch_size) : block_(block), batch_size_(batch_size) {}
  bool Wanted() const override { return block_->rows_done.load(std::memory_order_relaxed) >= batch_size_; }

 private:
  const OutputBlock* block_;
  int batch_size_;
};

// The worker threads a pool of num_threads (resolved) makes: less the caller, which steps envs too;
// at least one in async mode, where the caller need not be waiting.
int NumWorkers(int num_threads, bool ordered) { return ordered ? num_threads - 1 : std::max(1, num_threads - 1); }

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

// Pool::t_pause_signal set for a scope (Recv's loop), restored whatever the scope throws.
class PauseScope {
 public:
  explicit PauseScope(const PauseSignal* signal) : saved_(Pool::t_pause_signal) { Pool::t_pause_signal = signal; }
  ~PauseScope() { Pool::t_pause_signal = saved_; }
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  const PauseSignal* saved_;
};

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
      // Twice the most jobs ever queued, so a push rarely meets a cell still being released; a lane
      // for the caller and one per worker.
      queue_(2 * static_cast<std::size_t>(options_.num_envs), 1 + NumWorkers(options_.num_threads, ring_.ordered())),
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

  // num_threads is resolved (PreparePool). The calling thread steps envs too while it waits, so it is
  // one of the threads: in sync mode a single env runs entirely on the caller, with no thread
  // hand-off at all. In async mode it helps in recv() (without a timeout), and while it is busy
  // elsewhere (the policy, in Python) the workers go on with the envs in flight: num_threads - 1
  // workers keep num_threads CPUs busy without oversubscribing them. At least one worker, since an
  // async caller need not be waiting.
  const int num_workers = NumWorkers(options_.num_threads, ring_.ordered());
  // Each lane starts with a contiguous share of the envs (not every lanes()-th env, which would give
  // one thread all envs of a kind when their cost follows their ids).
  for (int i = 0; i < num_envs; ++i) {
    envs_[static_cast<std::size_t>(i)].lane =
        static_cast<int>(static_cast<int64_t>(i) * queue_.lanes() / static_cast<int64_t>(num_envs));
  }
  workers_ = std::make_unique<WorkerPool>(num_workers, options_.thread_affinity_offset, &queue_, kCallerLane + 1,
                                          [this](int env_id, int lane) { RunWorkerJob(env_id, lane); });
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
    workers_->Stop();
    if (stand_in_) stand_in_->Stop();
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
  (void)workers_.release();
  (void)stand_in_.release();
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

void Pool::Reset(const int32_t* env_ids, int n, std::span<const uint64_t> seeds, bool caller_waits) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  CheckEnvIds(env_ids, n, "reset");
  CheckSeeds(seeds);
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.job = JobKind::kReset;
    s.reseed = !seeds.empty();
    if (s.reseed) s.seed = seeds[static_cast<std::size_t>(env_ids[k])];
  }
  Enqueue(env_ids, n, caller_waits);
}

OutputBlock* Pool::ResetNow(const int32_t* env_ids, int n, std::span<const uint64_t> seeds) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  CheckEnvIds(env_ids, n, "reset");
  CheckSeeds(seeds);
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.job = JobKind::kReset;
    s.reseed = !seeds.empty();
    if (s.reseed) s.seed = seeds[static_cast<std::size_t>(env_ids[k])];
  }
  return RunNow(env_ids, n, "reset");
}

OutputBlock* Pool::RunNow(const int32_t* env_ids, int n, const char* what) {
  // A batch's block holds batch_size rows; n may be more in async mode.
  OutputBlock* block = reset_blocks_ ? reset_blocks_->Acquire() : ring_.AcquireBlock();
  const int64_t stamp = queue_.Now();
  for (int k = 0; k < n; ++k) {
    envs_[static_cast<std::size_t>(env_ids[k])].forced = RowRef{block, k};
    PushJob(env_ids[k], stamp);
  }
  workers_->Wake(n - 1);
  while (block->rows_done.load(std::memory_order_acquire) < n) {
    if (closed_.load()) {
      // Close() waits for api_mu_ before it joins the workers, and one of them may still be
      // writing a row of this block: join them here (Stop is idempotent), then give the block back.
      workers_->Stop();
      // The stand-in takes jobs from the same queue: it may be writing a row of this block too.
      if (stand_in_made_.load(std::memory_order_acquire)) stand_in_->Stop();
      BlockFreeList::Release(block);
      throw ClosedError(std::string("the pool was closed during ") + what);
    }
    if (!workers_->RunOne(kCallerLane)) std::this_thread::yield();
  }
  if (spec_.max_num_players == 1) block->player_rows.store(n, std::memory_order_relaxed);
  return block;
}

void Pool::Render(const int32_t* env_ids, int n, uint8_t* frames) {
  CheckNotForked();
  std::lock_guard<std::mutex> lock(api_mu_);
  CheckOpen();
  std::size_t frame_bytes = 1;
  for (int d : RenderShape()) frame_bytes *= static_cast<std::size_t>(d);
  CheckEnvIds(env_ids, n, "render");
  for (int k = 0; k < n; ++k) {
    if (!envs_[static_cast<std::size_t>(env_ids[k])].episode.ever_reset()) {
      throw std::invalid_argument("env " + std::to_string(env_ids[k]) + ": render before reset; call reset() first");
    }
  }
  for (int k = 0; k < n; ++k) {
    envs_[static_cast<std::size_t>(env_ids[k])].env->Render(frames + static_cast<std::size_t>(k) * frame_bytes);
  }
}

void Pool::PushJob(int env_id, int64_t stamp) {
  // At most num_envs jobs are queued, but a push can still find its cell taken: a consumer that
  // claimed the item one lap earlier may not have marked the cell free yet (it was preempted).
  // That consumer is running or runnable, so waiting for it always ends.
  while (!queue_.TryPush(envs_[static_cast<std::size_t>(env_id)].lane, env_id, stamp)) std::this_thread::yield();
}

void Pool::Enqueue(const int32_t* env_ids, int n, bool caller_waits) {
  const bool ordered = ring_.ordered();
  for (int k = 0; k < n; ++k) {
    EnvState& s = envs_[static_cast<std::size_t>(env_ids[k])];
    s.pending.store(true, std::memory_order_relaxed);
    s.assigned_index = ordered ? ring_.AssignIndex() : -1;
  }
  sent_.store(sent_.load(std::memory_order_relaxed) + n, std::memory_order_release);
  const int64_t stamp = queue_.Now();
  for (int k = 0; k < n; ++k) PushJob(env_ids[k], stamp);
  // A waiting caller runs jobs itself, so one worker fewer is woken; but only in sync mode is it
  // sure to run them, as the batch it waits for holds every queued job. An async Recv returns the
  // first batch to finish, maybe before the caller ran anything, and a job no woken worker took
  // would stay queued until some later wake-up.
  workers_->Wake(caller_waits && ordered ? n - 1 : n);
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
  const OutputBlock* block = ring_.front();
  // While it waits, the caller runs queued jobs itself rather than sleep: in sync mode it is one of
  // the stepping threads; in async mode its core would otherwise idle, and a job it runs still
  // takes its row in finishing order. With a timeout it only waits (in async mode), so a long step
  // cannot hold it past the deadline. With poll_s it runs only jobs known to be quick, so that it
  // returns within about poll_s; until they are, the stand-in runs them.
  const bool may_help = ring_.ordered() || forever;
  bool help = may_help && (!polled || quick_jobs_.load(std::memory_order_relaxed));
  auto ready = [&] {
    return block->rows_done.load(std::memory_order_acquire) >= batch_size || closed_.load() ||
           (help && !queue_.EmptyApprox());
  };
  int64_t slice_end = 0;  // poll_s: when the caller, running jobs, returns (coarse clock)
  // Async: a long reset the caller runs stops halfway once this batch is complete, to go on on a
  // worker (RunJob), rather than hold the batch, and the workers waiting for the next actions,
  // until it ends.
  const BatchComplete batch_complete(block, batch_size);
  const PauseScope pause_scope(ring_.ordered() ? nullptr : &batch_complete);
  while (block->rows_done.load(std::memory_order_acquire) < batch_size) {
    CheckOpen();
    int env_id;
    bool own = false;
    if (help && queue_.TryPop(kCallerLane, &env_id, &own)) {
      if (own && !ring_.ordered() && HandOffLongReset(env_id)) continue;
      if (!polled) {
        RunJobs(env_id, kCallerLane);
        continue;
      }
      JobClock& clock = JobClock::ThisThread();
      const int64_t start = clock.Start();
      if (slice_end == 0) slice_end = start + static_cast<int64_t>(poll_s * 1e9);
      // A run of jobs (RunJobs) is timed as a whole, against as many slow jobs as ran one after
      // another: it holds the caller as long. A run of queued jobs (RunRun) ends with the slice.
      const Ran ran = RunJobs(env_id, kCallerLane, slice_end);
      const int64_t end = CoarseNanos();
      if (clock.Slow(start, end, ran.serial)) {
        // One slow job is enough: this caller waits from now on, until the workers see twice as
        // many quick steps in a row as last time.
        quick_streak_.store(0, std::memory_order_relaxed);
        quick_target_.store(std::min(2 * quick_target_.load(std::memory_order_relaxed), kMaxQuickStreak),
                            std::memory_order_relaxed);
        quick_jobs_.store(false, std::memory_order_relaxed);
        help = false;
      }
      if (end >= slice_end && block->rows_done.load(std::memory_order_acquire) < batch_size) return nullptr;
      continue;
    }
    if (polled && may_help && !help && !queue_.EmptyApprox()) WakeStandIn();
    // The batch is finishing on other threads: spin a little before sleeping on it.
    if (BatchRing::SpinUntil(ready)) continue;
    if (!polled) {
      if (forever) {
        ring_.Wait(ready);
      } else if (!ring_.WaitUntil(deadline, ready)) {
        throw timed_out();
      }
      continue;
    }
    auto until = std::chrono::steady_clock::now() + Seconds(poll_s);
    if (!forever) until = std::min(until, deadline);
    if (!ring_.WaitUntil(until, ready)) {
      if (!forever && until == deadline) throw timed_out();
      return nullptr;
    }
    help = may_help && quick_jobs_.load(std::memory_order_relaxed);
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
