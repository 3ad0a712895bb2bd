// The pool composes the parts: options checked, env ids checked, jobs queued and run, rows written
// through the output layout and the episode bookkeeping, and batches handed off by the ring.
#include "pool.h"

#include <fcntl.h>
#include <time.h>
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

// Times jobs against kSlowJob: the coarse clock costs a fraction of steady_clock's read (the
// per-step cost that matters here), and its resolution (a scheduler tick, 1-10 ms) is added to the
// threshold, so a quick job that straddles a tick is never taken for slow.
int64_t CoarseNanos() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

int64_t SlowJobNanos() {
  static const int64_t nanos = [] {
    timespec res;
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    return std::chrono::nanoseconds(Pool::kSlowJob).count() + static_cast<int64_t>(res.tv_sec) * 1'000'000'000 +
           res.tv_nsec;
  }();
  return nanos;
}

// One thread's timing of its jobs. A job over SlowJobNanos() of wall time is slow only if its
// thread held on to it that long: the time the thread waited to run (preempted on a busy
// machine: the host's other work, a neighbour's burst) is not the job's, time it ran or blocked is.
// The kernel counts that wait per thread (the run delay in /proc/thread-self/schedstat). Reading it
// costs a system call, so Start reads it at most once per tick of the coarse clock, and Slow again
// only when a job's wall time is over the threshold. Start's reading predates the job by at most a
// tick, so at most a tick of earlier waiting is taken off the job's time. Where the file cannot be
// read, no waiting is taken off (a preempted job counts as slow, as it did before).
class JobClock {
 public:
  JobClock() : fd_(open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)) {}
  ~JobClock() {
    if (fd_ >= 0) close(fd_);
  }
  JobClock(const JobClock&) = delete;
  JobClock& operator=(const JobClock&) = delete;

  // The calling thread's clock.
  static JobClock& ThisThread() {
    static thread_local JobClock clock;
    return clock;
  }

  // Before a job: the coarse time now (the job's start).
  int64_t Start() {
    const int64_t now = CoarseNanos();
    if (now != mark_wall_) {
      mark_wall_ = now;
      mark_delay_ = RunDelay();
    }
    return now;
  }

  // Whether the job that started at `start` (Start) and ended at `end` (coarse time) was slow; for
  // `jobs` jobs run one after another, whether they took more than that many slow jobs' time.
  bool Slow(int64_t start, int64_t end, int jobs = 1) const {
    const int64_t limit = SlowJobNanos() + (jobs - 1) * std::chrono::nanoseconds(Pool::kSlowJob).count();
    if (end - start <= limit) return false;
    return end - start - (RunDelay() - mark_delay_) > limit;
  }

 private:
  // Nanoseconds this thread has waited on a run queue since it started, or 0 if unknown.
  int64_t RunDelay() const {
    if (fd_ < 0) return 0;
    char buf[96];
    const ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = '\0';
    // "<ns on the CPU> <ns waiting on a run queue> <time slices>"
    char* end = nullptr;
    std::strtoll(buf, &end, 10);
    if (end == buf) return 0;
    return std::strtoll(end, nullptr, 10);
  }

  int fd_;
  int64_t mark_wall_ = -1;  // the coarse time of the last run-delay reading
  int64_t mark_delay_ = 0;  // that reading
};

// Set by an async caller in Recv while it runs jobs: a long reset it runs may stop halfway
// (Env::PauseReset) once the batch it waits for is complete, and go on on a worker (RunJob).
// Null on every other thread and call.
thread_local const PauseSignal* t_pause_signal = nullptr;

// The batch a receiver waits for is complete: its caller is wanted back.
class BatchComplete final : public PauseSignal {
 public:
  BatchComplete(const OutputBlock* block, int batch_size) : block_(block), batch_size_(batch_size) {}
  bool Wanted() const override { return block_->rows_done.load(std::memory_order_relaxed) >= batch_size_; }

 private:
  const OutputBlock* block_;
  int batch_size_;
};

// t_pause_signal set for a scope (Recv's loop), restored whatever the scope throws.
class PauseScope {
 public:
  explicit PauseScope(const PauseSignal* signal) : saved_(t_pause_signal) { t_pause_signal = signal; }
  ~PauseScope() { t_pause_signal = saved_; }
  PauseScope(const PauseScope&) = delete;
  PauseScope& operator=(const PauseScope&) = delete;

