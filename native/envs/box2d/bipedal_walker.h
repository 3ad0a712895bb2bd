// BipedalWalker-v3 and BipedalWalkerHardcore-v3: Gymnasium's 4-joint walker on Box2D, same terrain
// (grass, and stumps, stairs and pits when hardcore), lidar, reward and termination as
// gymnasium/envs/box2d/bipedal_walker.py.
#pragma once

#include <Box2D/Box2D.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/box2d/box2d_util.h"
#include "envs/common/pygame_raster.h"

namespace pp::box2d {

// The constants of bipedal_walker.py, under its names.
struct BipedalWalkerParams {
  static constexpr double kPi = 3.14159265358979323846;  // math.pi
  static constexpr double kFps = 50;
  static constexpr double kScale = 30.0;
  static constexpr int kMotorsTorque = 80;
  static constexpr int kSpeedHip = 4;
  static constexpr int kSpeedKnee = 6;
  static constexpr double kLidarRange = 160 / kScale;
  static constexpr double kInitialRandom = 5;
  static constexpr std::array<std::array<int, 2>, 5> kHullPoly = {
      {{-30, +9}, {+6, +9}, {+34, +1}, {+34, -8}, {-30, -8}}};
  static constexpr double kLegDown = -8 / kScale;
  static constexpr double kLegW = 8 / kScale;
  static constexpr double kLegH = 34 / kScale;
  static constexpr int kViewportW = 600;
  static constexpr int kViewportH = 400;
  static constexpr double kTerrainStep = 14 / kScale;
  static constexpr int kTerrainLength = 200;  // in steps
  static constexpr double kTerrainHeight = kViewportH / kScale / 4;
  static constexpr int kTerrainGrass = 10;     // low long are grass spots, in steps
  static constexpr int kTerrainStartpad = 20;  // in steps
  static constexpr double kFriction = 2.5;
  static constexpr int kVelocityIterations = 6 * 30;
  static constexpr int kPositionIterations = 2 * 30;
  static constexpr int kLidarRays = 10;
  static constexpr int kClouds = kTerrainLength / 20;
};

// Config: hardcore (Gymnasium's kwarg); max_episode_steps is set per task id by the registration;
// render_lidar: render() draws Gymnasium's red lidar ray, one more each call (its lidar_render
// counter), or, False, none, so that a repeated render() gives the same frame (EnvPool's frames).
inline Config BipedalWalkerDefaults(bool hardcore) {
  return Config{{"max_episode_steps", int64_t{hardcore ? 2000 : 1600}}, {"hardcore", hardcore}, {"render_lidar", true}};
}

inline EnvSpec BipedalWalkerSpec(const std::string& /*task_id*/, const Config& /*config*/) {
  using P = BipedalWalkerParams;
  // Gymnasium casts its bounds to float32 (math.pi becomes float32(pi)).
  const double pi = static_cast<float>(P::kPi);
  std::vector<double> low = {-pi, -5.0, -5.0, -5.0, -pi, -5.0, -pi, -5.0, -0.0, -pi, -5.0, -pi, -5.0, -0.0};
  std::vector<double> high = {pi, 5.0, 5.0, 5.0, pi, 5.0, pi, 5.0, 5.0, pi, 5.0, pi, 5.0, 5.0};
  low.resize(low.size() + P::kLidarRays, -1.0);
  high.resize(high.size() + P::kLidarRays, 1.0);
  EnvSpec spec;
  spec.state = {Box("obs", Dtype::kFloat32, {24}, low, high)};
  spec.action = {Box("action", Dtype::kFloat32, {4}, {-1.0}, {1.0})};
  spec.render_shape = {P::kViewportH, P::kViewportW, 3};
  spec.render_fps = 50;  // FPS
  return spec;
}

class BipedalWalkerEnv final : public Env, private b2ContactListener {
 public:
  BipedalWalkerEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        hardcore_(spec.config.GetBool("hardcore")),
        render_lidar_(spec.config.GetBool("render_lidar")),
        // Gymnasium makes one world (b2World(): gravity (0, -10)) and keeps it across resets,
        // destroying and re-creating the bodies; so do we, in the same order, so that Box2D's
        // broad-phase proxies and contact lists evolve exactly as in Gymnasium.
        world_(std::make_unique<b2World>(b2Vec2(0.0f, -10.0f))) {}

