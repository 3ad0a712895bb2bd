// An env whose Reset/Step/Render run in a worker process (a Python gymnasium.Env), forwarded
// through a ProcessChannel; the pool steps it as any env, so every pool semantic holds unchanged.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "env.h"
#include "env_driver.h"
#include "process_channel.h"
#include "registry.h"

namespace pp {

class ProcessEnv final : public SplitPhaseEnv {
 public:
  ProcessEnv(const EnvSpec& spec, int env_id, std::shared_ptr<ProcessChannel> channel)
      : SplitPhaseEnv(spec, env_id), channel_(std::move(channel)) {}

  void Reset() override {
    if (posted_) {
      posted_ = false;
      Collect();
    } else {
      const bool seeded = seed_pending_;
      seed_pending_ = false;  // a reset takes a new seed once, as Gymnasium's reset(seed=...)
      Call(ChannelCommand::kReset, seeded);
    }
    WriteOutputs();
  }

  StepResult Step(const Action& action) override {
    if (posted_) {
      posted_ = false;
      Collect();
    } else {
      WriteAction(action);
      Call(ChannelCommand::kStep, false);
    }
    WriteOutputs();
    return StepResult{channel_->reward(env_id()), channel_->terminated(env_id()), channel_->truncated(env_id())};
  }

  // The request goes into the env's slot and its worker's doorbell is bumped, without a system
  // call; Kick wakes the worker (once, however many of its envs were posted), and the worker
  // steps every requested env of its own back to back.
  bool Post(bool reset, const Action& action) override {
    bool seeded = false;
    if (reset) {
      seeded = seed_pending_;
    } else {
      WriteAction(action);
    }
    posted_ =
        channel_->Post(env_id(), reset ? ChannelCommand::kReset : ChannelCommand::kStep, seeded, reset ? seed_ : 0);
    if (posted_ && reset) seed_pending_ = false;
    return posted_;
  }
  void Kick() override { channel_->Ring(env_id()); }
  void AwaitPosted() override { channel_->Await(env_id()); }

  void Render(uint8_t* rgb) override {
    if (channel_->shape().render_bytes == 0) Env::Render(rgb);  // throws: the task does not render
    Call(ChannelCommand::kRender, false);
    std::memcpy(rgb, channel_->render_area(env_id()), channel_->shape().render_bytes);
  }

 protected:
  void Reseeded(uint64_t seed) override {
    seed_ = seed;
    seed_pending_ = true;
  }

 private:
  void Call(ChannelCommand command, bool seeded) { Check(channel_->Request(env_id(), command, seeded, seed_)); }
  // The env raised in its worker: the pool reports the message (a traceback) as its error.
  void Check(bool ok) {
    if (!ok) throw std::runtime_error(channel_->error(env_id()));
  }
  void Collect() { Check(channel_->Collect(env_id())); }
  void WriteAction(const Action& action) {
    const ChannelShape& shape = channel_->shape();
    for (std::size_t f = 0; f < shape.action_row_bytes.size(); ++f) {
      std::memcpy(channel_->base() + channel_->action_offset(env_id(), static_cast<int>(f)),
                  action.Get<std::byte>(static_cast<int>(f)), shape.action_row_bytes[f]);
    }
  }

  void WriteOutputs() {
    const Slot slot = Allocate();
    const ChannelShape& shape = channel_->shape();
    for (std::size_t f = 0; f < shape.state_row_bytes.size(); ++f) {
      std::memcpy(slot.Get<std::byte>(static_cast<int>(f)), channel_->state_field(env_id(), static_cast<int>(f)),
                  shape.state_row_bytes[f]);
    }
  }

  std::shared_ptr<ProcessChannel> channel_;
  uint64_t seed_ = 0;
  bool seed_pending_ = false;
  bool posted_ = false;  // Post sent the current job's request: Reset/Step collect it
};

// The TaskEntry of a pool of ProcessEnvs: not registered (its spec comes from the Python env's
// spaces at run time), handed straight to the Pool.
inline std::shared_ptr<const TaskEntry> MakeProcessTask(const std::string& task_id,
                                                        std::shared_ptr<ProcessChannel> channel) {
  auto task = std::make_shared<TaskEntry>();
  task->task_id = task_id;
  task->family = "python";
  task->make_env = [channel = std::move(channel)](const EnvSpec& spec, int env_id) -> std::unique_ptr<Env> {
    return std::make_unique<ProcessEnv>(spec, env_id, channel);
  };
  return task;
}

}  // namespace pp
