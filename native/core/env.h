// The contract of an env: derive from Env, implement Reset() and Step() (and Render() if the task
// renders), and write every output through Allocate(). An env knows nothing of threads, batches or
// Python. native/envs/README.md says what an author must and may use; the core's side is
// env_driver.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>

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
  // This env's row of state field `index` (its first player's row for per-player fields).
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
  explicit Action(const std::byte* const* rows) : rows_(rows) {}
  template <typename T>
  const T* Get(int index) const {
    return reinterpret_cast<const T*>(rows_[static_cast<std::size_t>(index)]);
  }

 private:
  const std::byte* const* rows_ = nullptr;
};

// What a step returns besides the state fields; the core writes it into the output itself, so
// that an autoreset in the same step cannot overwrite it.
struct StepResult {
  double reward = 0.0;
  bool terminated = false;  // the MDP reached a terminal state
  bool truncated = false;   // the episode was cut short (time limit); the state is not terminal
};

// Hands out output rows (the pool; SingleSlotAllocator in env_driver.h for a standalone loop).
class SlotAllocator {
 public:
  virtual ~SlotAllocator() = default;
  virtual Slot Allocate(int env_id, int num_players) = 0;
};

// Whether the thread running a long reset is wanted elsewhere now (Env::PauseReset).
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

  // Start an episode: draw the initial state from rng() or np_random() and write the observation
  // through Allocate(). The core writes the reset's reward (0) and flags (false).
  virtual void Reset() = 0;
  // Advance one step: write the outputs through Allocate() once they are known (late, so that a
  // batch holds the envs that finished first) and return reward, terminated and truncated.
  virtual StepResult Step(const Action& action) = 0;
  // Write the current frame, RGB uint8 row-major of spec().render_shape (height, width, 3). Asked
  // only of tasks whose spec sets render_shape, while no step of this env is in flight.
  virtual void Render(uint8_t* /*rgb*/) { throw std::logic_error(spec_.task_id + " cannot render"); }
  // The env's internal state as named values, for code that rebuilds the reference env from it
  // (EnvPool's MiniGrid `_debug_states`). Asked while no step of this env is in flight.
  virtual Config DebugState() const { throw std::logic_error(spec_.task_id + " has no debug state"); }

  int env_id() const { return env_id_; }
  const EnvSpec& spec() const { return spec_; }
  // Steps since the last Reset() (the core counts them).
  int elapsed_step() const { return elapsed_step_; }

 protected:
  // The env's own stream, restarted from the pool's seed for the env.
  Rng& rng() { return rng_; }
  // NumPy's np.random.default_rng(seed), for envs that replay a Gymnasium env's np_random: the
  // same seed and the same calls give the reference's episode (numpy_random.h).
  NumpyGenerator& np_random() { return np_random_; }
  // Called after rng() and np_random() restart from `seed`, for an env whose randomness lives
  // elsewhere (a Python env in a worker process takes the seed on its next reset).
  virtual void Reseeded(uint64_t /*seed*/) {}
  // True on the step that reaches max_episode_steps: report it as `truncated`.
  bool TimeLimitReached() const { return spec_.max_episode_steps > 0 && elapsed_step_ >= spec_.max_episode_steps; }
  // For a long Reset() only (~50 us of work between asks): true means stop now, before Allocate(),
  // keeping the progress; the core calls Reset() again later, maybe on another thread, to go on.
  bool PauseReset() {
    if (pause_signal_ == nullptr || !pause_signal_->Wanted()) return false;
    paused_ = true;
    return true;
  }
  // This step's output rows; call it once the outputs are known.
  Slot Allocate(int num_players = 1) {
    if (allocator_ == nullptr) throw std::logic_error("env has no output allocator");
    return allocator_->Allocate(env_id_, num_players);
  }

 private:
  friend class EnvDriver;  // the core's way in (env_driver.h)
  const EnvSpec& spec_;
  const int env_id_;
  Rng rng_;
  NumpyGenerator np_random_;
  SlotAllocator* allocator_ = nullptr;
  int elapsed_step_ = 0;
  const PauseSignal* pause_signal_ = nullptr;
  bool paused_ = false;
};

}  // namespace pp
