// The competitive MPE scenarios of mpe2 1.1.1: simple_tag, simple_adversary, simple_push and
// simple_crypto, each its make_world, reset_world, reward and observation.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "envs/mpe/cooperative.h"
#include "envs/mpe/scenario.h"

namespace pp::mpe {

// The name mpe2 gives agent i when the first `num_adversaries` are adversaries.
inline std::string RoleName(int i, int num_adversaries) {
  return i < num_adversaries ? "adversary_" + std::to_string(i) : "agent_" + std::to_string(i - num_adversaries);
}

// simple_tag_v3: slower adversaries chase faster good agents around obstacles. Adversaries get +10
// per (good agent, adversary) collision; good agents -10 per adversary touching them and a penalty
// for leaving the area.
class Tag final : public Scenario {
 public:
  explicit Tag(const Config& config)
      : num_good_(static_cast<int>(config.GetInt("num_good"))),
        num_adversaries_(static_cast<int>(config.GetInt("num_adversaries"))),
        num_obstacles_(static_cast<int>(config.GetInt("num_obstacles"))),
        curriculum_(config.GetBool("curriculum")),
        terminate_on_success_(config.GetBool("terminate_on_success")),
        neighbors_(config) {
    if (num_good_ < 0 || num_adversaries_ < 0 || num_obstacles_ < 0 || num_good_ + num_adversaries_ < 1) {
      throw std::invalid_argument("num_good, num_adversaries and num_obstacles must be >= 0, with one agent at least");
    }
  }
  void MakeWorld(World& world) const override {
    world.dim_c = 2;
    world.entities.clear();
    const int n = num_good_ + num_adversaries_;
    for (int i = 0; i < n; ++i) {
      Entity a = MakeAgent(RoleName(i, num_adversaries_));
      a.adversary = i < num_adversaries_;
      a.silent = true;
      a.size = a.adversary ? 0.075 : 0.05;
      a.accel = a.adversary ? 3.0 : 4.0;
      a.max_speed = a.adversary ? 1.0 : 1.3;
      world.entities.push_back(a);
    }
    for (int i = 0; i < num_obstacles_; ++i) world.entities.push_back(MakeLandmark(i, true, 0.2));
    world.num_agents = n;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    for (int i = 0; i < world.num_agents; ++i) {
      Entity& a = world.agent(i);
      if (a.adversary)
        SetColor(a, 0.85, 0.35, 0.35);
      else
        SetColor(a, 0.35, 0.85, 0.35);
    }
    for (int i = world.num_agents; i < world.num_entities(); ++i) SetColor(world.entities[i], 0.25, 0.25, 0.25);
    for (int i = 0; i < world.num_agents; ++i) PlaceUniform(world.agent(i), rng, -1, +1);
    for (int i = world.num_agents; i < world.num_entities(); ++i) PlaceUniform(world.entities[i], rng, -0.9, +0.9);
    if (curriculum_) {
      // mpe2's stage 0 (its stage never leaves 0 in mpe2 1.1.1: see Spread::Reward).
      const double factor = kPreySpeedFactorStage0;
      for (int i = 0; i < world.num_agents; ++i) {
        Entity& a = world.agent(i);
        if (a.adversary) continue;
        a.max_speed = kPreyBaseMaxSpeed * factor;
        a.accel = kPreyBaseAccel * factor;
      }
    }
  }
  double Reward(const World& world, int agent) const override {
    const Entity& self = world.agent(agent);
    double rew = 0;
    if (self.adversary) {
      if (self.collide) {
        for (int g : Good(world)) {
          for (int a : Adversaries(world)) {
            if (IsCollision(world.agent(g), world.agent(a))) rew += 10;
          }
        }
      }
      return rew;
    }
    if (self.collide) {
      for (int a : Adversaries(world)) {
        if (IsCollision(world.agent(a), self)) rew -= 10;
      }
    }
    for (int p = 0; p < kDimP; ++p) rew -= EdgePenalty(std::abs(self.pos[p]));
    return rew;
  }
  bool IsTerminal(const World& world) const override {
    if (!terminate_on_success_) return false;
    const std::vector<int> adversaries = Adversaries(world);
    for (int g : Good(world)) {
      const bool caught = std::any_of(adversaries.begin(), adversaries.end(),
                                      [&](int a) { return IsCollision(world.agent(g), world.agent(a)); });
      if (!caught) return false;
    }
    return true;
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const std::vector<int> others = neighbors_.AppendMotionAndRelativePositions(world, agent, out);
    if (!neighbors_.agents) {
      for (int o : others) {
        if (!world.agent(o).adversary) Append(out, world.agent(o).vel);
      }
      return;
    }
    // padded_velocities: the nearest agents' velocities, zeros for adversaries and padding.
    const std::vector<int> nearest = NearestEntities(world, agent, others, *neighbors_.agents);
    for (int o : nearest) Append(out, world.agent(o).adversary ? Vec2{0.0, 0.0} : world.agent(o).vel);
    for (std::size_t k = nearest.size(); k < static_cast<std::size_t>(*neighbors_.agents); ++k) Append(out, {0.0, 0.0});
  }

