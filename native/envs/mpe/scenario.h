// What an MPE scenario defines (mpe2's BaseScenario): its world, its reset draws, each agent's reward
// and observation; plus the helpers the scenarios share (partial observability, the edge penalty).
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/numpy_random.h"
#include "envs/mpe/world.h"

namespace pp::mpe {

// The observation of one agent as mpe2 concatenates it (float64, cast to float32 when written).
using Obs = std::vector<double>;

inline void Append(Obs& out, const Vec2& v) { out.insert(out.end(), v.begin(), v.end()); }
inline Vec2 Relative(const Entity& to, const Entity& from) {
  return {to.pos[0] - from.pos[0], to.pos[1] - from.pos[1]};
}

class Scenario {
 public:
  virtual ~Scenario() = default;
  // make_world: the entities, their fixed properties and roles.
  virtual void MakeWorld(World& world) const = 0;
  // reset_world: every draw from NumPy's stream, in mpe2's order.
  virtual void ResetWorld(World& world, NumpyGenerator& rng) const = 0;
  virtual double Reward(const World& world, int agent) const = 0;
  // SimpleEnv's local_ratio (none: each agent gets its own reward) and the shared reward it blends.
  virtual std::optional<double> LocalRatio() const { return std::nullopt; }
  virtual double GlobalReward(const World& /*world*/) const { return 0.0; }
  // Appends the observation of `agent` to `out` (cleared by the caller).
  virtual void Observe(const World& world, int agent, Obs& out) const = 0;
  // Early success (terminate_on_success): the episode terminates.
  virtual bool IsTerminal(const World& /*world*/) const { return false; }
};

// np_random.uniform(low, high, dim_p) into an entity's position; its velocity (and an agent's
// communication state) zero, as every reset_world writes them.
inline void PlaceUniform(Entity& e, NumpyGenerator& rng, double low, double high) {
  rng.Uniform(low, high, e.pos.data(), kDimP);
  e.vel = {0.0, 0.0};
  e.c.fill(0.0);
}

// A config key that mpe2 takes as "a positive int or None": 0 here is None.
inline std::optional<int> NeighborCount(const Config& config, const std::string& key) {
  const int64_t n = config.GetInt(key);
  if (n < 0)
    throw std::invalid_argument(key + " must be a positive int, or 0 for None (every entity), got " +
                                std::to_string(n));
  if (n == 0) return std::nullopt;
  return static_cast<int>(n);
}

inline double LocalRatioOf(const Config& config) {
  const double r = config.GetFloat("local_ratio");
  if (!(r >= 0.0 && r <= 1.0)) throw std::invalid_argument("local_ratio is a proportion: it must be in [0, 1]");
  return r;
}

// partial_observability.nearest_entities: the `n` entities nearest to `agent`, closest first
// (np.argsort of the distances: ties keep the list's order, as its insertion sort of short arrays).
inline std::vector<int> NearestEntities(const World& world, int agent, const std::vector<int>& entities, int n) {
  std::vector<double> dist(entities.size());
  for (std::size_t k = 0; k < entities.size(); ++k) {
    dist[k] = Distance(world.entities[static_cast<std::size_t>(entities[k])].pos, world.agent(agent).pos);
  }
  std::vector<int> order(entities.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return dist[a] < dist[b]; });
  order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(n)));
  for (int& k : order) k = entities[static_cast<std::size_t>(k)];
  return order;
}

// The landmarks' entity indices (they follow the agents), and every agent but `agent`: the entity
// lists the observations walk, in world order.
inline std::vector<int> LandmarkIds(const World& world) {
  std::vector<int> landmarks;
  for (int i = world.num_agents; i < world.num_entities(); ++i) landmarks.push_back(i);
  return landmarks;
}
inline std::vector<int> OtherAgents(const World& world, int agent) {
  std::vector<int> others;
  for (int a = 0; a < world.num_agents; ++a) {
    if (a != agent) others.push_back(a);
  }
  return others;
}

// padded_relative_positions: every entity's position relative to `agent` (n none), or the n nearest,
// zero-padded to n.
inline void AppendRelativePositions(const World& world, int agent, const std::vector<int>& entities,
                                    std::optional<int> n, Obs& out) {
  const Entity& self = world.agent(agent);
  if (!n) {
    for (int e : entities) Append(out, Relative(world.entities[static_cast<std::size_t>(e)], self));
    return;
  }
  const std::vector<int> nearest = NearestEntities(world, agent, entities, *n);
  for (int e : nearest) Append(out, Relative(world.entities[static_cast<std::size_t>(e)], self));
  for (std::size_t k = nearest.size(); k < static_cast<std::size_t>(*n); ++k) Append(out, {0.0, 0.0});
}

// mpe2's partial observability: how many agents and landmarks an agent sees (none: all of them).
struct Neighbors {
  explicit Neighbors(const Config& config)
      : agents(NeighborCount(config, "num_agent_neighbors")),
        landmarks(NeighborCount(config, "num_landmark_neighbors")) {}

  // The landmarks' positions relative to `agent`, then the other agents'; returns the other agents.
  std::vector<int> AppendRelativePositions(const World& world, int agent, Obs& out) const {
    pp::mpe::AppendRelativePositions(world, agent, LandmarkIds(world), landmarks, out);
    std::vector<int> others = OtherAgents(world, agent);
    pp::mpe::AppendRelativePositions(world, agent, others, agents, out);
    return others;
  }

  // The agent's velocity and position, then the relative positions above.
  std::vector<int> AppendMotionAndRelativePositions(const World& world, int agent, Obs& out) const {
    Append(out, world.agent(agent).vel);
    Append(out, world.agent(agent).pos);
    return AppendRelativePositions(world, agent, out);
  }

  const std::optional<int> agents, landmarks;
};

// The edge penalty of simple_tag's and simple_world_comm's good agents (their bound(x)).
inline double EdgePenalty(double x) {
  if (x < 0.9) return 0.0;
  if (x < 1.0) return (x - 0.9) * 10;
  return std::min(std::exp(2 * x - 2), 10.0);
}

// The indices of the agents (or landmarks) a predicate selects, in world order.
template <typename Pred>
std::vector<int> Select(const World& world, int begin, int end, Pred pred) {
  std::vector<int> out;
  for (int i = begin; i < end; ++i) {
    if (pred(world.entities[static_cast<std::size_t>(i)])) out.push_back(i);
  }
  return out;
}

}  // namespace pp::mpe
