// LunarLander-v3 and LunarLanderContinuous-v3: Gymnasium's lander on Box2D, same spaces, terrain,
// engines, wind, shaping reward and termination as gymnasium/envs/box2d/lunar_lander.py.
#pragma once

#include <Box2D/Box2D.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/box2d/box2d_util.h"
#include "envs/common/pygame_raster.h"

namespace pp::box2d {

// The constants of lunar_lander.py, under its names.
struct LunarLanderParams {
  static constexpr double kFps = 50;
  static constexpr double kScale = 30.0;
  static constexpr double kMainEnginePower = 13.0;
  static constexpr double kSideEnginePower = 0.6;
  static constexpr double kInitialRandom = 1000.0;
  static constexpr int kLegAway = 20;
  static constexpr int kLegDown = 18;
  static constexpr int kLegW = 2;
  static constexpr int kLegH = 8;
  static constexpr double kLegSpringTorque = 40;
  static constexpr int kSideEngineHeight = 14;
  static constexpr int kSideEngineAway = 12;
  // The side engines' x offset: Gymnasium writes 17 where SIDE_ENGINE_HEIGHT (14) was presumably meant.
  static constexpr int kSideEngineX = 17;
  static constexpr int kMainEngineYLocation = 4;
  static constexpr int kViewportW = 600;
  static constexpr int kViewportH = 400;
  static constexpr int kChunks = 11;
  static constexpr std::array<std::array<int, 2>, 6> kLanderPoly = {
      {{-14, +17}, {-17, 0}, {-17, -10}, {+17, -10}, {+17, 0}, {+14, +17}}};
  static constexpr double kPi = 3.14159265358979323846;  // math.pi
  // Gymnasium's world.Step(1.0 / FPS, 6 * 30, 2 * 30).
  static constexpr int kVelocityIterations = 6 * 30;
  static constexpr int kPositionIterations = 2 * 30;
};

// Config: continuous, gravity, enable_wind, wind_power, turbulence_power (Gymnasium's kwargs and
// defaults); max_episode_steps is set per task id by the registration. render_mode "rgb_array"
// (make(..., render_mode="rgb_array") passes it) adds the engines' flame particles to the world as
// Gymnasium does when it renders; they are drawn by render() and never touch the lander.
inline Config LunarLanderDefaults(bool continuous) {
  return Config{{"max_episode_steps", int64_t{1000}},
                {"continuous", continuous},
                {"gravity", -10.0},
                {"enable_wind", false},
                {"wind_power", 15.0},
                {"turbulence_power", 1.5},
                {"render_mode", std::string()}};
}

inline EnvSpec LunarLanderSpec(const std::string& /*task_id*/, const Config& config) {
  using P = LunarLanderParams;
  const double gravity = config.GetFloat("gravity");
  // Gymnasium asserts this in its constructor.
  if (!(-12.0 < gravity && gravity < 0.0)) {
    throw std::invalid_argument("gravity (current value: " + std::to_string(gravity) + ") must be between -12 and 0");
  }
  EnvSpec spec;
  // Gymnasium casts its bounds to float32; 2 * pi is stored as float32(2 * math.pi).
  const double two_pi = static_cast<float>(2 * P::kPi);
  spec.state = {Box("obs", Dtype::kFloat32, {8}, {-2.5, -2.5, -10.0, -10.0, -two_pi, -10.0, -0.0, -0.0},
                    {2.5, 2.5, 10.0, 10.0, two_pi, 10.0, 1.0, 1.0})};
  if (config.GetBool("continuous")) {
    spec.action = {Box("action", Dtype::kFloat32, {2}, {-1.0}, {1.0})};
  } else {
    spec.action = {Discrete("action", 4)};
  }
  const std::string& render_mode = config.GetString("render_mode");
  if (!render_mode.empty() && render_mode != "rgb_array") {
    throw std::invalid_argument("render_mode must be 'rgb_array' or None, got '" + render_mode + "'");
  }
  spec.render_shape = {P::kViewportH, P::kViewportW, 3};
  spec.render_fps = 50;  // FPS
  return spec;
}

class LunarLanderEnv final : public Env, private b2ContactListener {
 public:
  LunarLanderEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        action_index_(spec.ActionIndex("action")),
        continuous_(spec.config.GetBool("continuous")),
        gravity_(spec.config.GetFloat("gravity")),
        enable_wind_(spec.config.GetBool("enable_wind")),
        wind_power_(spec.config.GetFloat("wind_power")),
        turbulence_power_(spec.config.GetFloat("turbulence_power")),
        particles_on_(spec.config.GetString("render_mode") == "rgb_array") {}