  void Reset() override {
    using P = BipedalWalkerParams;
    Destroy();
    world_->SetContactListener(this);
    game_over_ = false;
    has_prev_shaping_ = false;
    ground_contact_ = {false, false};
    scroll_ = 0.0;
    lidar_render_ = 0;
    GenerateTerrain();
    GenerateClouds();

    const double init_x = P::kTerrainStep * P::kTerrainStartpad / 2;
    const double init_y = P::kTerrainHeight + 2 * P::kLegH;
    hull_ = AddPolygonBody(*world_, Vec(init_x, init_y), P::kHullPoly, P::kScale, 0x0020);
    hull_->ApplyForceToCenter(Vec(np_random().Uniform(-P::kInitialRandom, P::kInitialRandom), 0.0), true);

    legs_.clear();
    joints_.clear();
    legs_colors_.clear();
    for (int i : {-1, +1}) {
      // Gymnasium's leg.color1 / color2 (the same for the upper and the lower leg).
      const raster::Rgb color1{static_cast<uint8_t>(153 - i * 25), static_cast<uint8_t>(76 - i * 25),
                               static_cast<uint8_t>(127 - i * 25)};
      const raster::Rgb color2{static_cast<uint8_t>(102 - i * 25), static_cast<uint8_t>(51 - i * 25),
                               static_cast<uint8_t>(76 - i * 25)};
      legs_colors_.push_back({color1, color2});
      legs_colors_.push_back({color1, color2});
      b2Body* leg = CreateLeg(init_x, init_y - P::kLegH / 2 - P::kLegDown, i, P::kLegW / 2);
      joints_.push_back(CreateJoint(hull_, leg, P::kLegDown, P::kLegH / 2, i, -0.8, 1.1));
      legs_.push_back(leg);
      b2Body* lower = CreateLeg(init_x, init_y - P::kLegH * 3 / 2 - P::kLegDown, i, 0.8 * P::kLegW / 2);
      joints_.push_back(CreateJoint(leg, lower, -P::kLegH / 2, P::kLegH / 2, 1, -1.6, -0.1));
      legs_.push_back(lower);
    }
    // Gymnasium's reset returns the observation of one step with zero actions.
    StepWorld(std::array<float, 4>{0.0f, 0.0f, 0.0f, 0.0f});
  }

  StepResult Step(const Action& action) override {
    const float* a = action.Get<float>(action_index_);
    return StepWorld(std::array<float, 4>{a[0], a[1], a[2], a[3]});
  }

