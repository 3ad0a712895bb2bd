// The MPE env: one scenario's world stepped as mpe2's parallel_env steps it (every agent's action at
// once), one player per agent through the core's per-player rows.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pygame_raster.h"
#include "envs/mpe/adversarial.h"
#include "envs/mpe/cooperative.h"
#include "envs/mpe/scenario.h"
#include "envs/mpe/world_comm.h"

namespace pp::mpe {

// The scenario of a task, by mpe2's module name without its version ("simple_spread").
inline std::unique_ptr<Scenario> MakeScenario(const std::string& name, const Config& config) {
  if (name == "simple") return std::make_unique<Simple>();
  if (name == "simple_spread") return std::make_unique<Spread>(config);
  if (name == "simple_reference") return std::make_unique<Reference>(config);
  if (name == "simple_speaker_listener") return std::make_unique<SpeakerListener>();
  if (name == "simple_tag") return std::make_unique<Tag>(config);
  if (name == "simple_adversary") return std::make_unique<Adversary>(config);
  if (name == "simple_push") return std::make_unique<Push>();
  if (name == "simple_crypto") return std::make_unique<Crypto>();
  if (name == "simple_world_comm") return std::make_unique<WorldComm>(config);
  throw std::invalid_argument("unknown MPE scenario '" + name + "'");
}

// Per-player rows: player p of an env is agent p (mpe2's agent order), every agent every step.
//   obs                       float32 (max_obs_dim,): the agent's observation, zero-padded where
//                             agents' sizes differ (its true size: table "obs_dims")
//   info:players.reward       float64: the agent's reward (the env's "reward" is their sum)
//   info:players.agent_index  int32: p, so that a row says which agent it is in any batch order
//   action                    int64 Discrete(max n) or float32 Box(0, 1, (max dim,)): row p is agent
//                             p's action; an agent uses its first action_sizes[p] entries (continuous)
//                             or takes values below action_sizes[p] (discrete)
// Tables: "obs_dims", "action_sizes" (one per agent) and "agent_names" (each name's ASCII codes
// followed by a 0), for front-ends that key by agent (PettingZoo's).
class MpeEnv final : public Env {
 public:
  static EnvSpec MakeSpec(const std::string& scenario, const Config& config) {
    const auto max_cycles = config.GetInt("max_cycles");
    if (max_cycles < 1) throw std::invalid_argument("max_cycles must be >= 1");
    const bool continuous = config.GetBool("continuous_actions");
    // The spaces as mpe2 measures them: its observations of a reset world (their sizes do not depend
    // on the draw) and its action sizes from each agent's abilities.
    std::unique_ptr<Scenario> s = MakeScenario(scenario, config);
    World world;
    s->MakeWorld(world);
    NumpyGenerator rng(0);
    s->ResetWorld(world, rng);
    EnvSpec spec;
    std::vector<double> obs_dims, action_sizes, names;
    Obs obs;
    for (int i = 0; i < world.num_agents; ++i) {
      obs.clear();
      s->Observe(world, i, obs);
      obs_dims.push_back(static_cast<double>(obs.size()));
      action_sizes.push_back(ActionSize(world, world.agent(i), continuous));
      for (char ch : world.agent(i).name) names.push_back(static_cast<unsigned char>(ch));
      names.push_back(0);
    }
    const int max_obs = static_cast<int>(*std::max_element(obs_dims.begin(), obs_dims.end()));
    const int max_action = static_cast<int>(*std::max_element(action_sizes.begin(), action_sizes.end()));
    spec.max_num_players = world.num_agents;
    spec.max_episode_steps = static_cast<int>(max_cycles);
    spec.state.push_back(PerPlayer(Box("obs", Dtype::kFloat32, {max_obs})));
    spec.state.push_back(PerPlayer(Box("info:players.reward", Dtype::kFloat64, {})));
    spec.state.push_back(PerPlayer(
        Box("info:players.agent_index", Dtype::kInt32, {}, {0.0}, {static_cast<double>(world.num_agents - 1)})));
    if (continuous) {
      spec.action.push_back(PerPlayer(Box("action", Dtype::kFloat32, {max_action}, {0.0}, {1.0})));
    } else {
      spec.action.push_back(PerPlayer(Discrete("action", max_action)));
    }
    // mpe2 writes "<name> sends <word>" with pygame.freetype for every agent that speaks; that text is
    // not reproduced, so only the tasks whose agents are all silent render.
    bool silent = true;
    for (int i = 0; i < world.num_agents; ++i) silent = silent && world.agent(i).silent;
    if (silent) spec.render_shape = {kFrameSize, kFrameSize, 3};
    spec.render_fps = 10;  // SimpleEnv.metadata
    spec.tables["obs_dims"] = obs_dims;
    spec.tables["action_sizes"] = action_sizes;
    spec.tables["agent_names"] = names;
    return spec;
  }

