// The channel's layout, its futex protocol (see process_channel.h) and the worker liveness checks.
#include "process_channel.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <optional>

#include "spin.h"

namespace pp {
namespace {

#ifndef SYS_pidfd_open
constexpr long kSysPidfdOpen = 434;  // the same number on every Linux architecture
#else
constexpr long kSysPidfdOpen = SYS_pidfd_open;
#endif

constexpr uint32_t kMagic = 0x50504348;  // "PPCH"
constexpr std::size_t kAlign = 64;       // a cache line: no two processes' words share one

// Mailbox states (the futex word).
constexpr uint32_t kIdle = 0;
constexpr uint32_t kRequest = 1;  // sent, the parent has not slept on it
constexpr uint32_t kWaiting = 2;  // sent, the parent sleeps on it: the worker must wake it
constexpr uint32_t kDone = 3;

// How long a parent sleeps on a mailbox before it checks that the worker lives.
constexpr timespec kLivenessPoll{0, 50'000'000};

std::size_t RoundUp(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

// The futex words are shared between processes: no FUTEX_PRIVATE_FLAG.
long FutexWait(std::atomic<uint32_t>* word, uint32_t expected, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, timeout, nullptr, 0);
}
void FutexWake(std::atomic<uint32_t>* word, int n) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, n, nullptr, nullptr, 0);
}

using Clock = std::chrono::steady_clock;

int64_t NanosSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

timespec ToTimespec(double seconds) {
  seconds = std::max(seconds, 0.0);
  timespec t;
  t.tv_sec = static_cast<time_t>(seconds);
  t.tv_nsec = static_cast<long>((seconds - static_cast<double>(t.tv_sec)) * 1e9);
  return t;
}

}  // namespace

struct ProcessChannel::Header {
  uint32_t magic;
  uint32_t num_envs;
  uint64_t size;
  int32_t parent_pid;
  std::atomic<uint32_t> shutdown;
  std::atomic<uint32_t> worker_spin_us;  // the workers' spin budget (SetSpin)
};

struct alignas(kAlign) ProcessChannel::WorkerHeader {
  std::atomic<uint32_t> doorbell;  // futex word: bumped by each request
  std::atomic<uint32_t> sleeping;  // the worker sleeps (or is about to) on the doorbell
};

struct alignas(kAlign) ProcessChannel::MailboxHeader {
  std::atomic<uint32_t> state;
  uint32_t command;
  uint32_t seeded;
  uint32_t terminated;
  uint64_t seed;
  double reward;
  uint32_t truncated;
  uint32_t error_bytes;  // > 0: the env raised; the message is in the mailbox's error area
};

int ChannelShape::num_workers() const {
  return worker_of_env.empty() ? 0 : *std::max_element(worker_of_env.begin(), worker_of_env.end()) + 1;
}

ProcessChannel::ProcessChannel(ChannelShape shape, int fd, bool owner)
    : shape_(std::move(shape)), fd_(fd), owner_(owner) {
  if (shape_.num_envs < 1) throw std::invalid_argument("a channel needs at least one env");
  if (static_cast<int>(shape_.worker_of_env.size()) != shape_.num_envs) {
    throw std::invalid_argument("worker_of_env needs one worker per env");
  }
  for (int w : shape_.worker_of_env) {
    if (w < 0) throw std::invalid_argument("worker indices must be >= 0");
  }
  ComputeLayout();
  envs_of_worker_.resize(static_cast<std::size_t>(shape_.num_workers()));
  for (int e = 0; e < shape_.num_envs; ++e) {
    envs_of_worker_[static_cast<std::size_t>(shape_.worker_of_env[static_cast<std::size_t>(e)])].push_back(e);
  }
  pidfds_.assign(static_cast<std::size_t>(shape_.num_workers()), -1);
  dead_ = std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(shape_.num_workers()));
  for (int w = 0; w < shape_.num_workers(); ++w) dead_[static_cast<std::size_t>(w)].store(false);
  pids_.assign(static_cast<std::size_t>(shape_.num_workers()), 0);
  last_await_ns_ = std::make_unique<std::atomic<int64_t>[]>(static_cast<std::size_t>(shape_.num_workers()));
  for (int w = 0; w < shape_.num_workers(); ++w) last_await_ns_[static_cast<std::size_t>(w)].store(0);
  last_idle_ns_.assign(static_cast<std::size_t>(shape_.num_workers()), 0);
}

