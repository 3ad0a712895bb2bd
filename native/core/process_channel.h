// The shared-memory channel between a pool and the worker processes that run its Python envs: one
// mailbox per env (an action area, an output area, a result, a futex word) and one doorbell per worker.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pp {

// The commands a pool sends to an env's worker.
enum class ChannelCommand : uint32_t { kStep = 1, kReset = 2, kRender = 3 };

// An env's worker process died: the env cannot run until the worker is restarted.
struct WorkerDiedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The sizes that fix a channel's layout; the parent and its workers build the channel from the same.
struct ChannelShape {
  int num_envs = 1;
  // worker_of_env: env i is served by worker process worker_of_env[i].
  std::vector<int> worker_of_env;
  std::vector<std::size_t> action_row_bytes;  // one per action field, in spec order
  std::vector<std::size_t> state_row_bytes;   // one per state field, in spec order
  std::size_t render_bytes = 0;               // one RGB frame; 0: the envs do not render
  int num_workers() const;
};

// One env's mailbox as the worker sees it after WaitRequests: which command, and the seed a reset takes.
struct ChannelRequest {
  int env_id = 0;
  ChannelCommand command = ChannelCommand::kStep;
  bool seeded = false;
  uint64_t seed = 0;
};

// The channel lives in one memfd mapping: the parent creates it, each worker maps the same file
// (/proc/<parent pid>/fd/<fd>), so nothing is left in /dev/shm whatever kills whom.
//
// Protocol of one request (env mailbox state, a futex word shared by both processes):
//   parent: Post: writes the action (or seed), state = kRequest, bumps the worker's doorbell.
//           Ring: wakes the worker if it sleeps on its doorbell (one futex wake however many
//           requests were posted since it went to sleep). Collect: waits for state == kDone
//           (state = kWaiting while it sleeps on it, so the worker wakes it only then), and sets
//           state = kIdle. Request is the three in a row; a thread with several envs' jobs posts
//           them all, rings each worker once and then collects them (a batch-level hand-off).
//   worker: WaitRequests returns the envs in kRequest/kWaiting; it runs them and Finish()es each:
//           writes the outputs and result, state = kDone, a futex wake if the parent sleeps.
// A parent waiting on a worker that died (pidfd readable) gets WorkerDiedError, never a hang.
//
// Spinning (SetSpin): a wake-up through a futex costs a system call on each side and, on a VM, an
// inter-processor interrupt whose latency (tens of microseconds) is often longer than a whole
// batch of a cheap env's steps. With a spin budget, a parent that awaits a worker, and a worker
// that waits for its next request, first poll the shared word for up to that many microseconds,
// but only when the last wait of that kind ended within the budget (an adaptive spin: a worker
// behind a slow policy, or a slow env's batch, sleeps at once, and wastes nothing). A spinner
// must have a core to itself, or it takes the time of the process it waits for: the pool turns
// spinning on only when its waiting threads and its workers fit the CPUs (python_envs.py).
class ProcessChannel {
 public:
  // Parent side: creates the memfd and maps it.
  static std::shared_ptr<ProcessChannel> Create(const ChannelShape& shape);
  // Worker side: maps the parent's channel (`fd` in process `parent_pid`) and checks its layout.
  static std::shared_ptr<ProcessChannel> Attach(const ChannelShape& shape, int parent_pid, int fd);
  ~ProcessChannel();
  ProcessChannel(const ProcessChannel&) = delete;
  ProcessChannel& operator=(const ProcessChannel&) = delete;

  const ChannelShape& shape() const { return shape_; }
  int fd() const { return fd_; }
  std::size_t size_bytes() const { return size_; }
  std::byte* base() const { return base_; }
  // Byte offsets into the mapping, for NumPy views on the worker's side.
  std::size_t action_offset(int env_id, int field) const;
  std::size_t state_offset(int env_id, int field) const;
  std::size_t render_offset(int env_id) const;