  MpeEnv(const EnvSpec& spec, int env_id, std::string scenario)
      : Env(spec, env_id),
        scenario_(MakeScenario(scenario, spec.config)),
        continuous_(spec.config.GetBool("continuous_actions")),
        dynamic_rescaling_(spec.config.GetBool("dynamic_rescaling")),
        obs_(spec.StateIndex("obs")),
        reward_(spec.StateIndex("info:players.reward")),
        agent_index_(spec.StateIndex("info:players.agent_index")),
        action_(spec.ActionIndex("action")),
        obs_size_(spec.state[static_cast<std::size_t>(obs_)].shape[0]),
        action_row_(continuous_ ? spec.action[static_cast<std::size_t>(action_)].shape[0] : 1) {
    scenario_->MakeWorld(world_);
    for (double n : spec.tables.at("action_sizes")) action_sizes_.push_back(static_cast<int>(n));
    rewards_.resize(static_cast<std::size_t>(world_.num_agents));
    scratch_.reserve(static_cast<std::size_t>(obs_size_));
  }

  void Reset() override {
    scenario_->ResetWorld(world_, np_random());
    original_cam_range_ = CamRange();
    std::fill(rewards_.begin(), rewards_.end(), 0.0);
    Write();
  }

  // SimpleEnv.draw (its rgb_array frame): every entity a filled circle with a black one-pixel border,
  // in a view that scales with the farthest coordinate (and, with dynamic_rescaling, sizes scaled by
  // how far that is from where it was at reset), on white.
  void Render(uint8_t* rgb) override {
    namespace raster = pp::raster;
    raster::Surface screen(kFrameSize, kFrameSize);
    screen.Fill({255, 255, 255});
    const double cam_range = CamRange();
    const double scaling = 0.9 * original_cam_range_ / cam_range;
    constexpr int kHalf = kFrameSize / 2;
    for (const Entity& e : world_.entities) {
      // ((x / cam_range) * width // 2 * 0.9) + width // 2, NumPy's floor division of a float64
      const double x = std::floor((e.pos[0] / cam_range) * kFrameSize / 2) * 0.9 + kHalf;
      const double y = std::floor((e.pos[1] * -1 / cam_range) * kFrameSize / 2) * 0.9 + kHalf;
      const double radius = dynamic_rescaling_ ? e.size * 350 * scaling : e.size * 350;
      // entity.color * 200, which pygame truncates to ints
      const raster::Rgb color{static_cast<uint8_t>(e.color[0] * 200), static_cast<uint8_t>(e.color[1] * 200),
                              static_cast<uint8_t>(e.color[2] * 200)};
      raster::Circle(screen, color, {x, y}, radius);
      raster::CircleOutline(screen, {0, 0, 0}, {x, y}, radius);
    }
    screen.WriteRgb(rgb, false, 0, kFrameSize);
  }

  static constexpr int kFrameSize = 700;  // SimpleEnv's width and height

  StepResult Step(const Action& action) override {
    for (int i = 0; i < world_.num_agents; ++i) SetAction(action, i);
    world_.Step();
    // SimpleEnv._execute_world_step: global_reward * (1 - local_ratio) + agent_reward * local_ratio.
    const std::optional<double> local_ratio = scenario_->LocalRatio();
    const double global = local_ratio ? scenario_->GlobalReward(world_) : 0.0;
    StepResult result;
    for (int i = 0; i < world_.num_agents; ++i) {
      const double own = scenario_->Reward(world_, i);
      rewards_[static_cast<std::size_t>(i)] = local_ratio ? global * (1 - *local_ratio) + own * *local_ratio : own;
      result.reward += rewards_[static_cast<std::size_t>(i)];
    }
    // SimpleEnv.step: truncated at max_cycles; else terminated when the scenario succeeded.
    result.truncated = TimeLimitReached();
    result.terminated = !result.truncated && scenario_->IsTerminal(world_);
    Write();
    return result;
  }