void ProcessChannel::ComputeLayout() {
  // Every field starts on an 8-byte boundary, so the worker's NumPy views are aligned.
  std::size_t offset = 0;
  for (std::size_t b : shape_.action_row_bytes) {
    action_field_offsets_.push_back(offset);
    offset += RoundUp(b, 8);
  }
  const std::size_t action_bytes = RoundUp(std::max<std::size_t>(offset, 1), kAlign);
  offset = 0;
  for (std::size_t b : shape_.state_row_bytes) {
    state_field_offsets_.push_back(offset);
    offset += RoundUp(b, 8);
  }
  const std::size_t state_bytes = RoundUp(std::max<std::size_t>(offset, 1), kAlign);
  action_in_mailbox_ = RoundUp(sizeof(MailboxHeader), kAlign);
  state_in_mailbox_ = action_in_mailbox_ + action_bytes;
  render_in_mailbox_ = state_in_mailbox_ + state_bytes;
  error_in_mailbox_ = render_in_mailbox_ + RoundUp(shape_.render_bytes, kAlign);
  mailbox_bytes_ = error_in_mailbox_ + kErrorBytes;
  mailboxes_offset_ =
      RoundUp(sizeof(Header), kAlign) + sizeof(WorkerHeader) * static_cast<std::size_t>(shape_.num_workers());
  size_ = mailboxes_offset_ + mailbox_bytes_ * static_cast<std::size_t>(shape_.num_envs);
}

std::shared_ptr<ProcessChannel> ProcessChannel::Create(const ChannelShape& shape) {
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "parallel_pool_channel", MFD_CLOEXEC));
  if (fd < 0) throw std::runtime_error(std::string("memfd_create failed: ") + std::strerror(errno));
  std::shared_ptr<ProcessChannel> channel;
  try {
    channel.reset(new ProcessChannel(shape, fd, true));
  } catch (...) {
    close(fd);
    throw;
  }
  if (ftruncate(fd, static_cast<off_t>(channel->size_)) != 0) {
    throw std::runtime_error(std::string("cannot size the channel: ") + std::strerror(errno));
  }
  channel->Map();
  Header& h = channel->header();
  h.num_envs = static_cast<uint32_t>(shape.num_envs);
  h.size = channel->size_;
  h.parent_pid = static_cast<int32_t>(getpid());
  h.magic = kMagic;  // a fresh memfd reads as zeros: every state is kIdle, every doorbell 0
  return channel;
}

std::shared_ptr<ProcessChannel> ProcessChannel::Attach(const ChannelShape& shape, int parent_pid, int fd) {
  const std::string path = "/proc/" + std::to_string(parent_pid) + "/fd/" + std::to_string(fd);
  const int own_fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (own_fd < 0) throw std::runtime_error("cannot open the pool's channel " + path + ": " + std::strerror(errno));
  std::shared_ptr<ProcessChannel> channel;
  try {
    channel.reset(new ProcessChannel(shape, own_fd, false));
  } catch (...) {
    close(own_fd);
    throw;
  }
  channel->Map();
  const Header& h = channel->header();
  if (h.magic != kMagic || h.size != channel->size_ || h.num_envs != static_cast<uint32_t>(shape.num_envs) ||
      h.parent_pid != parent_pid) {
    throw std::runtime_error("the pool's channel " + path + " does not have the layout this worker expects");
  }
  return channel;
}

void ProcessChannel::Map() {
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("cannot map the channel: ") + std::strerror(errno));
  base_ = static_cast<std::byte*>(p);
}

ProcessChannel::~ProcessChannel() {
  if (base_ != nullptr) munmap(base_, size_);
  if (fd_ >= 0) close(fd_);
  for (int p : pidfds_) {
    if (p >= 0) close(p);
  }
}