 private:
  const PauseSignal* saved_;
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

Pool::Prepared Pool::Prepare(EnvSpec spec, PoolOptions options) {
  // The messages are the Python API's: these are its keyword arguments.
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
  return Prepared{std::move(spec), std::move(options), std::move(output), std::move(reset_blocks)};
}

Pool::Pool(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options)
    : Pool(std::move(task), Prepare(std::move(spec), std::move(options))) {}

Pool::Pool(std::shared_ptr<const TaskEntry> task, Prepared prepared)
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
      queue_(2 * static_cast<std::size_t>(options_.num_envs), 1 + NumWorkers(options_.num_threads, ring_.ordered())) {
  const int num_envs = options_.num_envs;
  envs_ = std::vector<EnvState>(static_cast<std::size_t>(num_envs));
  seen_.assign(static_cast<std::size_t>(num_envs), 0);
  const std::vector<std::size_t>& action_row_bytes = action_check_.row_bytes();
  for (int i = 0; i < num_envs; ++i) {
    EnvState& s = envs_[static_cast<std::size_t>(i)];
    const EnvSpec& env_spec = options_.env_specs.empty() ? spec_ : options_.env_specs[static_cast<std::size_t>(i)];
    s.env = task_->make_env(env_spec, i);
    EnvDriver driver(*s.env);
    driver.SetAllocator(this);
    driver.Seed(options_.seeds[static_cast<std::size_t>(i)]);
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

  // num_threads is resolved (Prepare). The calling thread steps envs too while it waits, so it is
  // one of the threads: in sync mode a single env runs entirely on the caller, with no thread
  // hand-off at all. In async mode it helps in recv() (without a timeout), and while it is busy
  // elsewhere (the policy, in Python) the workers go on with the envs in flight: num_threads - 1
  // workers keep num_threads CPUs busy without oversubscribing them (measured: HalfCheetah-v5, 2
  // CPUs, 16 envs / batch 8, 95% of two pinned raw loops with one worker, 85-87% with two). At
  // least one worker, since an async caller need not be waiting.
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
  CheckOpen();
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
  CheckOpen();
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
  CheckOpen();
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
  CheckOpen();
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
  CheckOpen();
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
  CheckOpen();
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

bool Pool::HandOffLongReset(int env_id) {
  // A caller that starts a long job (a dm_control task's reset settles its physics for 200 steps,
  // ~1.3 ms; an Atari reset plays its no-op starts) while the batch it waits for completes holds
  // that batch until the job ends; meanwhile the workers finish every other env in flight and then
  // idle (measured: CheetahRun-v1, 32 envs in batches of 16, the worker slept once per such reset,
  // ~1 ms each, 4-10% of its time). A worker that is not in a reset itself takes it instead, and
  // the caller goes on with short jobs and returns batches on time; a reset whose length is not
  // known yet, or with every worker in a reset (all envs resetting at once), the caller runs.
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (!queue_.affinity() || s.reset_nanos < std::chrono::nanoseconds(kLongReset).count() ||
      !s.episode.ResetDue(s.job == JobKind::kReset, options_.autoreset_mode) ||
      workers_in_reset_.load(std::memory_order_relaxed) >= workers_->num_threads()) {
    return false;
  }
  // To the lane of a worker (env ids spread them); a caller whose own lane runs dry takes it back
  // (not handed over again: only its own lane's jobs are), so nothing waits on a sleeping worker.
  s.lane = kCallerLane + 1 + env_id % workers_->num_threads();
  PushJob(env_id, queue_.Now());
  workers_->Wake(1);
  return true;
}

void Pool::SampleStep(std::chrono::steady_clock::duration took) {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(took).count();
  const int64_t old = step_nanos_.load(std::memory_order_relaxed);
  // A mean over about the last 8 samples (the first sample taken as it is); racing updates may
  // drop one sample: a hint.
  const int64_t mean = old == 0 ? std::max<int64_t>(ns, 1) : old + (ns - old) / 8;
  step_nanos_.store(mean, std::memory_order_relaxed);
  queue_.SetAffinity(mean >= std::chrono::nanoseconds(kAffinityMinStep).count());
}

void Pool::RunWorkerJob(int env_id, int lane) {
  if (quick_jobs_.load(std::memory_order_relaxed)) {
    RunJobs(env_id, lane);
    return;
  }
  // Resets do not count towards a quick streak: an env's reset is often much quicker than its step.
  // A run of posted jobs counts as quick only when the whole run is (a caller with poll_s runs
  // such runs whole).
  JobClock& clock = JobClock::ThisThread();
  const int64_t start = clock.Start();
  const Ran ran = RunJobs(env_id, lane);
  const int steps = ran.steps;
  if (clock.Slow(start, CoarseNanos(), ran.serial)) {
    quick_streak_.store(0, std::memory_order_relaxed);
  } else if (steps > 0 && quick_streak_.fetch_add(steps, std::memory_order_relaxed) + steps >=
                              quick_target_.load(std::memory_order_relaxed)) {
    quick_jobs_.store(true, std::memory_order_relaxed);
  }
}

bool Pool::PostJob(EnvState& s) {
  if (s.split == nullptr) return false;
  const bool reset = s.episode.ResetDue(s.job == JobKind::kReset, options_.autoreset_mode);
  if (reset && s.reseed) {
    // Seeded here, before the post that carries the seed; RunJob must not seed it again.
    EnvDriver(*s.env).Seed(s.seed);
    s.reseed = false;
  }
  try {
    return s.split->Post(reset, Action(s.action_rows.data()));
  } catch (const std::exception&) {
    return false;  // against the contract (Post must not throw): the job runs unposted
  }
}

Pool::Ran Pool::RunRun(int env_id, int lane, int64_t stop_at) {
  int ids[kMaxRun];
  ids[0] = env_id;
  int count = 1;
  // Sync mode, with enough queued for a run: the first job is timed (two steady_clock reads, ~40
  // ns) to decide on one.
  const std::size_t share =
      ring_.ordered() ? queue_.SizeApprox() / (2 * static_cast<std::size_t>(std::max(1, num_threads()))) : 0;
  const auto first_start = share > 0 ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  int steps = 0;
  OutputBlock* held = nullptr;  // the block whose rows this run has written, not yet counted
  int held_rows = 0;
  int i = 0;
  for (; i < count; ++i) {
    if (i > 0 && stop_at != 0 && CoarseNanos() >= stop_at) break;
    steps += envs_[static_cast<std::size_t>(ids[i])].job == JobKind::kStep ? 1 : 0;
    OutputBlock* block = RunJob(ids[i], lane);
    if (block == nullptr) continue;  // its reset paused: queued again
    if (block != held) {
      if (held != nullptr) ring_.FinishRow(held, held_rows);
      held = block;
      held_rows = 0;
    }
    ++held_rows;
    if (i == 0 && share > 0 && std::chrono::steady_clock::now() - first_start < kCheapJob) {
      count += queue_.TryPopMany(lane, ids + 1, static_cast<int>(std::min<std::size_t>(share, kMaxRun - 1)));
    }
  }
  if (held != nullptr) ring_.FinishRow(held, held_rows);
  if (i < count) {
    const int64_t stamp = queue_.Now();
    for (int k = i; k < count; ++k) PushJob(ids[k], stamp);
    workers_->Wake(count - i);
  }
  return {steps, i};
}

Pool::Ran Pool::RunJobs(int env_id, int lane, int64_t stop_at) {
  EnvState& first = envs_[static_cast<std::size_t>(env_id)];
  if (first.split == nullptr) return RunRun(env_id, lane, stop_at);
  if (!PostJob(first)) {
    const bool step = first.job == JobKind::kStep;
    ring_.FinishRow(RunJob(env_id, lane));
    return {step ? 1 : 0, 1};
  }
  // The envs posted by this run, in order. One run per thread at a time: RunJobs never nests.
  thread_local std::vector<int> posted;
  posted.clear();
  posted.push_back(env_id);
  // At most a batch: an async batch is written as soon as its rows are, not after more envs'.
  const auto max_posted = static_cast<std::size_t>(batch_size());
  int unposted = -1;  // a queued env that posted nothing: run after the posted ones
  int id;
  while (posted.size() < max_posted && queue_.TryPop(lane, &id)) {
    if (!PostJob(envs_[static_cast<std::size_t>(id)])) {
      unposted = id;
      break;
    }
    posted.push_back(id);
  }
  // Every posted job must be finished below, whatever Kick and AwaitPosted do: a failure of the
  // hand-off is the posted job's own (its Reset/Step reports it).
  try {
    for (int e : posted) envs_[static_cast<std::size_t>(e)].split->Kick();
    // Wait for the last posted first: a worker runs its requests in turn, so the earlier ones are
    // then mostly done, and the thread sleeps about once per run rather than once per env.
    envs_[static_cast<std::size_t>(posted.back())].split->AwaitPosted();
  } catch (const std::exception&) {
  }
  int steps = 0;
  for (int e : posted) {
    steps += envs_[static_cast<std::size_t>(e)].job == JobKind::kStep ? 1 : 0;
    ring_.FinishRow(RunJob(e, lane));
  }
  if (unposted >= 0) {
    steps += envs_[static_cast<std::size_t>(unposted)].job == JobKind::kStep ? 1 : 0;
    ring_.FinishRow(RunJob(unposted, lane));
  }
  return {steps, 1};  // the posted jobs overlap: timed as one job
}

void Pool::WakeStandIn() {
  if (!stand_in_made_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(api_mu_);
    if (closed_.load()) return;  // the caller's loop throws ClosedError next
    if (!stand_in_) {
      // In the caller's lane: it steps the caller's envs in its place.
      stand_in_ = std::make_unique<WorkerPool>(1, -1, &queue_, kCallerLane,
                                               [this](int id, int lane) { RunWorkerJob(id, lane); });
    }
    stand_in_made_.store(true, std::memory_order_release);
  }
  stand_in_->Wake(1);
}

void Pool::ClaimRow(EnvState& s) {
  if (s.forced.block != nullptr) {
    s.out = s.forced;
    s.forced = RowRef{};
  } else {
    s.out = ring_.Claim(s.assigned_index);
  }
  s.player_row = -1;
  s.num_players = 0;
}

Slot Pool::Allocate(int env_id, int num_players) {
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

inline void Pool::WriteRow(EnvState& s, const StepResult& r, bool episode_done) {
  WriteStepFields(*s.out.block, fields_, s.out.row, s.env->env_id(), s.env->elapsed_step(), r);
  if (options_.episode_stats) s.episode.WriteStats(*s.out.block, fields_, s.out.row, episode_done);
}

// The row of an env that raised holds zeros in every state field: the env may have written part
// of it, or nothing, which would leave an earlier batch's values there. Per-player fields: the
// player rows it claimed, if any (with one player, the env's row).
void Pool::WriteFailedRow(EnvState& s, const char* message) {
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

OutputBlock* Pool::RunJob(int env_id, int lane) {
  EnvState& s = envs_[static_cast<std::size_t>(env_id)];
  if (s.lane != lane) s.lane = lane;  // the sender reads this line: written only when it changes
  EnvDriver env(*s.env);
  const AutoresetMode mode = options_.autoreset_mode;
  s.out.block = nullptr;
  bool paused = false;
  try {
    if (s.episode.ResetDue(s.job == JobKind::kReset, mode)) {
      const bool resuming = s.resuming;
      s.resuming = false;
      // With the lanes' affinity on (HandOffLongReset's only case): timed (two clock reads per
      // reset; not a reset run in parts), and counted while a worker runs it. Off, neither (a
      // cheap env's reset is ~50 ns).
      const bool track = queue_.affinity();
      const bool worker = track && lane != kCallerLane;
      if (worker) workers_in_reset_.fetch_add(1, std::memory_order_relaxed);
      struct Done {
        EnvState& s;
        std::atomic<int>* in_reset;
        std::chrono::steady_clock::time_point start;  // default: untimed
        ~Done() {
          if (start != std::chrono::steady_clock::time_point{}) {
            s.reset_nanos =
                std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
          }
          if (in_reset != nullptr) in_reset->fetch_sub(1, std::memory_order_relaxed);
        }
      } done{s, worker ? &workers_in_reset_ : nullptr,
             track && !resuming ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}};
      if (s.reseed && !resuming) env.Seed(s.seed);
      // A split-phase env's reset is collected from elsewhere: it never pauses.
      paused = !env.Reset(s.split != nullptr ? nullptr : t_pause_signal);
      if (paused) {
        if (s.out.block != nullptr) {
          paused = false;
          throw std::logic_error("Reset() paused after Allocate()");
        }
        s.resuming = true;
        resets_paused_.fetch_add(1, std::memory_order_relaxed);
        done.start = {};  // a part of a reset: not its time
      } else {
        if (s.out.block == nullptr) throw std::logic_error("Reset() did not write its outputs (call Allocate())");
        s.episode.Begin(options_.episode_stats);
        WriteRow(s, StepResult{}, false);
      }
    } else {
      // Every 256th step of a thread is timed, for the lanes' affinity (kAffinityMinStep).
      static thread_local unsigned t_steps = 0;
      const bool timed = (t_steps++ & 255u) == 0;
      const auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      const StepResult r = env.Step(Action(s.action_rows.data()));
      if (timed) SampleStep(std::chrono::steady_clock::now() - start);
      if (s.out.block == nullptr) throw std::logic_error("Step() did not write its outputs (call Allocate())");
      const bool done = r.terminated || r.truncated;
      s.episode.Count(r.reward);
      WriteRow(s, r, done);
      if (Episode::ResetsInStep(done, mode)) {
        CopyFinalRow(*s.out.block, fields_, ring_.layout(), s.out.row);
        env.Reset();  // writes its observation into the same row
        At<int32_t>(*s.out.block, fields_.elapsed_step, s.out.row) = 0;
        s.episode.Begin(options_.episode_stats);
      } else {
        s.episode.SetOver(done);
      }
    }
  } catch (const std::exception& e) {
    // The env's state is unknown now: its result is this error, and its next step resets it.
    try {
      WriteFailedRow(s, e.what());
    } catch (...) {
      // Only allocation failure can land here; the row is still counted below.
    }
    s.episode.Fail();
  }
  OutputBlock* block = s.out.block;
  s.out.block = nullptr;
  if (paused) {
    // Queued again, on a worker's lane (env ids spread them), to go on there; the last touch of s
    // here, since a worker may run it as soon as it is queued.
    s.lane = kCallerLane + 1 + env_id % workers_->num_threads();
    PushJob(env_id, queue_.Now());
    workers_->Wake(1);
  }
  return block;
}

}  // namespace pp
