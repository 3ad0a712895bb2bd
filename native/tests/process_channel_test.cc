// Tests of the Python backend's shared-memory channel: its layout, a request served by a forked
// worker process, an env's error text, shutdown, a worker that dies with a request in flight, and
// the spinning waits on both sides.
#include "core/process_channel.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

using pp::ChannelCommand;
using pp::ChannelRequest;
using pp::ChannelShape;
using pp::ProcessChannel;

// Two envs on one worker: an int32 action, an int64 and a float32[3] state field.
ChannelShape TwoEnvs() {
  ChannelShape shape;
  shape.num_envs = 2;
  shape.worker_of_env = {0, 0};
  shape.action_row_bytes = {4};
  shape.state_row_bytes = {8, 12};
  return shape;
}

// Four envs of the same rows, all on worker 0.
ChannelShape FourEnvsOnOneWorker() {
  ChannelShape shape = TwoEnvs();
  shape.num_envs = 4;
  shape.worker_of_env = {0, 0, 0, 0};
  return shape;
}

// Shuts the channel down and reaps its worker.
void ShutDown(ProcessChannel& channel, pid_t pid) {
  channel.Shutdown();
  waitpid(pid, nullptr, 0);
}

// The worker's loop in a forked child (it uses the mapping it inherited): state[0] = 2 * action,
// reward = action, terminated when action == 3; an action of 7 is an env error, 9 kills the worker
// without an answer. Exits when the channel is shut down.
// `poll_s`: how long the worker sleeps before it looks at its slots again unasked.
[[noreturn]] void ServeInChild(ProcessChannel& channel, double poll_s = 0.05) {
  std::vector<ChannelRequest> requests;
  while (channel.WaitRequests(0, poll_s, &requests)) {
    for (const ChannelRequest& r : requests) {
      int32_t action = 0;
      std::memcpy(&action, channel.base() + channel.action_offset(r.env_id, 0), 4);
      if (r.command == ChannelCommand::kReset) action = r.seeded ? static_cast<int32_t>(r.seed) : -1;
      if (action == 9) _exit(3);
      if (action == 7) {
        channel.Fail(r.env_id, std::string(20000, 'x') + "ValueError: seven");
        continue;
      }
      const int64_t doubled = 2 * static_cast<int64_t>(action);
      std::memcpy(channel.base() + channel.state_offset(r.env_id, 0), &doubled, 8);
      const float xs[3] = {1.5f, 2.5f, static_cast<float>(r.env_id)};
      std::memcpy(channel.base() + channel.state_offset(r.env_id, 1), xs, 12);
      channel.Finish(r.env_id, action, action == 3, false);
    }
    requests.clear();
  }
  _exit(0);
}

pid_t StartWorker(ProcessChannel& channel, double poll_s = 0.05) {
  const pid_t pid = fork();
  if (pid == 0) ServeInChild(channel, poll_s);
  channel.SetWorker(0, pid);
  return pid;
}

int64_t StateInt(const ProcessChannel& c, int env) {
  int64_t v;
  std::memcpy(&v, c.state_field(env, 0), 8);
  return v;
}

TEST(LayoutIsAlignedAndAttachChecksIt) {
  auto channel = ProcessChannel::Create(TwoEnvs());
  CHECK_EQ(channel->state_offset(0, 0) % 64, 0u);
  CHECK_EQ(channel->state_offset(0, 1) - channel->state_offset(0, 0), 8u);
  CHECK_EQ(channel->action_offset(1, 0) - channel->action_offset(0, 0),
           channel->state_offset(1, 0) - channel->state_offset(0, 0));
  auto same = ProcessChannel::Attach(TwoEnvs(), getpid(), channel->fd());
  CHECK_EQ(same->size_bytes(), channel->size_bytes());
  ChannelShape other = TwoEnvs();
  other.state_row_bytes = {8, 16000};
  CHECK_THROWS_WITH(std::runtime_error, ProcessChannel::Attach(other, getpid(), channel->fd()), "layout");
  CHECK_THROWS_WITH(std::runtime_error, ProcessChannel::Attach(TwoEnvs(), getpid(), 99999), "cannot open");
}

