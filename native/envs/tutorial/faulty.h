// Faulty-v0, the tutorial family's fault-injection env: it throws in Step or Reset, sleeps, or
// returns NaN at a chosen step, so the tests can drive every front-end and integration into faults.
#pragma once

#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/env.h"
#include "core/registry.h"

namespace pp::tutorial {

// A trivial, deterministic env whose faults are config keys. Each step earns reward 1; the episode
// terminates after `episode_length` steps. The observation says where the env is, so a test can
// check every row: [episode number, elapsed step, last action] (the episode number counts this
// env's Reset() calls, failed ones included; the last action is -1 after a reset).
//
// Faults apply to env `fault_env_id` only, or to every env when it is -1. Steps and resets are
// counted per env over its whole life (1 = its first), across episodes, so each fault but the
// sleep fires once:
//   raise_on_step  = k: the env's k-th Step() throws std::runtime_error (before writing anything);
//   raise_on_reset = k: the env's k-th Reset() throws (explicit or automatic resets alike);
//   nan_on_step    = k: the env's k-th step returns NaN in its observation, its reward or both
//                       (`nan_in`: "obs", "reward" or "both"), and is otherwise normal;
//   step_sleep_us  = t: every step of the faulty envs sleeps t microseconds (an env that takes long).
class Faulty final : public Env {
 public:
  static EnvSpec MakeSpec(const std::string& /*task_id*/, const Config& config) {
    if (config.GetInt("episode_length") < 1) throw std::invalid_argument("episode_length must be >= 1");
    if (config.GetInt("num_actions") < 2) throw std::invalid_argument("num_actions must be >= 2");
    const std::string& nan_in = config.GetString("nan_in");
    if (nan_in != "obs" && nan_in != "reward" && nan_in != "both") {
      throw std::invalid_argument("nan_in must be 'obs', 'reward' or 'both', got '" + nan_in + "'");
    }
    if (config.GetInt("step_sleep_us") < 0) throw std::invalid_argument("step_sleep_us must be >= 0");
    EnvSpec spec;
    spec.state.push_back(Box("obs", Dtype::kFloat32, {kObsSize}));
    spec.state.push_back(Box("info:steps", Dtype::kInt64, {}));  // Step() calls of this env so far
    spec.action.push_back(Discrete("action", config.GetInt("num_actions")));
    return spec;
  }

  Faulty(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_(spec.StateIndex("obs")),
        steps_field_(spec.StateIndex("info:steps")),
        action_(spec.ActionIndex("action")),
        episode_length_(spec.config.GetInt("episode_length")),
        faulty_(spec.config.GetInt("fault_env_id") < 0 || spec.config.GetInt("fault_env_id") == env_id),
        raise_on_step_(spec.config.GetInt("raise_on_step")),
        raise_on_reset_(spec.config.GetInt("raise_on_reset")),
        nan_on_step_(spec.config.GetInt("nan_on_step")),
        nan_obs_(spec.config.GetString("nan_in") != "reward"),
        nan_reward_(spec.config.GetString("nan_in") != "obs"),
        step_sleep_us_(spec.config.GetInt("step_sleep_us")) {}

  void Reset() override {
    ++resets_;
    if (faulty_ && resets_ == raise_on_reset_) {
      throw std::runtime_error("Faulty-v0: Reset() raised on this env's reset " + std::to_string(resets_) +
                               " (raise_on_reset)");
    }
    last_action_ = -1;
    Write(false);
  }

  StepResult Step(const Action& action) override {
    ++steps_;
    if (faulty_ && steps_ == raise_on_step_) {
      throw std::runtime_error("Faulty-v0: Step() raised on this env's step " + std::to_string(steps_) +
                               " (raise_on_step)");
    }
    if (faulty_ && step_sleep_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(step_sleep_us_));
    last_action_ = *action.Get<int64_t>(action_);
    const bool nan = faulty_ && steps_ == nan_on_step_;
    Write(nan && nan_obs_);
    StepResult result;
    result.reward = nan && nan_reward_ ? std::numeric_limits<double>::quiet_NaN() : 1.0;
    result.terminated = elapsed_step() >= episode_length_;
    result.truncated = !result.terminated && TimeLimitReached();
    return result;
  }

  static constexpr int kObsSize = 3;

 private:
  void Write(bool nan_obs) {
    Slot out = Allocate();
    float* obs = out.Get<float>(obs_);
    obs[0] = static_cast<float>(resets_);
    obs[1] = static_cast<float>(elapsed_step());
    obs[2] = static_cast<float>(last_action_);
    if (nan_obs) {
      for (int i = 0; i < kObsSize; ++i) obs[i] = std::numeric_limits<float>::quiet_NaN();
    }
    *out.Get<int64_t>(steps_field_) = steps_;
  }

  const int obs_, steps_field_, action_;
  const int64_t episode_length_;
  const bool faulty_;
  const int64_t raise_on_step_, raise_on_reset_, nan_on_step_;
  const bool nan_obs_, nan_reward_;
  const int64_t step_sleep_us_;
  int64_t resets_ = 0;  // Reset() calls so far, failed ones included
  int64_t steps_ = 0;   // Step() calls so far, failed ones included
  int64_t last_action_ = -1;
};

}  // namespace pp::tutorial