  // Gymnasium's render() in rgb_array mode, pixel for pixel: the same pygame calls (raster::), in
  // the same order, on a surface as wide as Gymnasium's (its right edge clips the lines the same
  // way), of which the last 600 columns are the frame. Like Gymnasium's, it advances the lidar ray
  // it shows.
  void Render(uint8_t* rgb) override {
    using P = BipedalWalkerParams;
    constexpr double kS = P::kScale;
    const int width = raster::detail::PyInt(P::kViewportW + std::max(0.0, scroll_) * kS);
    raster::Surface surf(width, P::kViewportH);
    raster::Polygon(surf, {215, 215, 255},
                    {{scroll_ * kS, 0},
                     {scroll_ * kS + P::kViewportW, 0},
                     {scroll_ * kS + P::kViewportW, P::kViewportH},
                     {scroll_ * kS, P::kViewportH}});
    for (const auto& cloud : clouds_) {
      double x1 = cloud[0][0], x2 = cloud[0][0];
      for (const auto& p : cloud) x1 = std::min(x1, p[0]), x2 = std::max(x2, p[0]);
      if (x2 < scroll_ / 2) continue;
      if (x1 > scroll_ / 2 + P::kViewportW / kS) continue;
      std::vector<raster::Point> poly;
      for (const auto& p : cloud) poly.push_back({p[0] * kS + scroll_ * kS / 2, p[1] * kS});
      raster::Polygon(surf, {255, 255, 255}, poly);
      raster::GfxAaPolygon(surf, {255, 255, 255}, poly);
    }
    for (std::size_t i = 0; i + 1 < terrain_x_.size(); ++i) {
      if (terrain_x_[i + 1] < scroll_) continue;
      if (terrain_x_[i] > scroll_ + P::kViewportW / kS) continue;
      const std::vector<raster::Point> poly = {{terrain_x_[i] * kS, terrain_y_[i] * kS},
                                               {terrain_x_[i + 1] * kS, terrain_y_[i + 1] * kS},
                                               {terrain_x_[i + 1] * kS, 0.0 * kS},
                                               {terrain_x_[i] * kS, 0.0 * kS}};
      raster::Polygon(surf, {102, 153, 76}, poly);
      raster::GfxAaPolygon(surf, {102, 153, 76}, poly);
    }
    if (render_lidar_) lidar_render_ = (lidar_render_ + 1) % 100;
    const int i = lidar_render_;
    if (render_lidar_ && i < 2 * P::kLidarRays) {
      const LidarRay& ray = lidar_rays_[static_cast<std::size_t>(i < P::kLidarRays ? i : 2 * P::kLidarRays - i - 1)];
      raster::Line(surf, {255, 0, 0}, {ray.p1x * kS, ray.p1y * kS}, {ray.p2x * kS, ray.p2y * kS}, 1);
    }
    auto draw_body = [&](const b2Body* body, raster::Rgb color1, raster::Rgb color2) {
      for (const b2Fixture* f = body->GetFixtureList(); f; f = f->GetNext()) {
        std::vector<raster::Point> path;
        auto add = [&](const b2Vec2& v) {
          const b2Vec2 w = static_cast<float>(kS) * b2Mul(body->GetTransform(), v);
          path.push_back({w.x, w.y});
        };
        if (f->GetType() == b2Shape::e_edge) {
          const auto* edge = static_cast<const b2EdgeShape*>(f->GetShape());
          add(edge->m_vertex1);
          add(edge->m_vertex2);
          raster::AaLine(surf, color1, path[0], path[1]);
          continue;
        }
        const auto* poly = static_cast<const b2PolygonShape*>(f->GetShape());
        for (int k = 0; k < poly->m_count; ++k) add(poly->m_vertices[k]);
        raster::Polygon(surf, color1, path);
        raster::GfxAaPolygon(surf, color1, path);
        path.push_back(path[0]);
        raster::Polygon(surf, color2, path, 1);
        raster::GfxAaPolygon(surf, color2, path);
      }
    };
    for (std::size_t k = 0; k < terrain_.size(); ++k)
      draw_body(terrain_[k], terrain_colors_[k][0], terrain_colors_[k][1]);
    for (std::size_t k = 0; k < legs_.size(); ++k) draw_body(legs_[k], legs_colors_[k][0], legs_colors_[k][1]);
    draw_body(hull_, {127, 51, 229}, {76, 76, 127});
    const double flagy1 = P::kTerrainHeight * kS;
    const double flagy2 = flagy1 + 50;
    const double x = P::kTerrainStep * 3 * kS;
    raster::AaLine(surf, {0, 0, 0}, {x, flagy1}, {x, flagy2});
    const std::vector<raster::Point> flag = {{x, flagy2}, {x, flagy2 - 10}, {x + 25, flagy2 - 5}};
    raster::Polygon(surf, {230, 51, 0}, flag);
    raster::Lines(surf, {0, 0, 0}, false, {flag[0], flag[1], flag[2], flag[0]}, 1);
    surf.WriteRgb(rgb, /*flip_y=*/true, width - P::kViewportW, P::kViewportW);
  }