ProcessChannel::Header& ProcessChannel::header() const { return *reinterpret_cast<Header*>(base_); }
ProcessChannel::WorkerHeader& ProcessChannel::worker_header(int worker) const {
  return reinterpret_cast<WorkerHeader*>(base_ + RoundUp(sizeof(Header), kAlign))[worker];
}
ProcessChannel::MailboxHeader& ProcessChannel::mailbox(int env_id) const {
  return *reinterpret_cast<MailboxHeader*>(base_ + mailboxes_offset_ +
                                           mailbox_bytes_ * static_cast<std::size_t>(env_id));
}

std::size_t ProcessChannel::action_offset(int env_id, int field) const {
  const std::size_t f = field < static_cast<int>(action_field_offsets_.size())
                            ? action_field_offsets_[static_cast<std::size_t>(field)]
                            : 0;
  return mailboxes_offset_ + mailbox_bytes_ * static_cast<std::size_t>(env_id) + action_in_mailbox_ + f;
}
std::size_t ProcessChannel::state_offset(int env_id, int field) const {
  return mailboxes_offset_ + mailbox_bytes_ * static_cast<std::size_t>(env_id) + state_in_mailbox_ +
         state_field_offsets_.at(static_cast<std::size_t>(field));
}
std::size_t ProcessChannel::render_offset(int env_id) const {
  return mailboxes_offset_ + mailbox_bytes_ * static_cast<std::size_t>(env_id) + render_in_mailbox_;
}

void ProcessChannel::SetWorker(int worker, int pid) {
  const auto w = static_cast<std::size_t>(worker);
  if (w >= pidfds_.size()) throw std::out_of_range("no worker " + std::to_string(worker));
  const int pidfd = static_cast<int>(syscall(kSysPidfdOpen, pid, 0));
  if (pidfd < 0)
    throw std::runtime_error("cannot watch worker pid " + std::to_string(pid) + ": " + std::strerror(errno));
  if (pidfds_[w] >= 0) close(pidfds_[w]);
  pidfds_[w] = pidfd;
  pids_[w] = pid;
  // A restarted worker starts from idle mailboxes; none of its envs has a request in flight (the
  // parent received their failures before restarting it).
  for (int e : envs_of_worker_[w]) mailbox(e).state.store(kIdle);
  worker_header(worker).sleeping.store(0);
  dead_[w].store(false, std::memory_order_release);
}

bool ProcessChannel::WorkerDead(int worker) const {
  const int pidfd = pidfds_.at(static_cast<std::size_t>(worker));
  if (pidfd < 0) return true;
  pollfd p{pidfd, POLLIN, 0};
  return poll(&p, 1, 0) > 0;  // a pidfd is readable once its process has exited
}

int ProcessChannel::worker_pid(int worker) const { return pids_.at(static_cast<std::size_t>(worker)); }

WorkerDiedError ProcessChannel::Died(int worker) const {
  const std::vector<int>& envs = envs_of_worker_[static_cast<std::size_t>(worker)];
  std::string ids = envs.size() == 1 ? "env" : "envs";
  for (std::size_t k = 0; k < envs.size(); ++k) ids += (k ? ", " : " ") + std::to_string(envs[k]);
  return WorkerDiedError("worker process " + std::to_string(worker) + " (pid " + std::to_string(worker_pid(worker)) +
                         ", " + ids + ") has died; restart it with env.workers.restart()");
}

bool ProcessChannel::Request(int env_id, ChannelCommand command, bool seeded, uint64_t seed) {
  const int worker = worker_of(env_id);
  if (WorkerDead(worker)) {
    dead_[static_cast<std::size_t>(worker)].store(true, std::memory_order_release);
    throw Died(worker);
  }
  Post(env_id, command, seeded, seed);
  Ring(env_id);
  return Collect(env_id);
}

bool ProcessChannel::Post(int env_id, ChannelCommand command, bool seeded, uint64_t seed) {
  const int worker = worker_of(env_id);
  if (dead_[static_cast<std::size_t>(worker)].load(std::memory_order_acquire)) return false;
  MailboxHeader& s = mailbox(env_id);
  s.command = static_cast<uint32_t>(command);
  s.seeded = seeded ? 1 : 0;
  s.seed = seed;
  s.error_bytes = 0;
  s.state.store(kRequest, std::memory_order_seq_cst);
  worker_header(worker).doorbell.fetch_add(1, std::memory_order_seq_cst);
  return true;
}

