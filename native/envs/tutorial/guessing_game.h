// The tutorial env, for env authors: a multi-player guessing game, commented line by line.
// Also what the core's tests drive: it can raise on a chosen step and sleep to vary step times.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/env.h"
#include "core/registry.h"

namespace pp::tutorial {

// Each step the env draws a secret digit in [0, num_actions). Every active player guesses; a
// correct guess earns 1. The episode terminates after `episode_length` steps. The number of
// active players is drawn at reset in [1, max_num_players] and stays fixed for the episode.
class GuessingGame final : public Env {
 public:
  // 1. The spec: built once per pool from the resolved config. It declares every field.
  static EnvSpec MakeSpec(const std::string& /*task_id*/, const Config& config) {
    EnvSpec spec;
    const auto players = static_cast<int>(config.GetInt("max_num_players"));
    const auto actions = config.GetInt("num_actions");
    if (players < 1) throw std::invalid_argument("max_num_players must be >= 1");
    if (actions < 2) throw std::invalid_argument("num_actions must be >= 2");
    spec.max_num_players = players;
    // Observation per player: [player index, last secret digit (-1 before the first step)].
    spec.state.push_back(PerPlayer(
        Box("obs", Dtype::kFloat32, {2}, {-1.0}, {static_cast<double>(std::max<int64_t>(players, actions))})));
    // Info per player: that player's reward. Info per env: how many players are active.
    spec.state.push_back(PerPlayer(Box("info:players.reward", Dtype::kFloat32, {})));
    spec.state.push_back(Box("info:num_players", Dtype::kInt32, {}));
    // Action per player: the guess. Per-player action arrays have max_num_players rows per env.
    spec.action.push_back(PerPlayer(Discrete("action", actions)));
    // Optional: a task that renders declares its frame shape (height, width, 3) and overrides Render.
    spec.render_shape = {kFrameSize, kFrameSize, 3};
    return spec;
  }

  // 2. Construction: look up field indices once, read the config once.
  GuessingGame(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_(spec.StateIndex("obs")),
        player_reward_(spec.StateIndex("info:players.reward")),
        num_players_field_(spec.StateIndex("info:num_players")),
        action_(spec.ActionIndex("action")),
        num_actions_(spec.config.GetInt("num_actions")),
        episode_length_(static_cast<int>(spec.config.GetInt("episode_length"))),
        raise_on_step_(static_cast<int>(spec.config.GetInt("raise_on_step"))),
        step_sleep_us_(spec.config.GetInt("step_sleep_us")) {}

  // 3. Reset: draw the initial state from this env's own rng() (never a global one), then write.
  void Reset() override {
    num_players_ = static_cast<int>(rng().UniformInt(1, spec().max_num_players));
    secret_ = -1;
    Write(nullptr);
  }

  // 4. Step: compute first, then Allocate() late and write; return reward/terminated/truncated.
  StepResult Step(const Action& action) override {
    if (elapsed_step() == raise_on_step_) {
      throw std::runtime_error("tutorial env raised on step " + std::to_string(raise_on_step_));
    }
    if (step_sleep_us_ > 0) {
      // Uneven step times (env id dependent) exercise async batching.
      std::this_thread::sleep_for(std::chrono::microseconds(step_sleep_us_ * (1 + env_id() % 4)));
    }
    secret_ = rng().UniformInt(0, num_actions_ - 1);
    const int64_t* guesses = action.Get<int64_t>(action_);  // max_num_players rows; first num_players_ used
    float rewards[kMaxPlayersOnStack];
    double total = 0.0;
    for (int p = 0; p < num_players_; ++p) {
      rewards[p] = guesses[p] == secret_ ? 1.0f : 0.0f;
      total += rewards[p];
    }
    Write(rewards);
    StepResult result;
    result.reward = total;
    result.terminated = elapsed_step() >= episode_length_;
    result.truncated = !result.terminated && TimeLimitReached();
    return result;
  }

  // 5. Render (optional): the current frame as RGB bytes. Here a flat colour that encodes the state:
  // red = last secret + 1, green = active players, blue = steps taken (mod 256).
  void Render(uint8_t* rgb) override {
    for (int i = 0; i < kFrameSize * kFrameSize; ++i) {
      rgb[3 * i] = static_cast<uint8_t>(secret_ + 1);
      rgb[3 * i + 1] = static_cast<uint8_t>(num_players_);
      rgb[3 * i + 2] = static_cast<uint8_t>(elapsed_step() % 256);
    }
  }

  static constexpr int kFrameSize = 8;
  static constexpr int kMaxPlayersOnStack = 64;  // per-step scratch; MakeSpec caps players below

 private:
  void Write(const float* rewards) {
    Slot out = Allocate(num_players_);  // rows for this env: one per active player
    float* obs = out.Get<float>(obs_);
    float* reward = out.Get<float>(player_reward_);
    for (int p = 0; p < num_players_; ++p) {
      obs[2 * p] = static_cast<float>(p);
      obs[2 * p + 1] = static_cast<float>(secret_);
      reward[p] = rewards ? rewards[p] : 0.0f;
    }
    *out.Get<int32_t>(num_players_field_) = num_players_;
  }

  const int obs_, player_reward_, num_players_field_, action_;
  const int64_t num_actions_;
  const int episode_length_, raise_on_step_;
  const int64_t step_sleep_us_;
  int num_players_ = 1;
  int64_t secret_ = -1;
};

}  // namespace pp::tutorial