 private:
  // Gymnasium's LidarCallback: the closest fixture of the ground (category bit 1) along the ray,
  // and where it was hit (its p2, which render() draws).
  class Lidar final : public b2RayCastCallback {
   public:
    float32 ReportFixture(b2Fixture* fixture, const b2Vec2& point, const b2Vec2& /*normal*/,
                          float32 fraction) override {
      if ((fixture->GetFilterData().categoryBits & 1) == 0) return -1;
      this->point = point;
      hit = true;
      this->fraction = fraction;
      return fraction;
    }
    double fraction = 1.0;
    bool hit = false;
    b2Vec2 point{0.0f, 0.0f};
  };

  // A lidar ray as render() draws it: from the hull's position to the hit point (float32), or to
  // the end of the ray (Python floats) when nothing was hit.
  struct LidarRay {
    double p1x = 0.0, p1y = 0.0, p2x = 0.0, p2y = 0.0;
  };

  // BeginContact/EndContact of Gymnasium's ContactDetector: the hull touching ground ends the
  // episode; the lower legs (legs[1], legs[3]) report ground contact.
  void BeginContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    if (hull_ == a || hull_ == b) game_over_ = true;
    for (std::size_t k = 0; k < 2; ++k) {
      const b2Body* leg = legs_[2 * k + 1];
      if (leg == a || leg == b) ground_contact_[k] = true;
    }
  }
  void EndContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    for (std::size_t k = 0; k < 2; ++k) {
      const b2Body* leg = legs_[2 * k + 1];
      if (leg == a || leg == b) ground_contact_[k] = false;
    }
  }

  // Gymnasium's _destroy(): no contact callbacks, then the bodies in its list order.
  void Destroy() {
    if (terrain_.empty()) return;
    world_->SetContactListener(nullptr);
    for (b2Body* t : terrain_) world_->DestroyBody(t);
    terrain_.clear();
    world_->DestroyBody(hull_);
    hull_ = nullptr;
    for (b2Body* leg : legs_) world_->DestroyBody(leg);
    legs_.clear();
    joints_.clear();
  }

  b2Body* CreateLeg(double x, double y, int i, double half_width) {
    return AddLegBody(*world_, Vec(x, y), static_cast<float>(i * 0.05), half_width, BipedalWalkerParams::kLegH / 2);
  }

  b2RevoluteJoint* CreateJoint(b2Body* a, b2Body* b, double anchor_a_y, double anchor_b_y, int motor_speed,
                               double lower, double upper) {
    using P = BipedalWalkerParams;
    b2RevoluteJointDef rjd;
    rjd.bodyA = a;
    rjd.bodyB = b;
    rjd.localAnchorA = Vec(0.0, anchor_a_y);
    rjd.localAnchorB = Vec(0.0, anchor_b_y);
    rjd.enableMotor = true;
    rjd.enableLimit = true;
    rjd.maxMotorTorque = static_cast<float>(P::kMotorsTorque);
    rjd.motorSpeed = static_cast<float>(motor_speed);
    rjd.lowerAngle = static_cast<float>(lower);
    rjd.upperAngle = static_cast<float>(upper);
    // box2d-py's revoluteJointDef(bodyA=..., bodyB=...) sets the reference angle from the bodies.
    rjd.referenceAngle = static_cast<float>(static_cast<double>(b->GetAngle()) - a->GetAngle());
    return static_cast<b2RevoluteJoint*>(world_->CreateJoint(&rjd));
  }

  // A static body with one fixture: fd_polygon (friction 2.5) with the given quad.
  void CreateTerrainPolygon(const std::array<std::array<double, 2>, 4>& poly) {
    using P = BipedalWalkerParams;
    b2BodyDef bd;
    b2Body* body = world_->CreateBody(&bd);
    b2Vec2 vertices[4];
    for (std::size_t k = 0; k < 4; ++k) vertices[k] = Vec(poly[k][0], poly[k][1]);
    b2PolygonShape shape;
    shape.Set(vertices, 4);
    b2FixtureDef fd;
    fd.shape = &shape;
    fd.friction = static_cast<float>(P::kFriction);
    body->CreateFixture(&fd);
    terrain_.push_back(body);
    terrain_colors_.push_back({raster::Rgb{255, 255, 255}, raster::Rgb{153, 153, 153}});
    terrain_polys_.push_back(poly);
  }

  // Gymnasium's _generate_terrain(hardcore), draw for draw.
  void GenerateTerrain() {
    using P = BipedalWalkerParams;
    enum State : int64_t { kGrass = 0, kStump, kStairs, kPit, kStates };
    int64_t state = kGrass;
    double velocity = 0.0;
    double y = P::kTerrainHeight;
    int64_t counter = P::kTerrainStartpad;
    bool oneshot = false;
    terrain_.clear();
    terrain_colors_.clear();
    terrain_polys_.clear();
    terrain_x_.clear();
    terrain_y_.clear();
    int64_t stair_steps = 0, stair_width = 0, stair_height = 0;
    double original_y = 0;
    const double ts = P::kTerrainStep;
    for (int i = 0; i < P::kTerrainLength; ++i) {
      const double x = i * ts;
      terrain_x_.push_back(x);
      if (state == kGrass && !oneshot) {
        const double diff = P::kTerrainHeight - y;
        const double sign = diff > 0 ? 1.0 : (diff < 0 ? -1.0 : 0.0);  // np.sign
        velocity = 0.8 * velocity + 0.01 * sign;
        if (i > P::kTerrainStartpad) velocity += np_random().Uniform(-1, 1) / P::kScale;
        y += velocity;
      } else if (state == kPit && oneshot) {
        counter = np_random().Integers(3, 5);
        const std::array<std::array<double, 2>, 4> poly = {
            {{x, y}, {x + ts, y}, {x + ts, y - 4 * ts}, {x, y - 4 * ts}}};
        CreateTerrainPolygon(poly);
        std::array<std::array<double, 2>, 4> shifted = poly;
        for (auto& p : shifted) p[0] = p[0] + ts * static_cast<double>(counter);
        CreateTerrainPolygon(shifted);
        counter += 2;
        original_y = y;
      } else if (state == kPit && !oneshot) {
        y = original_y;
        if (counter > 1) y -= 4 * ts;
      } else if (state == kStump && oneshot) {
        counter = np_random().Integers(1, 3);
        const double size = static_cast<double>(counter) * ts;
        CreateTerrainPolygon({{{x, y}, {x + size, y}, {x + size, y + size}, {x, y + size}}});
      } else if (state == kStairs && oneshot) {
        stair_height = np_random().Random() > 0.5 ? +1 : -1;
        stair_width = np_random().Integers(4, 5);
        stair_steps = np_random().Integers(3, 5);
        original_y = y;
        for (int64_t s = 0; s < stair_steps; ++s) {
          const double x0 = x + static_cast<double>(s * stair_width) * ts;
          const double x1 = x + static_cast<double>((1 + s) * stair_width) * ts;
          const double y0 = y + static_cast<double>(s * stair_height) * ts;
          const double y1 = y + static_cast<double>(-1 + s * stair_height) * ts;
          CreateTerrainPolygon({{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}});
        }
        counter = stair_steps * stair_width;
      } else if (state == kStairs && !oneshot) {
        const int64_t s = stair_steps * stair_width - counter - stair_height;
        const double n = static_cast<double>(s) / static_cast<double>(stair_width);
        y = original_y + (n * static_cast<double>(stair_height)) * ts;
      }
      oneshot = false;
      terrain_y_.push_back(y);
      counter -= 1;
      if (counter == 0) {
        counter = np_random().Integers(P::kTerrainGrass / 2, P::kTerrainGrass);
        if (state == kGrass && hardcore_) {
          state = np_random().Integers(1, kStates);
        } else {
          state = kGrass;
        }
        oneshot = true;
      }
    }
    for (int i = 0; i < P::kTerrainLength - 1; ++i) {
      const auto k = static_cast<std::size_t>(i);
      b2BodyDef bd;
      b2Body* body = world_->CreateBody(&bd);
      b2EdgeShape edge;
      edge.Set(Vec(terrain_x_[k], terrain_y_[k]), Vec(terrain_x_[k + 1], terrain_y_[k + 1]));
      b2FixtureDef fd;  // fd_edge
      fd.shape = &edge;
      fd.friction = static_cast<float>(P::kFriction);
      fd.filter.categoryBits = 0x0001;
      body->CreateFixture(&fd);
      terrain_.push_back(body);
      const raster::Rgb color{76, static_cast<uint8_t>(i % 2 == 0 ? 255 : 204), 76};
      terrain_colors_.push_back({color, color});
    }
    std::reverse(terrain_.begin(), terrain_.end());
    std::reverse(terrain_colors_.begin(), terrain_colors_.end());
  }

  // Gymnasium's _generate_clouds(): drawn for the picture only, but from np_random, before the
  // hull's initial force, so they are drawn here too.
  void GenerateClouds() {
    using P = BipedalWalkerParams;
    for (auto& cloud : clouds_) {
      const double x = np_random().Uniform(0, P::kTerrainLength) * P::kTerrainStep;
      const double y = P::kViewportH / P::kScale * 3 / 4;
      for (int a = 0; a < 5; ++a) {
        const double angle = 3.14 * 2 * a / 5;
        const double px = x + 15 * P::kTerrainStep * std::sin(angle) + np_random().Uniform(0, 5 * P::kTerrainStep);
        const double py = y + 5 * P::kTerrainStep * std::cos(angle) + np_random().Uniform(0, 5 * P::kTerrainStep);
        cloud[static_cast<std::size_t>(a)] = {px, py};
      }
    }
  }

  StepResult StepWorld(const std::array<float, 4>& action) {
    using P = BipedalWalkerParams;
    for (std::size_t j = 0; j < 4; ++j) {
      // float(SPEED * np.sign(a)), float(MOTORS_TORQUE * np.clip(np.abs(a), 0, 1)): float32 math.
      const float a = action[j];
      const float sign = a > 0 ? 1.0f : (a < 0 ? -1.0f : 0.0f);  // np.sign (actions are never NaN here)
      const int speed = j % 2 == 0 ? P::kSpeedHip : P::kSpeedKnee;
      joints_[j]->SetMotorSpeed(static_cast<float>(speed) * sign);
      joints_[j]->SetMaxMotorTorque(static_cast<float>(P::kMotorsTorque) * std::clamp(std::abs(a), 0.0f, 1.0f));
    }
    world_->Step(static_cast<float>(1.0 / P::kFps), P::kVelocityIterations, P::kPositionIterations);

    const b2Vec2 pos = hull_->GetPosition();
    const b2Vec2 vel = hull_->GetLinearVelocity();
    std::array<double, P::kLidarRays> lidar{};
    for (int i = 0; i < P::kLidarRays; ++i) {
      Lidar ray;
      const double p2x = static_cast<double>(pos.x) + std::sin(1.5 * i / 10.0) * P::kLidarRange;
      const double p2y = static_cast<double>(pos.y) - std::cos(1.5 * i / 10.0) * P::kLidarRange;
      world_->RayCast(&ray, pos, Vec(p2x, p2y));
      lidar[static_cast<std::size_t>(i)] = ray.fraction;
      lidar_rays_[static_cast<std::size_t>(i)] = {pos.x, pos.y, ray.hit ? ray.point.x : p2x,
                                                  ray.hit ? ray.point.y : p2y};
    }
    const std::array<double, 14> body = {
        static_cast<double>(hull_->GetAngle()),
        2.0 * static_cast<double>(hull_->GetAngularVelocity()) / P::kFps,
        0.3 * static_cast<double>(vel.x) * (P::kViewportW / P::kScale) / P::kFps,
        0.3 * static_cast<double>(vel.y) * (P::kViewportH / P::kScale) / P::kFps,
        static_cast<double>(joints_[0]->GetJointAngle()),
        static_cast<double>(joints_[0]->GetJointSpeed()) / P::kSpeedHip,
        static_cast<double>(joints_[1]->GetJointAngle()) + 1.0,
        static_cast<double>(joints_[1]->GetJointSpeed()) / P::kSpeedKnee,
        ground_contact_[0] ? 1.0 : 0.0,
        static_cast<double>(joints_[2]->GetJointAngle()),
        static_cast<double>(joints_[2]->GetJointSpeed()) / P::kSpeedHip,
        static_cast<double>(joints_[3]->GetJointAngle()) + 1.0,
        static_cast<double>(joints_[3]->GetJointSpeed()) / P::kSpeedKnee,
        ground_contact_[1] ? 1.0 : 0.0,
    };
    scroll_ = static_cast<double>(pos.x) - P::kViewportW / P::kScale / 5;

    // Moving forward is rewarded (about 300 to the far end); keep the head straight.
    double shaping = 130 * static_cast<double>(pos.x) / P::kScale;
    shaping -= 5.0 * std::abs(body[0]);
    const double shaped = has_prev_shaping_ ? shaping - prev_shaping_ : 0.0;
    prev_shaping_ = shaping;
    has_prev_shaping_ = true;
    // `reward -= 0.00035 * MOTORS_TORQUE * np.clip(np.abs(a), 0, 1)` makes the reward a float32
    // (NumPy 2's rules for a Python float with a float32); so do we.
    const auto torque_cost = static_cast<float>(0.00035 * P::kMotorsTorque);
    auto reward32 = static_cast<float>(shaped);
    for (const float a : action) reward32 -= torque_cost * std::clamp(std::abs(a), 0.0f, 1.0f);
    double reward = reward32;

    bool terminated = false;
    if (game_over_ || pos.x < 0) {
      reward = -100;
      terminated = true;
    }
    if (static_cast<double>(pos.x) > (P::kTerrainLength - P::kTerrainGrass) * P::kTerrainStep) terminated = true;

    Slot out = Allocate();
    float* obs = out.Get<float>(obs_index_);
    for (std::size_t k = 0; k < body.size(); ++k) obs[k] = static_cast<float>(body[k]);
    for (std::size_t k = 0; k < lidar.size(); ++k) obs[body.size() + k] = static_cast<float>(lidar[k]);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

  const int obs_index_;
  const int action_index_;
  const bool hardcore_;
  const bool render_lidar_;
  std::unique_ptr<b2World> world_;
  std::vector<b2Body*> terrain_;                            // Gymnasium's self.terrain: reversed creation order
  std::vector<std::array<raster::Rgb, 2>> terrain_colors_;  // of terrain_: color1, color2
  b2Body* hull_ = nullptr;
  std::vector<b2Body*> legs_;                            // upper -1, lower -1, upper +1, lower +1
  std::vector<std::array<raster::Rgb, 2>> legs_colors_;  // of legs_: color1, color2
  std::vector<b2RevoluteJoint*> joints_;
  std::array<bool, 2> ground_contact_{};  // of legs_[1] and legs_[3]
  bool game_over_ = false;
  bool has_prev_shaping_ = false;
  double prev_shaping_ = 0.0;
  double scroll_ = 0.0;
  int lidar_render_ = 0;  // which lidar ray render() shows next (Gymnasium's lidar_render)
  std::array<LidarRay, BipedalWalkerParams::kLidarRays> lidar_rays_{};
  // Kept for the picture: the terrain's outline and obstacles, and the clouds.
  std::vector<double> terrain_x_, terrain_y_;
  std::vector<std::array<std::array<double, 2>, 4>> terrain_polys_;
  std::array<std::array<std::array<double, 2>, 5>, BipedalWalkerParams::kClouds> clouds_{};
};

}  // namespace pp::box2d
