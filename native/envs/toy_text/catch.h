// Catch-v0: EnvPool's catch (bsuite's game): a ball falls one row per step from a random column of
// the top row; the agent moves a paddle along the bottom row and scores +1 if it is under the ball.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"

namespace pp::toy_text {

// EnvPool registers Catch-v0 with a 10 x 5 board and no time limit (an episode is height - 1 steps).
inline Config CatchDefaults() {
  return Config{{"max_episode_steps", int64_t{0}}, {"height", int64_t{10}}, {"width", int64_t{5}}};
}

// Observation: the board, float32 (height, width), 1 where the ball and the paddle are, else 0.
// Action: 0 moves the paddle left, 1 keeps it, 2 moves it right.
inline EnvSpec CatchSpec(const std::string& /*task_id*/, const Config& config) {
  const int64_t height = config.GetInt("height"), width = config.GetInt("width");
  // A board of one row would never end an episode: the ball is already on the paddle's row.
  constexpr int64_t kMaxSide = 4096;
  if (height < 2 || height > kMaxSide || width < 1 || width > kMaxSide) {
    throw std::invalid_argument("Catch: height must be in [2, 4096] and width in [1, 4096], got " +
                                std::to_string(height) + " x " + std::to_string(width));
  }
  EnvSpec spec;
  spec.state = {Box("obs", Dtype::kFloat32, {static_cast<int>(height), static_cast<int>(width)}, {0.0}, {1.0})};
  spec.action = {Discrete("action", 3)};
  return spec;
}

class CatchEnv final : public Env {
 public:
  CatchEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        height_(static_cast<int>(spec.config.GetInt("height"))),
        width_(static_cast<int>(spec.config.GetInt("width"))) {}

  void Reset() override {
    ball_row_ = 0;
    // The only random draw: the ball's column, uniform over the width (np_random().integers(0, width)).
    ball_col_ = static_cast<int>(np_random().Integers(0, width_));
    paddle_ = width_ / 2;
    Write();
  }

  StepResult Step(const Action& action) override {
    const int64_t a = action.Get<int64_t>(action_index_)[0];
    paddle_ = std::clamp(paddle_ + static_cast<int>(a) - 1, 0, width_ - 1);
    ++ball_row_;
    StepResult result;
    if (ball_row_ == height_ - 1) {  // the ball reached the paddle's row
      result.terminated = true;
      result.reward = ball_col_ == paddle_ ? 1.0 : -1.0;
    }
    result.truncated = !result.terminated && TimeLimitReached();
    Write();
    return result;
  }

 private:
  void Write() {
    Slot out = Allocate();
    float* board = out.Get<float>(obs_index_);
    std::fill(board, board + static_cast<std::ptrdiff_t>(height_) * width_, 0.0f);  // slots are reused
    board[ball_row_ * width_ + ball_col_] = 1.0f;
    board[(height_ - 1) * width_ + paddle_] = 1.0f;
  }

  const int obs_index_;
  const int action_index_;
  const int height_;
  const int width_;
  int ball_row_ = 0;
  int ball_col_ = 0;
  int paddle_ = 0;
};

}  // namespace pp::toy_text