  static constexpr double kPreySpeedFactorStage0 = 0.5;
  static constexpr double kPreyBaseMaxSpeed = 1.3;
  static constexpr double kPreyBaseAccel = 4.0;

 private:
  static std::vector<int> Good(const World& world) {
    return Select(world, 0, world.num_agents, [](const Entity& e) { return !e.adversary; });
  }
  static std::vector<int> Adversaries(const World& world) {
    return Select(world, 0, world.num_agents, [](const Entity& e) { return e.adversary; });
  }

  const int num_good_, num_adversaries_, num_obstacles_;
  const bool curriculum_;
  const bool terminate_on_success_;
  const Neighbors neighbors_;
};

// simple_adversary_v3: N good agents know which of N landmarks is the goal; one adversary does not.
// Good agents: minus the nearest good agent's distance to the goal plus the adversary's distance to
// it; the adversary: minus its own distance.
class Adversary final : public Scenario {
 public:
  explicit Adversary(const Config& config) : n_(static_cast<int>(config.GetInt("N"))), neighbors_(config) {
    if (n_ < 1) throw std::invalid_argument("N must be >= 1");
  }
  void MakeWorld(World& world) const override {
    world.dim_c = 2;
    world.entities.clear();
    for (int i = 0; i < n_ + 1; ++i) {
      Entity a = MakeAgent(RoleName(i, 1));
      a.adversary = i < 1;
      a.collide = false;
      a.silent = true;
      a.size = 0.15;
      world.entities.push_back(a);
    }
    for (int i = 0; i < n_; ++i) world.entities.push_back(MakeLandmark(i, false, 0.08));
    world.num_agents = n_ + 1;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    SetColor(world.agent(0), 0.85, 0.35, 0.35);
    for (int i = 1; i < world.num_agents; ++i) SetColor(world.agent(i), 0.35, 0.35, 0.85);
    for (int i = world.num_agents; i < world.num_entities(); ++i) SetColor(world.entities[i], 0.15, 0.15, 0.15);
    const int goal = world.num_agents + static_cast<int>(rng.Integers(0, n_));
    SetColor(world.entities[static_cast<std::size_t>(goal)], 0.15, 0.65, 0.15);
    for (int i = 0; i < world.num_agents; ++i) world.agent(i).goal_a = goal;
    for (Entity& e : world.entities) PlaceUniform(e, rng, -1, +1);
  }
  double Reward(const World& world, int agent) const override {
    if (world.agent(agent).adversary) return -GoalDistance(world, agent);
    double adv_rew = 0;  // Python's sum() over the adversaries starts at 0
    for (int a = 0; a < world.num_agents; ++a) {
      if (world.agent(a).adversary) adv_rew += GoalDistance(world, a);
    }
    double nearest = 0;
    bool first = true;
    for (int a = 0; a < world.num_agents; ++a) {
      if (world.agent(a).adversary) continue;
      const double d = GoalDistance(world, a);
      if (first || d < nearest) nearest = d;
      first = false;
    }
    return -nearest + adv_rew;
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const Entity& self = world.agent(agent);
    if (!self.adversary) Append(out, Relative(world.entities[static_cast<std::size_t>(self.goal_a)], self));
    neighbors_.AppendRelativePositions(world, agent, out);
  }