  void Reset() override {
    using P = LunarLanderParams;
    // Gymnasium builds a new world on every reset (its workaround for Gymnasium issue 728).
    particles_.clear();  // they lived in the old world
    world_ = std::make_unique<b2World>(b2Vec2(0.0f, static_cast<float>(gravity_)));
    world_->SetContactListener(this);
    game_over_ = false;
    has_prev_shaping_ = false;
    ground_contact_ = {false, false};

    const double w = P::kViewportW / P::kScale;
    const double h = P::kViewportH / P::kScale;
    std::array<double, P::kChunks + 1> height{};
    np_random().Uniform(0, h / 2, height.data(), static_cast<int>(height.size()));
    std::array<double, P::kChunks> chunk_x{};
    for (int i = 0; i < P::kChunks; ++i) chunk_x[static_cast<std::size_t>(i)] = w / (P::kChunks - 1) * i;
    helipad_x1_ = chunk_x[P::kChunks / 2 - 1];
    helipad_x2_ = chunk_x[P::kChunks / 2 + 1];
    helipad_y_ = h / 4;
    for (int k = -2; k <= 2; ++k) height[static_cast<std::size_t>(P::kChunks / 2 + k)] = helipad_y_;
    std::array<double, P::kChunks> smooth_y{};
    for (int i = 0; i < P::kChunks; ++i) {
      // height[i - 1] at i = 0 is Python's height[-1], the last element.
      const double before = height[static_cast<std::size_t>((i + P::kChunks) % (P::kChunks + 1))];
      smooth_y[static_cast<std::size_t>(i)] =
          0.33 * (before + height[static_cast<std::size_t>(i)] + height[static_cast<std::size_t>(i + 1)]);
    }

    b2BodyDef moon_def;  // static
    moon_ = world_->CreateBody(&moon_def);
    {
      b2EdgeShape bottom;
      bottom.Set(b2Vec2(0.0f, 0.0f), b2Vec2(static_cast<float>(w), 0.0f));
      b2FixtureDef fd;  // CreateStaticBody(shapes=...): a default fixture definition
      fd.shape = &bottom;
      moon_->CreateFixture(&fd);
    }
    for (int i = 0; i < P::kChunks - 1; ++i) {
      const auto a = static_cast<std::size_t>(i);
      b2EdgeShape edge;
      edge.Set(Vec(chunk_x[a], smooth_y[a]), Vec(chunk_x[a + 1], smooth_y[a + 1]));
      b2FixtureDef fd;
      fd.shape = &edge;
      fd.density = 0;
      fd.friction = 0.1f;
      moon_->CreateFixture(&fd);
      sky_polys_[a] = {chunk_x[a], smooth_y[a], chunk_x[a + 1], smooth_y[a + 1]};
    }

    const double initial_y = P::kViewportH / P::kScale;
    const double initial_x = P::kViewportW / P::kScale / 2;
    lander_ = AddPolygonBody(*world_, Vec(initial_x, initial_y), P::kLanderPoly, P::kScale, 0x0010);
    const double fx = np_random().Uniform(-P::kInitialRandom, P::kInitialRandom);
    const double fy = np_random().Uniform(-P::kInitialRandom, P::kInitialRandom);
    lander_->ApplyForceToCenter(Vec(fx, fy), true);
    if (enable_wind_) {
      wind_idx_ = np_random().Integers(-9999, 9999);
      torque_idx_ = np_random().Integers(-9999, 9999);
    }

    for (int side = 0; side < 2; ++side) {
      const int i = side == 0 ? -1 : +1;
      b2Body* leg = AddLegBody(*world_, Vec(initial_x - static_cast<double>(i * P::kLegAway) / P::kScale, initial_y),
                               static_cast<float>(i * 0.05), P::kLegW / P::kScale, P::kLegH / P::kScale);

      b2RevoluteJointDef rjd;
      rjd.bodyA = lander_;
      rjd.bodyB = leg;
      rjd.localAnchorA = b2Vec2(0.0f, 0.0f);
      rjd.localAnchorB = Vec(static_cast<double>(i * P::kLegAway) / P::kScale, P::kLegDown / P::kScale);
      rjd.enableMotor = true;
      rjd.enableLimit = true;
      rjd.maxMotorTorque = static_cast<float>(P::kLegSpringTorque);
      rjd.motorSpeed = static_cast<float>(+0.3 * i);  // low enough not to jump back into the sky
      if (i == -1) {
        rjd.lowerAngle = static_cast<float>(+0.9 - 0.5);  // angled legs have freedom to travel within
        rjd.upperAngle = static_cast<float>(+0.9);
      } else {
        rjd.lowerAngle = static_cast<float>(-0.9);
        rjd.upperAngle = static_cast<float>(-0.9 + 0.5);
      }
      // box2d-py's revoluteJointDef(bodyA=..., bodyB=...) sets the reference angle from the bodies
      // (in Python floats), where Box2D's own default is 0.
      rjd.referenceAngle = static_cast<float>(static_cast<double>(leg->GetAngle()) - lander_->GetAngle());
      world_->CreateJoint(&rjd);
      legs_[static_cast<std::size_t>(side)] = leg;
    }
    // Gymnasium's reset returns the observation of one no-op step.
    StepWorld(0, 0.0, 0.0);
  }

