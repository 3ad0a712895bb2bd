// The cooperative MPE scenarios of mpe2 1.1.1: simple, simple_spread, simple_reference and
// simple_speaker_listener, each its make_world, reset_world, reward and observation.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <string>

#include "envs/mpe/scenario.h"

namespace pp::mpe {

inline Entity MakeAgent(std::string name) {
  Entity a;
  a.name = std::move(name);
  a.is_agent = true;
  a.movable = true;
  return a;
}
inline Entity MakeLandmark(int i, bool collide = false, double size = 0.050) {
  Entity l;
  l.name = "landmark " + std::to_string(i);
  l.collide = collide;
  l.movable = false;
  l.size = size;
  return l;
}
inline void SetColor(Entity& e, double r, double g, double b) { e.color = {r, g, b, 0.0}; }

// simple_v3: one agent, one landmark; the reward is minus the squared distance between them.
class Simple final : public Scenario {
 public:
  void MakeWorld(World& world) const override {
    world.dim_c = 0;
    Entity a = MakeAgent("agent_0");
    a.collide = false;
    a.silent = true;
    world.entities = {a, MakeLandmark(0)};
    world.num_agents = 1;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    SetColor(world.entities[0], 0.25, 0.25, 0.25);
    SetColor(world.entities[1], 0.75, 0.25, 0.25);
    PlaceUniform(world.entities[0], rng, -1, +1);
    PlaceUniform(world.entities[1], rng, -1, +1);
  }
  double Reward(const World& world, int agent) const override {
    return -SquaredDistance(world.agent(agent).pos, world.entities[1].pos);
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    Append(out, world.agent(agent).vel);
    Append(out, Relative(world.entities[1], world.agent(agent)));
  }
};

// simple_spread_v3: N agents cover N landmarks. Shared reward: minus the sum over landmarks of the
// nearest agent's distance; own reward: -1 per collision (none in curriculum stage 0).
class Spread final : public Scenario {
 public:
  explicit Spread(const Config& config)
      : n_(static_cast<int>(config.GetInt("N"))),
        local_ratio_(LocalRatioOf(config)),
        curriculum_(config.GetBool("curriculum")),
        terminate_on_success_(config.GetBool("terminate_on_success")),
        neighbors_(config) {
    if (n_ < 1) throw std::invalid_argument("N must be >= 1");
  }
  void MakeWorld(World& world) const override {
    world.dim_c = 2;
    world.entities.clear();
    for (int i = 0; i < n_; ++i) {
      Entity a = MakeAgent("agent_" + std::to_string(i));
      a.silent = true;
      a.size = 0.15;
      world.entities.push_back(a);
    }
    for (int i = 0; i < n_; ++i) world.entities.push_back(MakeLandmark(i));
    world.num_agents = n_;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    for (Entity& e : world.entities) {
      if (e.is_agent)
        SetColor(e, 0.35, 0.35, 0.85);
      else
        SetColor(e, 0.25, 0.25, 0.25);
    }
    for (Entity& e : world.entities) PlaceUniform(e, rng, -1, +1);
  }
  double Reward(const World& world, int agent) const override {
    double rew = 0;
    // With curriculum, mpe2's stage 0 has no collision penalty. Its stage never leaves 0 in mpe2 1.1.1
    // (BaseScenario's curriculum_stage property ignores the scenario's assignments), so neither does ours.
    const bool penalty = !curriculum_;
    const Entity& self = world.agent(agent);
    if (self.collide && penalty) {
      for (int a = 0; a < n_; ++a) rew -= 1.0 * (IsCollision(world.agent(a), self) && a != agent ? 1.0 : 0.0);
    }
    return rew;
  }
  std::optional<double> LocalRatio() const override { return local_ratio_; }
  double GlobalReward(const World& world) const override {
    double rew = 0;
    for (int l = 0; l < n_; ++l) rew -= MinDistance(world, n_ + l);
    return rew;
  }
  bool IsTerminal(const World& world) const override {
    if (!terminate_on_success_) return false;
    for (int l = 0; l < n_; ++l) {
      if (MinDistance(world, n_ + l) >= kCaptureRadius) return false;
    }
    return true;
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const std::vector<int> others = neighbors_.AppendMotionAndRelativePositions(world, agent, out);
    // padded_comms: the same agents' communication states, zero-padded.
    const std::vector<int> comm =
        neighbors_.agents ? NearestEntities(world, agent, others, *neighbors_.agents) : others;
    for (int o : comm) out.insert(out.end(), world.agent(o).c.begin(), world.agent(o).c.begin() + world.dim_c);
    if (neighbors_.agents) {
      for (std::size_t k = comm.size(); k < static_cast<std::size_t>(*neighbors_.agents); ++k) {
        out.insert(out.end(), static_cast<std::size_t>(world.dim_c), 0.0);
      }
    }
  }

  static constexpr double kCaptureRadius = 0.1;

 private:
  // min over agents of the distance to landmark `l` (Python's min: the first of equal values).
  double MinDistance(const World& world, int l) const {
    double best = std::numeric_limits<double>::infinity();
    for (int a = 0; a < n_; ++a) {
      const double d = Distance(world.agent(a).pos, world.entities[static_cast<std::size_t>(l)].pos);
      if (a == 0 || d < best) best = d;
    }
    return best;
  }