void ProcessChannel::Ring(int env_id) {
  WorkerHeader& w = worker_header(worker_of(env_id));
  // Dekker with the worker's sleeping flag (both seq_cst): either this sees it sleeping and wakes
  // it, or the worker's re-read of the doorbell (after it set the flag) sees Post's bump and does
  // not sleep. The exchange lets only one ringer wake a sleeping worker: a later one that reads 0
  // comes after that ringer, whose wake the worker answers by re-scanning every mailbox, or after
  // the worker set the flag again, and then that re-read sees the later ringer's bump.
  if (w.sleeping.load(std::memory_order_seq_cst) != 0 && w.sleeping.exchange(0, std::memory_order_seq_cst) != 0) {
    FutexWake(&w.doorbell, 1);
  }
}

void ProcessChannel::Await(int env_id) {
  const int worker = worker_of(env_id);
  MailboxHeader& s = mailbox(env_id);
  const int64_t budget = int64_t{1000} * parent_spin_us_.load(std::memory_order_relaxed);
  if (budget > 0) {
    std::atomic<bool>& dead = dead_[static_cast<std::size_t>(worker)];
    auto finished = [&s, &dead] {
      const uint32_t state = s.state.load(std::memory_order_acquire);
      return state == kDone || state == kIdle || dead.load(std::memory_order_acquire);
    };
    if (finished()) return;  // no wait: nothing to learn about how long waits take
    std::atomic<int64_t>& last = last_await_ns_[static_cast<std::size_t>(worker)];
    const Clock::time_point start = Clock::now();
    if (last.load(std::memory_order_relaxed) > budget ||
        !SpinUntil(start + std::chrono::nanoseconds(budget), finished)) {
      AwaitSleeping(env_id);
    }
    last.store(NanosSince(start), std::memory_order_relaxed);
    return;
  }
  AwaitSleeping(env_id);
}

void ProcessChannel::AwaitSleeping(int env_id) {
  const int worker = worker_of(env_id);
  std::atomic<bool>& dead = dead_[static_cast<std::size_t>(worker)];
  MailboxHeader& s = mailbox(env_id);
  for (;;) {
    uint32_t state = s.state.load(std::memory_order_acquire);
    if (state == kDone || state == kIdle || dead.load(std::memory_order_acquire)) return;
    if (state == kRequest && !s.state.compare_exchange_strong(state, kWaiting, std::memory_order_acq_rel)) {
      continue;  // the worker finished meanwhile
    }
    if (FutexWait(&s.state, kWaiting, &kLivenessPoll) != 0 && errno == ETIMEDOUT && WorkerDead(worker)) {
      dead.store(true, std::memory_order_release);
      return;
    }
  }
}

bool ProcessChannel::Collect(int env_id) {
  Await(env_id);
  MailboxHeader& s = mailbox(env_id);
  if (s.state.load(std::memory_order_acquire) != kDone) {
    // Nobody will answer: the mailbox is idle again for a restarted worker.
    s.state.store(kIdle, std::memory_order_relaxed);
    throw Died(worker_of(env_id));
  }
  s.state.store(kIdle, std::memory_order_relaxed);
  return s.error_bytes == 0;
}

double ProcessChannel::reward(int env_id) const { return mailbox(env_id).reward; }
bool ProcessChannel::terminated(int env_id) const { return mailbox(env_id).terminated != 0; }
bool ProcessChannel::truncated(int env_id) const { return mailbox(env_id).truncated != 0; }
std::string ProcessChannel::error(int env_id) const {
  const MailboxHeader& s = mailbox(env_id);
  const auto* text = reinterpret_cast<const char*>(&s) + error_in_mailbox_;
  return std::string(text, std::min<std::size_t>(s.error_bytes, kErrorBytes));
}

