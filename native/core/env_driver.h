// The core's side of the env contract (env.h): EnvDriver runs one env (seeds it, hands it its
// output rows, counts its steps around Reset and Step), for the pool and for a standalone loop (a
// benchmark, a test), with SingleSlotAllocator as its rows. SplitPhaseEnv is the interface of an
// env whose work runs elsewhere (ProcessEnv), whose jobs the core can hand over in runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "env.h"

namespace pp {

// A view of one env: make one where needed (it holds a reference only).
class EnvDriver {
 public:
  explicit EnvDriver(Env& env) : env_(env) {}

  void SetAllocator(SlotAllocator* allocator) { env_.allocator_ = allocator; }
  // Restarts both streams, rng() and np_random(), from `seed`.
  void Seed(uint64_t seed) {
    env_.rng_.Seed(seed);
    env_.np_random_.Seed(seed);
    env_.Reseeded(seed);
  }
  // Runs Reset() from step 0. With `pause`, a long reset may stop halfway when the signal says
  // so (Env::PauseReset): false then, and the next Reset goes on from where it stopped.
  bool Reset(const PauseSignal* pause = nullptr) {
    env_.elapsed_step_ = 0;
    env_.pause_signal_ = pause;
    env_.paused_ = false;
    struct Clear {
      Env& env;
      ~Clear() { env.pause_signal_ = nullptr; }
    } clear{env_};
    env_.Reset();
    return !env_.paused_;
  }
  StepResult Step(const Action& action) {
    ++env_.elapsed_step_;
    return env_.Step(action);
  }

 private:
  Env& env_;
};

// An env whose Reset/Step run elsewhere (a worker process): Post starts the work that the next
// Reset() (`reset`) or Step(action) then collects, so that one thread can hand many envs' jobs
// over at once and wait for them together. The core calls Post after seeding and before
// Reset/Step; after posting a run of envs, Kick on each (the work must start even if nothing else
// happens), then AwaitPosted on any of them (block until its work is done: the core waits for a
// run in one sleep rather than one per env), then Reset/Step in the order of the posts. Post
// returns false when it posted nothing (that Reset/Step does the work itself) and must not throw:
// a failure to start belongs to the Reset/Step that follows.
class SplitPhaseEnv : public Env {
 public:
  using Env::Env;
  virtual bool Post(bool reset, const Action& action) = 0;
  virtual void Kick() = 0;
  virtual void AwaitPosted() = 0;
};

// One row of every state field, owned here: for running an env outside a pool.
class SingleSlotAllocator final : public SlotAllocator {
 public:
  explicit SingleSlotAllocator(const EnvSpec& spec) : spec_(spec) {
    for (const FieldSpec& f : spec.state) {
      const std::size_t rows = f.per_player ? static_cast<std::size_t>(spec.max_num_players) : 1;
      buffers_.emplace_back(f.RowBytes() * rows);
    }
    for (auto& b : buffers_) rows_.push_back(b.data());
  }
  Slot Allocate(int /*env_id*/, int num_players) override {
    if (num_players > spec_.max_num_players) throw std::out_of_range("num_players > max_num_players");
    return Slot(rows_.data(), num_players);
  }
  template <typename T>
  const T* Get(int index) const {
    return reinterpret_cast<const T*>(buffers_[static_cast<std::size_t>(index)].data());
  }

 private:
  const EnvSpec& spec_;
  std::vector<std::vector<std::byte>> buffers_;
  std::vector<std::byte*> rows_;
};

}  // namespace pp