  StepResult Step(const Action& action) override {
    int discrete = 0;
    double main = 0.0;
    double lateral = 0.0;
    if (continuous_) {
      const float* a = action.Get<float>(action_index_);
      // np.clip(action, -1, +1).astype(np.float64)
      main = static_cast<double>(std::clamp(a[0], -1.0f, 1.0f));
      lateral = static_cast<double>(std::clamp(a[1], -1.0f, 1.0f));
    } else {
      discrete = static_cast<int>(action.Get<int64_t>(action_index_)[0]);
    }
    return StepWorld(discrete, main, lateral);
  }

  // Gymnasium's render() in rgb_array mode, pixel for pixel: the same pygame calls (raster::), in
  // the same order, on the same float32 vertices. Like Gymnasium's, it ages the particles (their
  // colour fades and they leave the world once their ttl is spent).
  void Render(uint8_t* rgb) override {
    using P = LunarLanderParams;
    raster::Surface surf(P::kViewportW, P::kViewportH);
    surf.Fill({255, 255, 255});
    for (Particle& p : particles_) {
      p.ttl -= 0.15;
      p.color = {static_cast<uint8_t>(static_cast<int>(std::max(0.2, 0.15 + p.ttl) * 255)),
                 static_cast<uint8_t>(static_cast<int>(std::max(0.2, 0.5 * p.ttl) * 255)),
                 static_cast<uint8_t>(static_cast<int>(std::max(0.2, 0.5 * p.ttl) * 255))};
    }
    CleanParticles();
    const double sky = P::kViewportH / P::kScale;
    for (const auto& [x1, y1, x2, y2] : sky_polys_) {
      const std::vector<raster::Point> poly = {{x1 * P::kScale, y1 * P::kScale},
                                               {x2 * P::kScale, y2 * P::kScale},
                                               {x2 * P::kScale, sky * P::kScale},
                                               {x1 * P::kScale, sky * P::kScale}};
      raster::Polygon(surf, {0, 0, 0}, poly);
      raster::GfxAaPolygon(surf, {0, 0, 0}, poly);
    }
    // Gymnasium draws the helipad flags once per fixture drawn (inside that loop); the anti-aliased
    // edges blend again each time, so the repetition shows.
    auto draw_flags = [&] {
      for (const double helipad_x : {helipad_x1_, helipad_x2_}) {
        const double x = helipad_x * P::kScale;
        const double flagy1 = helipad_y_ * P::kScale;
        const double flagy2 = flagy1 + 50;
        raster::Line(surf, {255, 255, 255}, {x, flagy1}, {x, flagy2}, 1);
        const std::vector<raster::Point> flag = {{x, flagy2}, {x, flagy2 - 10}, {x + 25, flagy2 - 5}};
        raster::Polygon(surf, {204, 204, 0}, flag);
        raster::GfxAaPolygon(surf, {204, 204, 0}, flag);
      }
    };
    for (const Particle& p : particles_) {
      const b2Fixture* f = p.body->GetFixtureList();
      const auto* circle = static_cast<const b2CircleShape*>(f->GetShape());
      const b2Vec2 c = static_cast<float>(P::kScale) * b2Mul(p.body->GetTransform(), circle->m_p);
      const double radius = static_cast<double>(circle->m_radius) * P::kScale;
      raster::Circle(surf, p.color, {c.x, c.y}, radius);  // color1
      raster::Circle(surf, p.color, {c.x, c.y}, radius);  // color2, the same
      draw_flags();
    }
    for (const b2Body* body : {lander_, legs_[0], legs_[1]}) {
      for (const b2Fixture* f = body->GetFixtureList(); f; f = f->GetNext()) {
        const auto* poly = static_cast<const b2PolygonShape*>(f->GetShape());
        std::vector<raster::Point> path;
        for (int k = 0; k < poly->m_count; ++k) {
          const b2Vec2 v = static_cast<float>(P::kScale) * b2Mul(body->GetTransform(), poly->m_vertices[k]);
          path.push_back({v.x, v.y});
        }
        raster::Polygon(surf, kBodyColor1, path);
        raster::GfxAaPolygon(surf, kBodyColor1, path);
        raster::AaLines(surf, kBodyColor2, true, path);
        draw_flags();
      }
    }
    surf.WriteRgb(rgb, /*flip_y=*/true, 0, P::kViewportW);
  }

