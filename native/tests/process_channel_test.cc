// Tests of the Python backend's shared-memory channel: its layout, a request served by a forked
// worker process, an env's error text, shutdown, and a worker that dies with a request in flight.
#include "core/process_channel.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
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

// The worker's loop in a forked child (it uses the mapping it inherited): state[0] = 2 * action,
// reward = action, terminated when action == 3; an action of 7 is an env error, 9 kills the worker
// without an answer. Exits when the channel is shut down.
[[noreturn]] void ServeInChild(ProcessChannel& channel) {
  std::vector<ChannelRequest> requests;
  while (channel.WaitRequests(0, 0.05, &requests)) {
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

pid_t StartWorker(ProcessChannel& channel) {
  const pid_t pid = fork();
  if (pid == 0) ServeInChild(channel);
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
  channel->Shutdown();
  waitpid(pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