  // ---- parent side ----
  // The worker serving env ids [first, end): its pid, watched through a pidfd. Before any request
  // to its envs, and again after a restart (the mailboxes of its envs are made idle).
  void SetWorker(int worker, int pid);
  // Whether the worker's process has exited (it may be a zombie not yet reaped).
  bool WorkerDead(int worker) const;
  int worker_pid(int worker) const;
  // Sends `command` to env_id's worker and waits for the result; false when the env raised
  // (error() holds its message). Throws WorkerDiedError when the worker is or becomes dead.
  bool Request(int env_id, ChannelCommand command, bool seeded = false, uint64_t seed = 0);
  // Request in three parts, for a thread that hands a worker several requests at once. Post: the
  // request is visible to the worker (no system call); false, posting nothing, when the worker is
  // known to be dead (Request then reports it). Ring: wakes env_id's worker if it sleeps (a
  // system call only then, and once per sleep however many threads ring). Await: waits until the
  // posted request is done or its worker is found dead. Collect: Await, then the result as
  // Request's (true, or false when the env raised; WorkerDiedError when it will never come), and
  // the mailbox is idle again. Each posted request must be collected before env_id's next Post.
  bool Post(int env_id, ChannelCommand command, bool seeded = false, uint64_t seed = 0);
  void Ring(int env_id);
  void Await(int env_id);
  bool Collect(int env_id);
  std::byte* action_area(int env_id) const { return base_ + action_offset(env_id, 0); }
  const std::byte* state_field(int env_id, int field) const { return base_ + state_offset(env_id, field); }
  const std::byte* render_area(int env_id) const { return base_ + render_offset(env_id); }
  double reward(int env_id) const;
  bool terminated(int env_id) const;
  bool truncated(int env_id) const;
  std::string error(int env_id) const;
  // Asks every worker to exit (WaitRequests returns false) and wakes them.
  void Shutdown();
  // The spin budgets, in microseconds (0: never spin): the parent's, awaiting a posted request,
  // and the workers' (read by every worker from the shared header), waiting for a request.
  void SetSpin(int parent_us, int worker_us);
  int parent_spin_us() const { return parent_spin_us_.load(std::memory_order_relaxed); }
  int worker_spin_us() const;

  // ---- worker side ----
  // Waits (up to timeout_s per sleep, then checks that the parent still lives) for requests to
  // the envs of `worker` and appends them to `out`. Returns false when the worker should exit:
  // Shutdown() was called or the parent process is gone.
  bool WaitRequests(int worker, double timeout_s, std::vector<ChannelRequest>* out);
  // Completes env_id's request: a result, or the error text of an env that raised.
  void Finish(int env_id, double reward, bool terminated, bool truncated);
  void Fail(int env_id, const std::string& message);

  // Room for an error message (a traceback); a longer one is cut, keeping its end (the exception).
  static constexpr std::size_t kErrorBytes = 16384;

 private:
  struct Header;
  struct WorkerHeader;
  struct MailboxHeader;
  ProcessChannel(ChannelShape shape, int fd, bool owner);
  void ComputeLayout();
  Header& header() const;
  WorkerHeader& worker_header(int worker) const;
  MailboxHeader& mailbox(int env_id) const;
  int worker_of(int env_id) const { return shape_.worker_of_env[static_cast<std::size_t>(env_id)]; }
  WorkerDiedError Died(int worker) const;
  void AwaitSleeping(int env_id);
  void Map();

  ChannelShape shape_;
  int fd_ = -1;
  bool owner_ = false;
  std::byte* base_ = nullptr;
  std::size_t size_ = 0;
  std::size_t mailboxes_offset_ = 0, mailbox_bytes_ = 0;
  std::size_t action_in_mailbox_ = 0, state_in_mailbox_ = 0, render_in_mailbox_ = 0, error_in_mailbox_ = 0;
  std::vector<std::size_t> action_field_offsets_, state_field_offsets_;
  std::vector<std::vector<int>> envs_of_worker_;  // a worker scans only its own mailboxes
  std::vector<int> pidfds_;                       // parent side: one per worker, -1 before SetWorker
  // Parent side, one per worker: its death was seen (pidfd readable), so that the other envs of
  // a batch posted to it fail at once rather than each after a liveness poll. Cleared by SetWorker.
  std::unique_ptr<std::atomic<bool>[]> dead_;
  std::vector<int> pids_;
  // Parent side: the spin budget, and per worker how long the last await that had to wait took.
  std::atomic<int> parent_spin_us_{0};
  std::unique_ptr<std::atomic<int64_t>[]> last_await_ns_;
  // Worker side (one thread per worker process): how long each worker's last wait for a request took.
  std::vector<int64_t> last_idle_ns_;
};

}  // namespace pp