 private:
  // The lander's and the legs' color1 and color2.
  static constexpr raster::Rgb kBodyColor1{128, 102, 230};
  static constexpr raster::Rgb kBodyColor2{77, 77, 128};

  // A flame particle (Gymnasium's _create_particle): a small ball that falls onto the moon.
  struct Particle {
    b2Body* body;
    double ttl;
    raster::Rgb color;  // color1 == color2, set by render()
  };

  b2Body* CreateParticle(double mass, double x, double y, double ttl) {
    b2BodyDef bd;
    bd.type = b2_dynamicBody;
    bd.position = Vec(x, y);
    bd.angle = 0.0f;
    b2Body* body = world_->CreateBody(&bd);
    b2CircleShape circle;
    circle.m_radius = static_cast<float>(2 / LunarLanderParams::kScale);
    circle.m_p = b2Vec2(0.0f, 0.0f);
    b2FixtureDef fd;
    fd.shape = &circle;
    fd.density = static_cast<float>(mass);
    fd.friction = 0.1f;
    fd.filter.categoryBits = 0x0100;
    fd.filter.maskBits = 0x001;  // collide only with ground
    fd.restitution = 0.3f;
    body->CreateFixture(&fd);
    particles_.push_back({body, ttl, {}});
    CleanParticles();
    return body;
  }

  // _clean_particles(False): the oldest particles leave once their ttl is below zero.
  void CleanParticles() {
    while (!particles_.empty() && particles_.front().ttl < 0) {
      world_->DestroyBody(particles_.front().body);
      particles_.pop_front();
    }
  }

