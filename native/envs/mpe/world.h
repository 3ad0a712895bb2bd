// The particle world of the MPE tasks (mpe2 1.1.1's _mpe_utils/core.py): entities, their forces and
// their integration, in NumPy's float64 order of operations so that a step matches mpe2's bit for bit.
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace pp::mpe {

inline constexpr int kDimP = 2;      // position dimensionality (World.dim_p)
inline constexpr int kMaxDimC = 10;  // the largest communication channel (simple_reference's)
inline constexpr int kMaxColor = 4;  // simple_crypto's colors are dim_c = 4 long; others 3

using Vec2 = std::array<double, kDimP>;

// An agent or a landmark (mpe2's Entity, Agent and Landmark, with the scenarios' extra attributes).
struct Entity {
  std::string name;
  bool is_agent = false;
  double size = 0.050;
  bool movable = false;
  bool collide = true;
  std::optional<double> max_speed;
  std::optional<double> accel;
  std::array<double, kMaxColor> color{};
  Vec2 pos{};
  Vec2 vel{};
  // Agents only.
  bool silent = false;
  std::array<double, kMaxDimC> c{};  // the communication state (state.c), dim_c long
  Vec2 u{};                          // the physical action (action.u), after sensitivity
  std::array<double, kMaxDimC> action_c{};
  // The scenarios' roles and goals (indices into World::entities; -1: none).
  bool adversary = false;
  bool leader = false;
  bool speaker = false;
  int goal_a = -1;
  int goal_b = -1;
};

// The world: agents first, then landmarks (World.entities = agents + landmarks).
struct World {
  std::vector<Entity> entities;
  int num_agents = 0;
  int dim_c = 0;
  static constexpr double kDt = 0.1;
  static constexpr double kDamping = 0.25;
  static constexpr double kContactForce = 1e2;
  static constexpr double kContactMargin = 1e-3;
  static constexpr double kMass = 1.0;  // Entity.initial_mass: every entity's

  Entity& agent(int i) { return entities[static_cast<std::size_t>(i)]; }
  const Entity& agent(int i) const { return entities[static_cast<std::size_t>(i)]; }
  int num_entities() const { return static_cast<int>(entities.size()); }

  // World.step: action forces, then collision forces between every pair, then integration, then
  // the agents' communication state.
  void Step() {
    const int n = num_entities();
    // p_force: None (not set) or a vector; `has` says which.
    std::vector<Vec2> force(static_cast<std::size_t>(n), Vec2{});
    std::vector<bool> has(static_cast<std::size_t>(n), false);
    for (int i = 0; i < num_agents; ++i) {
      const Entity& a = entities[static_cast<std::size_t>(i)];
      if (!a.movable) continue;
      // agent.action.u + noise, noise 0.0 (no scenario sets u_noise)
      force[static_cast<std::size_t>(i)] = {a.u[0] + 0.0, a.u[1] + 0.0};
      has[static_cast<std::size_t>(i)] = true;
    }
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const Entity& ea = entities[static_cast<std::size_t>(a)];
        const Entity& eb = entities[static_cast<std::size_t>(b)];
        if (!ea.collide || !eb.collide) continue;
        Vec2 f;
        CollisionForce(ea, eb, &f);
        if (ea.movable) AddForce(force, has, a, {+f[0], +f[1]});
        if (eb.movable) AddForce(force, has, b, {-f[0], -f[1]});
      }
    }
    for (int i = 0; i < n; ++i) {
      Entity& e = entities[static_cast<std::size_t>(i)];
      if (!e.movable) continue;
      for (int d = 0; d < kDimP; ++d) e.pos[d] += e.vel[d] * kDt;
      for (int d = 0; d < kDimP; ++d) e.vel[d] = e.vel[d] * (1 - kDamping);
      if (has[static_cast<std::size_t>(i)]) {
        for (int d = 0; d < kDimP; ++d) e.vel[d] += (force[static_cast<std::size_t>(i)][d] / kMass) * kDt;
      }
      if (e.max_speed) {
        const double speed = std::sqrt(e.vel[0] * e.vel[0] + e.vel[1] * e.vel[1]);
        if (speed > *e.max_speed) {
          const double norm = std::sqrt(e.vel[0] * e.vel[0] + e.vel[1] * e.vel[1]);
          for (int d = 0; d < kDimP; ++d) e.vel[d] = e.vel[d] / norm * *e.max_speed;
        }
      }
    }
    for (int i = 0; i < num_agents; ++i) {
      Entity& a = entities[static_cast<std::size_t>(i)];
      // silent: zeros; else action.c + noise, noise 0.0 (no scenario sets c_noise)
      for (int k = 0; k < dim_c; ++k) a.c[static_cast<std::size_t>(k)] = a.silent ? 0.0 : a.action_c[k] + 0.0;
    }
  }

  // np.logaddexp(0, y): NumPy's npy_logaddexp, on libm's exp and log1p.
  static double LogAddExp0(double y) {
    const double x = 0.0;
    if (x == y) return x + M_LN2;
    const double tmp = x - y;
    if (tmp > 0) return x + std::log1p(std::exp(-tmp));
    if (tmp <= 0) return y + std::log1p(std::exp(tmp));
    return tmp;  // NaN
  }

  // World.get_collision_force's force on `a` (b gets its negation): a softplus penetration.
  static void CollisionForce(const Entity& a, const Entity& b, Vec2* f) {
    const Vec2 delta = {a.pos[0] - b.pos[0], a.pos[1] - b.pos[1]};
    const double dist = std::sqrt(delta[0] * delta[0] + delta[1] * delta[1]);
    const double dist_min = a.size + b.size;
    const double penetration = LogAddExp0(-(dist - dist_min) / kContactMargin) * kContactMargin;
    for (int d = 0; d < kDimP; ++d) (*f)[d] = kContactForce * delta[d] / dist * penetration;
  }

 private:
  // p_force[i] = f + p_force[i], p_force[i] starting at 0.0 when unset.
  static void AddForce(std::vector<Vec2>& force, std::vector<bool>& has, int i, const Vec2& f) {
    Vec2& p = force[static_cast<std::size_t>(i)];
    if (!has[static_cast<std::size_t>(i)]) {
      p = {0.0, 0.0};
      has[static_cast<std::size_t>(i)] = true;
    }
    p = {f[0] + p[0], f[1] + p[1]};
  }
};

// Helpers the scenarios share (their is_collision, distances, np.sum of squares).
inline double SquaredDistance(const Vec2& a, const Vec2& b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1];
  return dx * dx + dy * dy;
}
inline double Distance(const Vec2& a, const Vec2& b) { return std::sqrt(SquaredDistance(a, b)); }
inline bool IsCollision(const Entity& a, const Entity& b) { return Distance(a.pos, b.pos) < a.size + b.size; }

}  // namespace pp::mpe