  const int n_;
  const double local_ratio_;
  const bool curriculum_;
  const bool terminate_on_success_;
  const Neighbors neighbors_;
};

// simple_reference_v3: two agents, each told (privately) which landmark the other must reach; they
// talk over a 10-word channel. Reward: minus the distance of the other agent to its landmark.
class Reference final : public Scenario {
 public:
  explicit Reference(const Config& config) : local_ratio_(LocalRatioOf(config)) {}
  void MakeWorld(World& world) const override {
    world.dim_c = 10;
    world.entities = {MakeAgent("agent_0"), MakeAgent("agent_1"), MakeLandmark(0), MakeLandmark(1), MakeLandmark(2)};
    for (int i = 0; i < 2; ++i) world.agent(i).collide = false;
    world.num_agents = 2;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    world.agent(0).goal_a = 1;
    world.agent(0).goal_b = 2 + static_cast<int>(rng.Integers(0, 3));
    world.agent(1).goal_a = 0;
    world.agent(1).goal_b = 2 + static_cast<int>(rng.Integers(0, 3));
    for (int i = 0; i < 2; ++i) SetColor(world.agent(i), 0.25, 0.25, 0.25);
    SetColor(world.entities[2], 0.75, 0.25, 0.25);
    SetColor(world.entities[3], 0.25, 0.75, 0.25);
    SetColor(world.entities[4], 0.25, 0.25, 0.75);
    for (int i = 0; i < 2; ++i) {
      Entity& self = world.agent(i);
      world.agent(self.goal_a).color = world.entities[static_cast<std::size_t>(self.goal_b)].color;
    }
    for (Entity& e : world.entities) PlaceUniform(e, rng, -1, +1);
  }
  double Reward(const World& world, int agent) const override {
    const Entity& self = world.agent(agent);
    return -Distance(world.agent(self.goal_a).pos, world.entities[static_cast<std::size_t>(self.goal_b)].pos);
  }
  std::optional<double> LocalRatio() const override { return local_ratio_; }
  double GlobalReward(const World& world) const override {
    double all = 0;  // Python's sum() starts at 0
    for (int a = 0; a < 2; ++a) all += Reward(world, a);
    return all / 2;
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const Entity& self = world.agent(agent);
    Append(out, self.vel);
    for (int l = 2; l < 5; ++l) Append(out, Relative(world.entities[static_cast<std::size_t>(l)], self));
    const auto& goal = world.entities[static_cast<std::size_t>(self.goal_b)].color;
    out.insert(out.end(), goal.begin(), goal.begin() + 3);
    const Entity& other = world.agent(1 - agent);
    out.insert(out.end(), other.c.begin(), other.c.begin() + world.dim_c);
  }

 private:
  const double local_ratio_;
};

// simple_speaker_listener_v4: a speaker that sees the goal landmark's colour and cannot move, and a
// listener that hears it and must reach that landmark. Reward: minus the listener's squared distance.
class SpeakerListener final : public Scenario {
 public:
  void MakeWorld(World& world) const override {
    world.dim_c = 3;
    Entity speaker = MakeAgent("speaker_0"), listener = MakeAgent("listener_0");
    for (Entity* a : {&speaker, &listener}) {
      a->collide = false;
      a->size = 0.075;
    }
    speaker.movable = false;
    listener.silent = true;
    world.entities = {speaker, listener};
    for (int i = 0; i < 3; ++i) world.entities.push_back(MakeLandmark(i, false, 0.04));
    world.num_agents = 2;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    world.agent(0).goal_a = 1;
    world.agent(0).goal_b = 2 + static_cast<int>(rng.Integers(0, 3));
    world.agent(1).goal_a = world.agent(1).goal_b = -1;
    for (int i = 0; i < 2; ++i) SetColor(world.agent(i), 0.25, 0.25, 0.25);
    SetColor(world.entities[2], 0.65, 0.15, 0.15);
    SetColor(world.entities[3], 0.15, 0.65, 0.15);
    SetColor(world.entities[4], 0.15, 0.15, 0.65);
    const auto& goal = world.entities[static_cast<std::size_t>(world.agent(0).goal_b)].color;
    SetColor(world.agent(1), goal[0] + 0.45, goal[1] + 0.45, goal[2] + 0.45);
    for (Entity& e : world.entities) PlaceUniform(e, rng, -1, +1);
  }
  double Reward(const World& world, int /*agent*/) const override {
    const Entity& speaker = world.agent(0);
    return -SquaredDistance(world.agent(speaker.goal_a).pos,
                            world.entities[static_cast<std::size_t>(speaker.goal_b)].pos);
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const Entity& self = world.agent(agent);
    if (!self.movable) {  // the speaker: the goal's colour
      const auto& goal = world.entities[static_cast<std::size_t>(self.goal_b)].color;
      out.insert(out.end(), goal.begin(), goal.begin() + 3);
      return;
    }
    Append(out, self.vel);  // the listener: its velocity, the landmarks, what the speaker says
    for (int l = 2; l < 5; ++l) Append(out, Relative(world.entities[static_cast<std::size_t>(l)], self));
    out.insert(out.end(), world.agent(0).c.begin(), world.agent(0).c.begin() + world.dim_c);
  }
};

}  // namespace pp::mpe