void ProcessChannel::SetSpin(int parent_us, int worker_us) {
  if (parent_us < 0 || worker_us < 0) throw std::invalid_argument("spin budgets must be >= 0 microseconds");
  parent_spin_us_.store(parent_us, std::memory_order_relaxed);
  header().worker_spin_us.store(static_cast<uint32_t>(worker_us), std::memory_order_relaxed);
}

int ProcessChannel::worker_spin_us() const {
  return static_cast<int>(header().worker_spin_us.load(std::memory_order_relaxed));
}

void ProcessChannel::Shutdown() {
  header().shutdown.store(1, std::memory_order_seq_cst);
  for (int w = 0; w < shape_.num_workers(); ++w) {
    worker_header(w).doorbell.fetch_add(1, std::memory_order_seq_cst);
    FutexWake(&worker_header(w).doorbell, INT_MAX);
  }
}

bool ProcessChannel::WaitRequests(int worker, double timeout_s, std::vector<ChannelRequest>* out) {
  WorkerHeader& w = worker_header(worker);
  const Header& h = header();
  const timespec timeout = ToTimespec(timeout_s);
  int64_t& last_idle = last_idle_ns_.at(static_cast<std::size_t>(worker));
  std::optional<Clock::time_point> idle_since;  // when this wait first found no request
  for (;;) {
    if (h.shutdown.load(std::memory_order_acquire) != 0) return false;
    const uint32_t seen = w.doorbell.load(std::memory_order_seq_cst);
    for (int e : envs_of_worker_.at(static_cast<std::size_t>(worker))) {
      const MailboxHeader& s = mailbox(e);
      const uint32_t state = s.state.load(std::memory_order_acquire);
      if (state == kRequest || state == kWaiting) {
        out->push_back(ChannelRequest{e, static_cast<ChannelCommand>(s.command), s.seeded != 0, s.seed});
      }
    }
    if (!out->empty()) {
      if (idle_since) last_idle = NanosSince(*idle_since);
      return true;
    }
    const int64_t budget = int64_t{1000} * h.worker_spin_us.load(std::memory_order_relaxed);
    if (budget > 0) {
      if (!idle_since) idle_since = Clock::now();
      // A request bumps the doorbell after it is visible: a changed doorbell means a scan finds it.
      if (last_idle <= budget && SpinUntil(*idle_since + std::chrono::nanoseconds(budget), [&] {
            return w.doorbell.load(std::memory_order_acquire) != seen ||
                   h.shutdown.load(std::memory_order_relaxed) != 0;
          })) {
        continue;
      }
    }
    w.sleeping.store(1, std::memory_order_seq_cst);
    if (w.doorbell.load(std::memory_order_seq_cst) == seen) {
      const long r = FutexWait(&w.doorbell, seen, &timeout);
      if (r != 0 && errno == ETIMEDOUT && getppid() != h.parent_pid) {
        w.sleeping.store(0, std::memory_order_relaxed);
        return false;  // the parent is gone (this process was re-parented): exit, never orphaned
      }
    }
    w.sleeping.store(0, std::memory_order_relaxed);
  }
}

void ProcessChannel::Finish(int env_id, double reward, bool terminated, bool truncated) {
  MailboxHeader& s = mailbox(env_id);
  s.reward = reward;
  s.terminated = terminated ? 1 : 0;
  s.truncated = truncated ? 1 : 0;
  if (s.state.exchange(kDone, std::memory_order_acq_rel) == kWaiting) FutexWake(&s.state, 1);
}

void ProcessChannel::Fail(int env_id, const std::string& message) {
  MailboxHeader& s = mailbox(env_id);
  // Keep the end of a long message: a traceback's last line names the exception.
  const std::size_t n = std::min(message.size(), kErrorBytes);
  auto* text = reinterpret_cast<char*>(&s) + error_in_mailbox_;
  std::memcpy(text, message.data() + (message.size() - n), n);
  s.error_bytes = static_cast<uint32_t>(std::max<std::size_t>(n, 1));
  if (n == 0) text[0] = '?';
  s.reward = 0.0;
  s.terminated = s.truncated = 0;
  if (s.state.exchange(kDone, std::memory_order_acq_rel) == kWaiting) FutexWake(&s.state, 1);
}

}  // namespace pp