TEST(RequestsAreServedAndErrorsCarryTheirText) {
  auto channel = ProcessChannel::Create(TwoEnvs());
  const pid_t pid = StartWorker(*channel);
  CHECK(!channel->WorkerDead(0));
  CHECK(channel->Request(1, ChannelCommand::kReset, true, 21));
  CHECK_EQ(StateInt(*channel, 1), 42);
  for (int32_t a : {1, 3, 5}) {
    std::memcpy(channel->action_area(0), &a, 4);
    CHECK(channel->Request(0, ChannelCommand::kStep));
    CHECK_EQ(StateInt(*channel, 0), 2 * a);
    CHECK_EQ(channel->reward(0), static_cast<double>(a));
    CHECK_EQ(channel->terminated(0), a == 3);
    float xs[3];
    std::memcpy(xs, channel->state_field(0, 1), 12);
    CHECK_EQ(xs[1], 2.5f);
  }
  const int32_t seven = 7;
  std::memcpy(channel->action_area(1), &seven, 4);
  CHECK(!channel->Request(1, ChannelCommand::kStep));
  const std::string error = channel->error(1);
  CHECK_EQ(error.size(), ProcessChannel::kErrorBytes);  // cut, keeping the end
  CHECK(error.ends_with("ValueError: seven"));
  channel->Shutdown();
  int status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(pid, &status, 0);
  } while (reaped < 0 && errno == EINTR);
  CHECK_EQ(reaped, pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(channel->WorkerDead(0));
}

TEST(AWorkerThatDiesIsReportedAndCanBeReplaced) {
  auto channel = ProcessChannel::Create(TwoEnvs());
  pid_t pid = StartWorker(*channel);
  const int32_t nine = 9;
  std::memcpy(channel->action_area(0), &nine, 4);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(pp::WorkerDiedError, channel->Request(0, ChannelCommand::kStep), "has died");
  CHECK_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  CHECK(channel->WorkerDead(0));  // a zombie until reaped: still dead
  CHECK_THROWS_WITH(pp::WorkerDiedError, channel->Request(1, ChannelCommand::kReset),
                    "worker process 0 (pid " + std::to_string(pid) + ", envs 0, 1) has died");
  waitpid(pid, nullptr, 0);
  pid = StartWorker(*channel);
  const int32_t two = 2;
  std::memcpy(channel->action_area(0), &two, 4);
  CHECK(channel->Request(0, ChannelCommand::kStep));
  CHECK_EQ(StateInt(*channel, 0), 4);
  ShutDown(*channel, pid);
}

// A batch-level hand-off: requests posted to several envs and rung once are served together (one
// WaitRequests call returns them all, in env order), and each is collected with its own result.
TEST(PostedRequestsAreServedInOneWakeUp) {
  auto channel = ProcessChannel::Create(FourEnvsOnOneWorker());
  const pid_t pid = fork();
  if (pid == 0) {
    // Serves like ServeInChild, and writes into each env's state[1][0] how many requests the
    // WaitRequests call that returned it held.
    std::vector<ChannelRequest> requests;
    while (channel->WaitRequests(0, 5.0, &requests)) {  // wakes only when rung
      for (const ChannelRequest& r : requests) {
        int32_t action = 0;
        std::memcpy(&action, channel->base() + channel->action_offset(r.env_id, 0), 4);
        const int64_t doubled = 2 * static_cast<int64_t>(action);
        std::memcpy(channel->base() + channel->state_offset(r.env_id, 0), &doubled, 8);
        const float xs[3] = {static_cast<float>(requests.size()), 0.0f, static_cast<float>(r.env_id)};
        std::memcpy(channel->base() + channel->state_offset(r.env_id, 1), xs, 12);
        if (action == 7) {
          channel->Fail(r.env_id, "ValueError: seven");
        } else {
          channel->Finish(r.env_id, action, false, false);
        }
      }
      requests.clear();
    }
    _exit(0);
  }
  channel->SetWorker(0, pid);
  // Let the worker go to sleep first, so that the hand-off needs the ring.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int round = 0; round < 3; ++round) {
    for (int e = 0; e < 4; ++e) {
      const int32_t a = e == 2 && round == 1 ? 7 : 10 * round + e;
      std::memcpy(channel->action_area(e), &a, 4);
      CHECK(channel->Post(e, ChannelCommand::kStep));
    }
    for (int e = 0; e < 4; ++e) channel->Ring(e);  // the first wakes the worker, the others cost nothing
    channel->Await(3);
    for (int e = 0; e < 4; ++e) {
      const bool ok = channel->Collect(e);
      CHECK_EQ(ok, !(e == 2 && round == 1));  // a request that failed fails alone
      if (!ok) {
        CHECK(channel->error(e).ends_with("ValueError: seven"));
        continue;
      }
      CHECK_EQ(StateInt(*channel, e), 2 * (10 * round + e));
      CHECK_EQ(channel->reward(e), static_cast<double>(10 * round + e));
      float xs[3];
      std::memcpy(xs, channel->state_field(e, 1), 12);
      CHECK_EQ(xs[0], 4.0f);  // all four in one wake-up
      CHECK_EQ(xs[2], static_cast<float>(e));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // asleep again
  }
  ShutDown(*channel, pid);
}

