// One env's episode bookkeeping: the autoreset state machine (when a job resets instead of steps),
// the episode statistics (info["episode"]) and same_step's copy of the final observation.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

#include "output_block.h"
#include "output_layout.h"

namespace pp {

// What happens after an episode ends, as Gymnasium 1.x names it.
enum class AutoresetMode {
  kNextStep,  // the next step resets the env (and returns the reset's observation)
  kSameStep,  // the step that ends the episode resets too; the final observation goes to final:*
  kDisabled,  // the env must be reset explicitly
};

// "next_step", "same_step" or "disabled"; anything else throws std::invalid_argument.
AutoresetMode ParseAutoresetMode(const std::string& name);

// Written by the thread running the env's job; read by the API thread once the job's result was
// received (the batch hand-off orders the two).
class Episode {
 public:
  // Whether a job resets the env rather than steps it: a reset was asked for, the env never was
  // reset (its first step resets it, as EnvPool's does, in every mode), or its episode is over and
  // autoreset is on. (In same_step mode an episode is left over only by an env that raised.)
  bool ResetDue(bool reset_asked, AutoresetMode mode) const {
    return reset_asked || !ever_reset_ || (over_ && mode != AutoresetMode::kDisabled);
  }
  // Whether the step that ended an episode resets the env inside the same job.
  static bool ResetsInStep(bool done, AutoresetMode mode) { return done && mode == AutoresetMode::kSameStep; }

  // Throws std::invalid_argument, naming env_id, when a step of this env cannot be sent: its
  // episode is over and autoreset is disabled. (A step of an env never reset is sent: it resets.)
  void CheckStep(int env_id, AutoresetMode mode) const {
    // The mode first: over_ is on a line the running thread writes (pool.h, EnvState).
    if (mode == AutoresetMode::kDisabled && over_) ThrowCannotStep(env_id);
  }
  bool ever_reset() const { return ever_reset_; }

  // A new episode began (a reset). `timed`: episode stats are on, so its start time is read.
  void Begin(bool timed) {
    ever_reset_ = true;
    over_ = false;
    return_ = 0.0;
    length_ = 0;
    if (timed) start_ = std::chrono::steady_clock::now();
  }
  void Count(double reward) {
    return_ += reward;
    length_ += 1;
  }
  // After a step that did not reset: whether it ended the episode.
  void SetOver(bool over) { over_ = over; }
  // The env raised: its state is unknown, so its next job resets it. A failed first reset counts
  // as a reset asked for, so the env's next step (re)resets it rather than being refused.
  void Fail() {
    ever_reset_ = true;
    over_ = true;
  }

  // info["episode"] of one row: the return, length and time of the episode this step ended, or
  // zeros, and the "_episode" mask.
  void WriteStats(const OutputBlock& block, const OutputFields& f, int row, bool done) const {
    double t = 0.0;
    if (done) {
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
      t = std::round(elapsed.count() * 1e6) / 1e6;  // Gymnasium rounds to microseconds
    }
    At<double>(block, f.episode_r, row) = done ? return_ : 0.0;
    At<int64_t>(block, f.episode_l, row) = done ? length_ : 0;
    At<double>(block, f.episode_t, row) = t;
    At<bool>(block, f.episode_mask, row) = done;
  }

 private:
  [[noreturn]] void ThrowCannotStep(int env_id) const;

  bool ever_reset_ = false;
  bool over_ = false;  // the last step terminated or truncated (or the env raised)
  double return_ = 0.0;
  int64_t length_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// same_step: copies row `row` of every state field that has a final copy into it, and sets the
// row's "_final" mask. Called before the reset inside the step overwrites the row.
void CopyFinalRow(const OutputBlock& block, const OutputFields& f, const BlockLayout& layout, int row);

}  // namespace pp
