// The base class every env derives from: Reset() and Step(action) that write outputs in place.
// An env knows nothing of threads, batches or Python; the core hands it a row to write into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "numpy_random.h"
#include "rng.h"
#include "spec.h"

namespace pp {

// Where one env writes its outputs for the current step: a row of every state field.
// Per-player fields get `num_players` consecutive rows.
class Slot {
 public:
  Slot() = default;
  // `rows` has one pointer per state field and must outlive the slot (the allocator owns it).
  Slot(std::byte* const* rows, int num_players) : rows_(rows), num_players_(num_players) {}

  // Pointer to this env's row of state field `index` (its first player's row for per-player fields).
  template <typename T>
  T* Get(int index) const {
    return reinterpret_cast<T*>(rows_[static_cast<std::size_t>(index)]);
  }
  int num_players() const { return num_players_; }

 private:
  std::byte* const* rows_ = nullptr;
  int num_players_ = 0;
};

// The action rows of one env for the current step. Per-player fields hold max_num_players rows.
class Action {
 public:
  Action() = default;
  // `rows` has one pointer per action field and must outlive the action (the pool owns it).
  explicit Action(const std::byte* const* rows) : rows_(rows) {}

  template <typename T>
  const T* Get(int index) const {
    return reinterpret_cast<const T*>(rows_[static_cast<std::size_t>(index)]);
  }

 private:
  const std::byte* const* rows_ = nullptr;
};

// What a step returns besides the state fields. The core writes these into the output itself, so
// that an auto-reset in the same step cannot overwrite them.
struct StepResult {
  double reward = 0.0;
  bool terminated = false;  // the MDP reached a terminal state
  bool truncated = false;   // the episode was cut short (time limit), the state is not terminal
};

// Hands out output rows. The pool implements it over its output blocks; a standalone loop (a
// benchmark, a test) can use SingleSlotAllocator below.
class SlotAllocator {
 public:
  virtual ~SlotAllocator() = default;
  virtual Slot Allocate(int env_id, int num_players) = 0;
};

// Whether the thread running an env's reset is wanted elsewhere now (Env::PauseReset): the pool's
// async caller, whose batch completed while it runs a long reset, would otherwise keep every
// worker waiting for its next actions until the reset ends.
class PauseSignal {
 public:
  virtual ~PauseSignal() = default;
  virtual bool Wanted() const = 0;
};

class Env {
 public:
  Env(const EnvSpec& spec, int env_id) : spec_(spec), env_id_(env_id) {}
  virtual ~Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  // Start a new episode: draw the initial state from rng() and write the observation through
  // Allocate(). Reward, terminated and truncated of a reset are 0/false, written by the core.
  // A long reset may stop halfway when PauseReset() says so (before Allocate()): the core then
  // calls Reset() again later, maybe on another thread, and it goes on from where it stopped.
  virtual void Reset() = 0;
  // Advance one step. Must write its outputs through Allocate() once it knows them (late, so a
  // batch holds the envs that finished first) and return reward, terminated and truncated.
  virtual StepResult Step(const Action& action) = 0;

  // Write the current frame as RGB uint8, row-major, spec().render_shape (height, width, 3).
  // Only tasks whose spec sets render_shape are asked; the core calls it while no step of this
  // env is in flight, on the caller's thread.
  virtual void Render(uint8_t* /*rgb*/) { throw std::logic_error(spec_.task_id + " cannot render"); }

  // Split-phase jobs, for an env whose Reset/Step run elsewhere (a worker process): Post starts the
  // work that the core's next call, Reset() (`reset`) or Step(action), then collects, so that one
  // thread can hand many envs' jobs over at once and wait for them together. The core calls Post
  // after seeding (Seed) and before BeginReset/BeginStep; after posting a run of envs, Kick on
  // each (the work must start even if nothing else happens), then AwaitPosted on any of them
  // (block until its work is done; the core calls it to wait for a run in one sleep rather than
  // one per env), then Reset/Step, in the same order as the posts. Post returns false when the
  // env has posted nothing (the default: its Reset/Step do the work themselves), and must not
  // throw: a failure to start belongs to the Reset/Step that follows.
  virtual bool Post(bool /*reset*/, const Action& /*action*/) { return false; }
  // Whether the env may post at all (asked once, when the pool is made): the core calls Post only
  // for such envs, so that the others' jobs pay nothing for the capability.
  virtual bool SplitPhase() const { return false; }
  virtual void Kick() {}
  virtual void AwaitPosted() {}

  // --- used by the core ---
  // Seeds both streams: rng() and np_random() restart from `seed`.
  void Seed(uint64_t seed) {
    rng_.Seed(seed);
    np_random_.Seed(seed);
    Reseeded(seed);
  }
  void SetAllocator(SlotAllocator* allocator) { allocator_ = allocator; }
  // The core counts steps: 0 after Reset, incremented before each Step.
  void BeginReset() { elapsed_step_ = 0; }
  void BeginStep() { ++elapsed_step_; }
  int elapsed_step() const { return elapsed_step_; }
  // Around a Reset() the running thread may leave halfway (Pool::RunJob): `signal` says when;
  // null: never. Clears paused().
  void SetPauseSignal(const PauseSignal* signal) {
    pause_signal_ = signal;
    paused_ = false;
  }
  // Whether the last Reset() stopped halfway (PauseReset returned true).
  bool paused() const { return paused_; }
  int env_id() const { return env_id_; }
  const EnvSpec& spec() const { return spec_; }

 protected:
  Rng& rng() { return rng_; }
  // NumPy's stream, np.random.default_rng(seed), for envs whose reference draws from a Gymnasium
  // env's np_random: the same seed and the same calls give the reference's episode (numpy_random.h).
  NumpyGenerator& np_random() { return np_random_; }
  // Called by Seed() after rng() and np_random() restart from `seed`: for an env whose randomness
  // lives elsewhere (a Python env in a worker process takes the seed on its next reset).
  virtual void Reseeded(uint64_t /*seed*/) {}
  // True on the step that reaches max_episode_steps: report it as `truncated`.
  bool TimeLimitReached() const { return spec_.max_episode_steps > 0 && elapsed_step_ >= spec_.max_episode_steps; }
  // For a long Reset() (dm_control's cheetah settles its physics for 200 steps, ~1.3 ms): asked
  // now and then inside it, before Allocate(); true means stop now, keeping the progress, and
  // return. Cheap (a null check; with a signal, one atomic load): ask every ~50 us of work.
  bool PauseReset() {
    if (pause_signal_ == nullptr || !pause_signal_->Wanted()) return false;
    paused_ = true;
    return true;
  }
  Slot Allocate(int num_players = 1) {
    if (allocator_ == nullptr) throw std::logic_error("env has no output allocator");
    return allocator_->Allocate(env_id_, num_players);
  }

 private:
  const EnvSpec& spec_;
  const int env_id_;
  Rng rng_;
  NumpyGenerator np_random_;
  SlotAllocator* allocator_ = nullptr;
  int elapsed_step_ = 0;
  const PauseSignal* pause_signal_ = nullptr;
  bool paused_ = false;
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