// A worker that dies in the middle of a posted batch: the requests it finished keep their results,
// every other one is reported as its death, the later ones at once (the death was seen), and a
// restarted worker serves the same envs again.
TEST(AWorkerThatDiesMidBatchFailsTheRestOfIt) {
  auto channel = ProcessChannel::Create(FourEnvsOnOneWorker());
  // Asleep until rung, so that it finds the whole batch at once (env 0 first).
  pid_t pid = StartWorker(*channel, 5.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int e = 0; e < 4; ++e) {
    const int32_t a = e == 1 ? 9 : e;  // env 1's request kills the worker
    std::memcpy(channel->action_area(e), &a, 4);
    CHECK(channel->Post(e, ChannelCommand::kStep));
  }
  channel->Ring(0);
  const auto start = std::chrono::steady_clock::now();
  channel->Await(3);           // returns: its worker is dead
  CHECK(channel->Collect(0));  // served before env 1's request killed the worker
  CHECK_EQ(StateInt(*channel, 0), 0);
  for (int e = 1; e < 4; ++e) {
    CHECK_THROWS_WITH(pp::WorkerDiedError, channel->Collect(e), "envs 0, 1, 2, 3) has died");
  }
  CHECK_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  CHECK(!channel->Post(0, ChannelCommand::kStep));  // known dead: nothing is posted
  CHECK_THROWS_WITH(pp::WorkerDiedError, channel->Request(0, ChannelCommand::kStep), "has died");
  waitpid(pid, nullptr, 0);
  pid = StartWorker(*channel);
  for (int e = 0; e < 4; ++e) {
    const int32_t a = 10 + e;  // (7 and 9 are faults)
    std::memcpy(channel->action_area(e), &a, 4);
    CHECK(channel->Post(e, ChannelCommand::kStep));
  }
  for (int e = 0; e < 4; ++e) channel->Ring(e);
  for (int e = 0; e < 4; ++e) {
    CHECK(channel->Collect(e));
    CHECK_EQ(StateInt(*channel, e), 2 * (10 + e));
  }
  ShutDown(*channel, pid);
}

// Both sides spinning (SetSpin): back-to-back requests are served without a ring finding the worker
// asleep; after a gap longer than the budget the worker sleeps and the ring still wakes it; a
// worker that dies while the parent spins is reported as when it sleeps.
TEST(SpinningWaitsServeEveryRequestAndStillSeeADeath) {
  auto channel = ProcessChannel::Create(TwoEnvs());
  CHECK_THROWS_WITH(std::invalid_argument, channel->SetSpin(-1, 0), ">= 0");
  CHECK_EQ(channel->parent_spin_us(), 0);
  channel->SetSpin(1000, 200);
  CHECK_EQ(channel->parent_spin_us(), 1000);
  CHECK_EQ(channel->worker_spin_us(), 200);
  pid_t pid = StartWorker(*channel, 5.0);  // wakes only when rung (or when it spins)
  for (int round = 0; round < 2000; ++round) {
    const int env = round % 2;
    const int32_t a = 10 + round % 1000;  // (3, 7 and 9 mean something to the worker)
    std::memcpy(channel->action_area(env), &a, 4);
    CHECK(channel->Request(env, ChannelCommand::kStep));
    CHECK_EQ(StateInt(*channel, env), 2 * static_cast<int64_t>(a));
    CHECK_EQ(channel->reward(env), static_cast<double>(a));
    // A gap well past the worker's budget now and then: it goes to sleep, and the next request's
    // ring must wake it (the adaptive spin then sleeps at once, until a wait is short again).
    if (round % 500 == 499) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int32_t die = 9;
  std::memcpy(channel->action_area(1), &die, 4);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(pp::WorkerDiedError, channel->Request(1, ChannelCommand::kStep), "has died");
  CHECK_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  waitpid(pid, nullptr, 0);
  pid = StartWorker(*channel);
  const int32_t a = 11;
  std::memcpy(channel->action_area(1), &a, 4);
  CHECK(channel->Request(1, ChannelCommand::kStep));
  CHECK_EQ(StateInt(*channel, 1), 22);
  channel->SetSpin(0, 0);  // off again: the plain sleeping waits
  CHECK(channel->Request(0, ChannelCommand::kStep));
  ShutDown(*channel, pid);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