  // BeginContact/EndContact of Gymnasium's ContactDetector.
  void BeginContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    if (lander_ == a || lander_ == b) game_over_ = true;
    for (std::size_t i = 0; i < 2; ++i) {
      if (legs_[i] == a || legs_[i] == b) ground_contact_[i] = true;
    }
  }
  void EndContact(b2Contact* contact) override {
    const b2Body* a = contact->GetFixtureA()->GetBody();
    const b2Body* b = contact->GetFixtureB()->GetBody();
    for (std::size_t i = 0; i < 2; ++i) {
      if (legs_[i] == a || legs_[i] == b) ground_contact_[i] = false;
    }
  }

  // Gymnasium's step() with the action decoded: `discrete` (0..3) for the discrete lander, the
  // clipped float64 `main`/`lateral` for the continuous one. Arithmetic is float64 on Box2D's float32
  // values, in Python's evaluation order, so that observations match to the bit.
  StepResult StepWorld(int discrete, double main, double lateral) {
    using P = LunarLanderParams;
    if (enable_wind_ && !(ground_contact_[0] || ground_contact_[1])) {
      // tanh(sin(2 k x) + sin(pi k x)), k = 0.01: never periodic.
      const double wind_mag = std::tanh(std::sin(0.02 * static_cast<double>(wind_idx_)) +
                                        std::sin(P::kPi * 0.01 * static_cast<double>(wind_idx_))) *
                              wind_power_;
      wind_idx_ += 1;
      lander_->ApplyForceToCenter(Vec(wind_mag, 0.0), true);
      const double torque_mag = std::tanh(std::sin(0.02 * static_cast<double>(torque_idx_)) +
                                          std::sin(P::kPi * 0.01 * static_cast<double>(torque_idx_))) *
                                turbulence_power_;
      torque_idx_ += 1;
      lander_->ApplyTorque(static_cast<float>(torque_mag), true);
    }

    const double angle = lander_->GetAngle();
    const double tip0 = std::sin(angle);
    const double tip1 = std::cos(angle);
    const double side0 = -tip1;
    const double side1 = tip0;
    // Drawn every step, fired or not.
    const double dispersion0 = np_random().Uniform(-1.0, +1.0) / P::kScale;
    const double dispersion1 = np_random().Uniform(-1.0, +1.0) / P::kScale;

    double m_power = 0.0;
    if ((continuous_ && main > 0.0) || (!continuous_ && discrete == 2)) {
      m_power = continuous_ ? (std::clamp(main, 0.0, 1.0) + 1.0) * 0.5 : 1.0;
      const double along = P::kMainEngineYLocation / P::kScale + 2 * dispersion0;
      const double ox = tip0 * along + side0 * dispersion1;
      const double oy = -tip1 * along - side1 * dispersion1;
      const b2Vec2 pos = lander_->GetPosition();
      const double px = static_cast<double>(pos.x) + ox;
      const double py = static_cast<double>(pos.y) + oy;
      if (particles_on_) {
        CreateParticle(3.5, px, py, m_power)
            ->ApplyLinearImpulse(Vec(ox * P::kMainEnginePower * m_power, oy * P::kMainEnginePower * m_power),
                                 Vec(px, py), true);
      }
      lander_->ApplyLinearImpulse(Vec(-ox * P::kMainEnginePower * m_power, -oy * P::kMainEnginePower * m_power),
                                  Vec(px, py), true);
    }

    double s_power = 0.0;
    if ((continuous_ && std::abs(lateral) > 0.5) || (!continuous_ && (discrete == 1 || discrete == 3))) {
      double direction;
      if (continuous_) {
        direction = lateral > 0 ? 1.0 : -1.0;  // np.sign; |lateral| > 0.5 here
        s_power = std::clamp(std::abs(lateral), 0.5, 1.0);
      } else {
        direction = discrete - 2;  // 1 is left, 3 is right
        s_power = 1.0;
      }
      const double lever = 3 * dispersion1 + direction * P::kSideEngineAway / P::kScale;
      const double ox = tip0 * dispersion0 + side0 * lever;
      const double oy = -tip1 * dispersion0 - side1 * lever;
      const b2Vec2 pos = lander_->GetPosition();
      const double px = static_cast<double>(pos.x) + ox - tip0 * P::kSideEngineX / P::kScale;
      const double py = static_cast<double>(pos.y) + oy + tip1 * P::kSideEngineHeight / P::kScale;
      if (particles_on_) {
        CreateParticle(0.7, px, py, s_power)
            ->ApplyLinearImpulse(Vec(ox * P::kSideEnginePower * s_power, oy * P::kSideEnginePower * s_power),
                                 Vec(px, py), true);
      }
      lander_->ApplyLinearImpulse(Vec(-ox * P::kSideEnginePower * s_power, -oy * P::kSideEnginePower * s_power),
                                  Vec(px, py), true);
    }

    world_->Step(static_cast<float>(1.0 / P::kFps), P::kVelocityIterations, P::kPositionIterations);

    const b2Vec2 pos = lander_->GetPosition();
    const b2Vec2 vel = lander_->GetLinearVelocity();
    const double half_w = P::kViewportW / P::kScale / 2;
    const double half_h = P::kViewportH / P::kScale / 2;
    const std::array<double, 8> state = {
        (static_cast<double>(pos.x) - half_w) / half_w,
        (static_cast<double>(pos.y) - (helipad_y_ + P::kLegDown / P::kScale)) / half_h,
        static_cast<double>(vel.x) * half_w / P::kFps,
        static_cast<double>(vel.y) * half_h / P::kFps,
        static_cast<double>(lander_->GetAngle()),
        20.0 * static_cast<double>(lander_->GetAngularVelocity()) / P::kFps,
        ground_contact_[0] ? 1.0 : 0.0,
        ground_contact_[1] ? 1.0 : 0.0,
    };

    // -100 * sqrt(x^2 + y^2) - 100 * sqrt(vx^2 + vy^2) - 100 * |angle| + 10 per leg in contact.
    const double shaping = -100 * std::sqrt(state[0] * state[0] + state[1] * state[1]) -
                           100 * std::sqrt(state[2] * state[2] + state[3] * state[3]) - 100 * std::abs(state[4]) +
                           10 * state[6] + 10 * state[7];
    double reward = has_prev_shaping_ ? shaping - prev_shaping_ : 0.0;
    prev_shaping_ = shaping;
    has_prev_shaping_ = true;
    reward -= m_power * 0.30;  // less fuel spent is better
    reward -= s_power * 0.03;

    bool terminated = false;
    if (game_over_ || std::abs(state[0]) >= 1.0) {
      terminated = true;
      reward = -100;
    }
    if (!lander_->IsAwake()) {
      terminated = true;
      reward = +100;
    }

    Slot out = Allocate();
    float* obs = out.Get<float>(obs_index_);
    for (std::size_t k = 0; k < state.size(); ++k) obs[k] = static_cast<float>(state[k]);
    return StepResult{reward, terminated, TimeLimitReached()};
  }

  const int obs_index_;
  const int action_index_;
  const bool continuous_;
  const double gravity_;
  const bool enable_wind_;
  const double wind_power_;
  const double turbulence_power_;
  std::unique_ptr<b2World> world_;
  b2Body* moon_ = nullptr;
  b2Body* lander_ = nullptr;
  std::array<b2Body*, 2> legs_{};
  std::array<bool, 2> ground_contact_{};
  bool game_over_ = false;
  bool has_prev_shaping_ = false;
  double prev_shaping_ = 0.0;
  int64_t wind_idx_ = 0;
  int64_t torque_idx_ = 0;
  double helipad_x1_ = 0.0;
  double helipad_x2_ = 0.0;
  double helipad_y_ = 0.0;
  std::array<std::array<double, 4>, LunarLanderParams::kChunks - 1> sky_polys_{};
  const bool particles_on_;
  std::deque<Particle> particles_;
};

}  // namespace pp::box2d
