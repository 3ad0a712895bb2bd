// simple_world_comm_v3 of mpe2 1.1.1: simple_tag with food, forests that hide whoever is inside
// them, and a leader adversary that sees everything and speaks to the other adversaries.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "envs/mpe/cooperative.h"
#include "envs/mpe/scenario.h"

namespace pp::mpe {

class WorldComm final : public Scenario {
 public:
  explicit WorldComm(const Config& config)
      : num_good_(static_cast<int>(config.GetInt("num_good"))),
        num_adversaries_(static_cast<int>(config.GetInt("num_adversaries"))),
        num_obstacles_(static_cast<int>(config.GetInt("num_obstacles"))),
        num_food_(static_cast<int>(config.GetInt("num_food"))),
        num_forests_(static_cast<int>(config.GetInt("num_forests"))) {
    // mpe2's rewards take a min over the good agents and over the food: with none it raises.
    if (num_good_ < 1 || num_food_ < 1) throw std::invalid_argument("num_good and num_food must be >= 1");
    if (num_adversaries_ < 1) throw std::invalid_argument("num_adversaries must be >= 1 (the first is the leader)");
    if (num_obstacles_ < 0 || num_forests_ < 0)
      throw std::invalid_argument("num_obstacles and num_forests must be >= 0");
  }
  void MakeWorld(World& world) const override {
    world.dim_c = 4;
    world.entities.clear();
    const int n = num_good_ + num_adversaries_;
    for (int i = 0; i < n; ++i) {
      const bool adversary = i < num_adversaries_;
      const int index = std::max(adversary ? i - 1 : i - num_adversaries_, 0);
      Entity a = MakeAgent((i == 0      ? std::string("leadadversary")
                            : adversary ? "adversary"
                                        : "agent") +
                           "_" + std::to_string(index));
      a.adversary = adversary;
      a.leader = i == 0;
      a.silent = i > 0;
      a.size = adversary ? 0.075 : 0.045;
      a.accel = adversary ? 3.0 : 4.0;
      a.max_speed = adversary ? 1.0 : 1.3;
      world.entities.push_back(a);
    }
    for (int i = 0; i < num_obstacles_; ++i) world.entities.push_back(MakeLandmark(i, true, 0.2));
    for (int i = 0; i < num_food_; ++i) {
      Entity food = MakeLandmark(0, false, 0.03);
      food.name = "food " + std::to_string(i);
      world.entities.push_back(food);
    }
    for (int i = 0; i < num_forests_; ++i) {
      Entity forest = MakeLandmark(0, false, 0.3);
      forest.name = "forest " + std::to_string(i);
      world.entities.push_back(forest);
    }
    world.num_agents = n;
  }
  void ResetWorld(World& world, NumpyGenerator& rng) const override {
    for (int i = 0; i < world.num_agents; ++i) {
      Entity& a = world.agent(i);
      if (a.adversary)
        SetColor(a, 0.95, 0.45, 0.45);
      else
        SetColor(a, 0.45, 0.95, 0.45);
      for (int k = 0; k < 3; ++k) a.color[static_cast<std::size_t>(k)] -= a.leader ? 0.3 : 0.0;
    }
    for (int i = FirstLandmark(world); i < world.num_entities(); ++i) SetColor(world.entities[i], 0.25, 0.25, 0.25);
    for (int i = FirstFood(world); i < FirstForest(world); ++i) SetColor(world.entities[i], 0.15, 0.15, 0.65);
    for (int i = FirstForest(world); i < world.num_entities(); ++i) SetColor(world.entities[i], 0.6, 0.9, 0.6);
    for (int i = 0; i < world.num_agents; ++i) PlaceUniform(world.agent(i), rng, -1, +1);
    // world.landmarks holds the obstacles, the food and the forests: all placed, then the food and
    // the forests placed again (mpe2's draws, all of them).
    for (int i = FirstLandmark(world); i < world.num_entities(); ++i) PlaceUniform(world.entities[i], rng, -0.9, +0.9);
    for (int i = FirstFood(world); i < FirstForest(world); ++i) PlaceUniform(world.entities[i], rng, -0.9, +0.9);
    for (int i = FirstForest(world); i < world.num_entities(); ++i) PlaceUniform(world.entities[i], rng, -0.9, +0.9);
  }
  double Reward(const World& world, int agent) const override {
    const Entity& self = world.agent(agent);
    double rew = 0;
    if (self.adversary) {
      rew -= 0.1 * MinDistance(world, agent, 0, world.num_agents, /*good_only=*/true);
      if (self.collide) {
        for (int g = 0; g < world.num_agents; ++g) {
          if (world.agent(g).adversary) continue;
          for (int a = 0; a < world.num_agents; ++a) {
            if (world.agent(a).adversary && IsCollision(world.agent(g), world.agent(a))) rew += 5;
          }
        }
      }
      return rew;
    }
    if (self.collide) {
      for (int a = 0; a < world.num_agents; ++a) {
        if (world.agent(a).adversary && IsCollision(world.agent(a), self)) rew -= 5;
      }
    }
    for (int p = 0; p < kDimP; ++p) rew -= 2 * EdgePenalty(std::abs(self.pos[p]));
    for (int f = FirstFood(world); f < FirstForest(world); ++f) {
      if (IsCollision(self, world.entities[static_cast<std::size_t>(f)])) rew += 2;
    }
    rew -= 0.05 * MinDistance(world, agent, FirstFood(world), FirstForest(world), /*good_only=*/false);
    return rew;
  }
  void Observe(const World& world, int agent, Obs& out) const override {
    const Entity& self = world.agent(agent);
    Append(out, self.vel);
    Append(out, self.pos);
    for (int l = FirstLandmark(world); l < world.num_entities(); ++l) {
      Append(out, Relative(world.entities[static_cast<std::size_t>(l)], self));
    }
    const int forests = FirstForest(world);
    std::vector<bool> in_forest(static_cast<std::size_t>(num_forests_));
    for (int f = 0; f < num_forests_; ++f) in_forest[f] = IsCollision(self, world.entities[forests + f]);
    const bool self_in_any = std::find(in_forest.begin(), in_forest.end(), true) != in_forest.end();
    Obs other_pos, other_vel;
    for (int o = 0; o < world.num_agents; ++o) {
      if (o == agent) continue;
      const Entity& other = world.agent(o);
      // Seen when in a forest with this agent, or when neither is in any forest, or by the leader.
      bool shared_forest = false, other_in_any = false;
      for (int f = 0; f < num_forests_; ++f) {
        const bool in = IsCollision(other, world.entities[forests + f]);
        other_in_any = other_in_any || in;
        if (in_forest[f] && in) shared_forest = true;
      }
      const bool seen = shared_forest || (!self_in_any && !other_in_any) || self.leader;
      Append(other_pos, seen ? Relative(other, self) : Vec2{0.0, 0.0});
      if (!other.adversary) Append(other_vel, seen ? other.vel : Vec2{0.0, 0.0});
    }
    out.insert(out.end(), other_pos.begin(), other_pos.end());
    if (self.adversary) out.insert(out.end(), other_vel.begin(), other_vel.end());
    for (int f = 0; f < num_forests_; ++f) out.push_back(in_forest[f] ? 1.0 : -1.0);
    if (self.adversary) {
      out.insert(out.end(), world.agent(0).c.begin(), world.agent(0).c.begin() + world.dim_c);
    } else {
      out.insert(out.end(), other_vel.begin(), other_vel.end());
    }
  }

 private:
  int FirstLandmark(const World& world) const { return world.num_agents; }
  int FirstFood(const World& world) const { return world.num_agents + num_obstacles_; }
  int FirstForest(const World& world) const { return world.num_agents + num_obstacles_ + num_food_; }

  // min over entities [begin, end) (good agents only, if asked) of their distance to `agent`.
  static double MinDistance(const World& world, int agent, int begin, int end, bool good_only) {
    double best = 0;
    bool first = true;
    for (int i = begin; i < end; ++i) {
      const Entity& e = world.entities[static_cast<std::size_t>(i)];
      if (good_only && e.adversary) continue;
      const double d = Distance(e.pos, world.agent(agent).pos);
      if (first || d < best) best = d;
      first = false;
    }
    return best;
  }

  const int num_good_, num_adversaries_, num_obstacles_, num_food_, num_forests_;
};

}  // namespace pp::mpe