 private:
  // The action space's size of one agent (SimpleEnv.__init__): a movable agent's 5 moves, times
  // (discrete) or plus (continuous) the words of a speaking one.
  static double ActionSize(const World& world, const Entity& a, bool continuous) {
    int size = a.movable ? kDimP * 2 + 1 : (continuous ? 0 : 1);
    if (!a.silent) size = continuous ? size + world.dim_c : size * world.dim_c;
    return size;
  }

  // SimpleEnv._set_action of agent i, from its row of the action field.
  void SetAction(const Action& action, int i) {
    Entity& a = world_.agent(i);
    const int size = action_sizes_[static_cast<std::size_t>(i)];
    a.u = {0.0, 0.0};
    a.action_c.fill(0.0);
    const double sensitivity = a.accel ? *a.accel : 5.0;
    if (continuous_) {
      const float* row = action.Get<float>(action_) + static_cast<std::ptrdiff_t>(i) * action_row_;
      // pettingzoo's ClipOutOfBoundsWrapper: values outside [0, 1] are clipped (NaN: the core refuses).
      float v[kDimP * 2 + 1 + kMaxDimC];
      for (int k = 0; k < size; ++k) v[k] = std::min(std::max(row[k], 0.0f), 1.0f);
      int next = 0;
      if (a.movable) {
        // float32 differences, as mpe2 takes them from the float32 action
        const float dx = v[2] - v[1], dy = v[4] - v[3];
        a.u = {0.0 + dx, 0.0 + dy};
        next = kDimP * 2 + 1;
      }
      if (!a.silent) {
        for (int k = 0; k < world_.dim_c; ++k) a.action_c[static_cast<std::size_t>(k)] = v[next + k];
      }
    } else {
      int64_t value = action.Get<int64_t>(action_)[i];
      if (value >= size) {
        throw std::invalid_argument("action of agent '" + a.name + "' must be in [0, " + std::to_string(size) +
                                    "), got " + std::to_string(value));
      }
      if (a.movable) {
        const int64_t move = value % (kDimP * 2 + 1);
        value /= kDimP * 2 + 1;
        if (move == 1) a.u[0] = -1.0;
        if (move == 2) a.u[0] = +1.0;
        if (move == 3) a.u[1] = -1.0;
        if (move == 4) a.u[1] = +1.0;
      }
      if (!a.silent) a.action_c[static_cast<std::size_t>(value)] = 1.0;
    }
    for (double& u : a.u) u *= sensitivity;
  }

  // np.max(np.abs(every entity's position)): the view's half-width in world units.
  double CamRange() const {
    double range = 0.0;
    for (const Entity& e : world_.entities) range = std::max({range, std::abs(e.pos[0]), std::abs(e.pos[1])});
    return range;
  }

  // Every agent's row: its observation (float64 cast to float32, zero-padded), reward and index.
  void Write() {
    Slot out = Allocate(world_.num_agents);
    float* obs = out.Get<float>(obs_);
    double* reward = out.Get<double>(reward_);
    int32_t* index = out.Get<int32_t>(agent_index_);
    for (int i = 0; i < world_.num_agents; ++i) {
      scratch_.clear();
      scenario_->Observe(world_, i, scratch_);
      float* row = obs + static_cast<std::ptrdiff_t>(i) * obs_size_;
      for (std::size_t k = 0; k < scratch_.size(); ++k) row[k] = static_cast<float>(scratch_[k]);
      for (int k = static_cast<int>(scratch_.size()); k < obs_size_; ++k) row[k] = 0.0f;
      reward[i] = rewards_[static_cast<std::size_t>(i)];
      index[i] = i;
    }
  }

  std::unique_ptr<Scenario> scenario_;
  World world_;
  const bool continuous_;
  const bool dynamic_rescaling_;
  double original_cam_range_ = 1.0;  // CamRange() after the last reset
  const int obs_, reward_, agent_index_, action_;
  const int obs_size_, action_row_;
  std::vector<int> action_sizes_;
  std::vector<double> rewards_;
  Obs scratch_;
};

}  // namespace pp::mpe