 private:
  static double GoalDistance(const World& world, int a) {
    const Entity& e = world.agent(a);
    return Distance(e.pos, world.entities[static_cast<std::size_t>(e.goal_a)].pos);
  }

  const int n_;
  const Neighbors neighbors_;
};

// simple_push_v3: a good agent heads for its goal landmark; an adversary pushes it away. Good:
// minus its distance to the goal; adversary: the good agent's distance minus its own.
class Push final : public Scenario {
 public:
  void MakeWorld(World& world) const override {
    world.dim_c = 2;
    world.entities.clear();
    for (int i = 0; i < 2; ++i) {
      Entity a = MakeAgent(RoleName(i, 1));
      a.adversary = i < 1;
      a.silent = true;
      world.entities.push_back(a);
    }
    for (int i = 0; i < 2; ++i) world.entities.push_back(MakeLandmark(i));
    world.num_agents = 2;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    for (int i = 0; i < 2; ++i) {
      Entity& l = world.entities[static_cast<std::size_t>(2 + i)];
      SetColor(l, 0.1, 0.1, 0.1);
      l.color[static_cast<std::size_t>(i + 1)] += 0.8;
    }
    const int goal_index = static_cast<int>(rng.Integers(0, 2));
    for (int i = 0; i < 2; ++i) {
      Entity& a = world.agent(i);
      a.goal_a = 2 + goal_index;
      SetColor(a, 0.25, 0.25, 0.25);
      if (a.adversary)
        SetColor(a, 0.75, 0.25, 0.25);
      else
        a.color[static_cast<std::size_t>(goal_index + 1)] += 0.5;
    }
    for (Entity& e : world.entities) PlaceUniform(e, rng, -1, +1);
  }
  double Reward(const World& world, int agent) const override {
    const Entity& self = world.agent(agent);
    const Vec2& goal = world.entities[static_cast<std::size_t>(self.goal_a)].pos;
    if (!self.adversary) return -Distance(self.pos, goal);
    double pos_rew = 0;
    bool first = true;
    for (int a = 0; a < world.num_agents; ++a) {
      const Entity& e = world.agent(a);
      if (e.adversary) continue;
      const double d = Distance(e.pos, world.entities[static_cast<std::size_t>(e.goal_a)].pos);
      if (first || d < pos_rew) pos_rew = d;
      first = false;
    }
    return pos_rew - Distance(goal, self.pos);
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const Entity& self = world.agent(agent);
    Append(out, self.vel);
    if (!self.adversary) {
      Append(out, Relative(world.entities[static_cast<std::size_t>(self.goal_a)], self));
      out.insert(out.end(), self.color.begin(), self.color.begin() + 3);
    }
    for (int l = 2; l < 4; ++l) Append(out, Relative(world.entities[static_cast<std::size_t>(l)], self));
    if (!self.adversary) {
      for (int l = 2; l < 4; ++l) {
        const auto& color = world.entities[static_cast<std::size_t>(l)].color;
        out.insert(out.end(), color.begin(), color.begin() + 3);
      }
    }
    Append(out, Relative(world.agent(1 - agent), self));
  }
};

// simple_crypto_v3: Alice sends Bob a bit (a landmark's colour) encrypted with a shared key; Eve
// listens. Bob and Alice: Eve's squared error minus Bob's; Eve: minus her squared error.
class Crypto final : public Scenario {
 public:
  void MakeWorld(World& world) const override {
    world.dim_c = 4;
    world.entities.clear();
    for (int i = 0; i < 3; ++i) {
      Entity a = MakeAgent(i == 0 ? "eve_0" : (i == 2 ? "alice_0" : "bob_0"));
      a.adversary = i < 1;
      a.collide = false;
      a.speaker = i == 2;
      a.movable = false;
      world.entities.push_back(a);
    }
    for (int i = 0; i < 2; ++i) world.entities.push_back(MakeLandmark(i));
    world.num_agents = 3;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    for (int i = 0; i < 3; ++i) {
      Entity& a = world.agent(i);
      SetColor(a, 0.25, 0.25, 0.25);
      if (a.adversary) SetColor(a, 0.75, 0.25, 0.25);
      a.goal_b = -1;  // the key: goal_b here (a landmark whose colour is the key), none but Alice's
    }
    for (int i = 0; i < 2; ++i) {
      Entity& l = world.entities[static_cast<std::size_t>(3 + i)];
      l.color.fill(0.0);
      l.color[static_cast<std::size_t>(i)] += 1;
    }
    const int goal = 3 + static_cast<int>(rng.Integers(0, 2));
    world.agent(1).color = world.entities[static_cast<std::size_t>(goal)].color;
    world.agent(2).goal_b = 3 + static_cast<int>(rng.Integers(0, 2));
    for (int i = 0; i < 3; ++i) world.agent(i).goal_a = goal;
    for (Entity& e : world.entities) PlaceUniform(e, rng, -1, +1);
  }
  double Reward(const World& world, int agent) const override {
    const Entity& self = world.agent(agent);
    const auto& goal = world.entities[static_cast<std::size_t>(self.goal_a)].color;
    if (self.adversary) return Said(world, self) ? -SquaredError(world, self, goal) : 0.0;
    double good_rew = 0, adv_rew = 0;
    for (int a = 0; a < 3; ++a) {
      const Entity& e = world.agent(a);
      if (e.adversary || e.speaker || !Said(world, e)) continue;  // the good listeners: Bob
      good_rew -= SquaredError(world, e, goal);
    }
    for (int a = 0; a < 3; ++a) {
      const Entity& e = world.agent(a);
      if (!e.adversary || !Said(world, e)) continue;
      adv_rew += SquaredError(world, e, goal);
    }
    return adv_rew + good_rew;
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const Entity& self = world.agent(agent);
    const Entity& alice = world.agent(2);
    const auto& key = world.entities[static_cast<std::size_t>(alice.goal_b)].color;
    const auto& goal = world.entities[static_cast<std::size_t>(self.goal_a)].color;
    const auto dim = static_cast<std::size_t>(world.dim_c);
    if (self.speaker) {
      out.insert(out.end(), goal.begin(), goal.begin() + dim);
      out.insert(out.end(), key.begin(), key.begin() + dim);
    } else if (!self.adversary) {
      out.insert(out.end(), key.begin(), key.begin() + dim);
      out.insert(out.end(), alice.c.begin(), alice.c.begin() + dim);
    } else {
      out.insert(out.end(), alice.c.begin(), alice.c.begin() + dim);
    }
  }

 private:
  // Whether an agent said anything: its state.c is not all zeros.
  static bool Said(const World& world, const Entity& e) {
    for (int k = 0; k < world.dim_c; ++k) {
      if (e.c[static_cast<std::size_t>(k)] != 0.0) return true;
    }
    return false;
  }
  // np.sum(np.square(c - colour)), summed left to right.
  static double SquaredError(const World& world, const Entity& e, const std::array<double, kMaxColor>& color) {
    double sum = 0;
    for (int k = 0; k < world.dim_c; ++k) {
      const double d = e.c[static_cast<std::size_t>(k)] - color[static_cast<std::size_t>(k)];
      sum = k == 0 ? d * d : sum + d * d;
    }
    return sum;
  }
};

}  // namespace pp::mpe
