// CarRacing's car on Box2D: the hull, four wheels on revolute joints, and the tyre model of
// gymnasium/envs/box2d/car_dynamics.py (engine, brakes, steering motor, grip on road or grass).
#pragma once

#include <Box2D/Box2D.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "envs/box2d/box2d_util.h"

namespace pp::box2d {

// The constants of car_dynamics.py, under its names; products keep Python's evaluation order
// (left to right, in float64) so that they round as Gymnasium's do.
struct CarParams {
  static constexpr double kSize = 0.02;
  static constexpr double kEnginePower = 100000000 * kSize * kSize;
  static constexpr double kWheelMomentOfInertia = 4000 * kSize * kSize;
  static constexpr double kFrictionLimit = 1000000 * kSize * kSize;  // friction ~ mass ~ size^2
  static constexpr int kWheelR = 27;
  static constexpr int kWheelW = 14;
  static constexpr std::array<std::array<int, 2>, 4> kWheelPos = {{{-55, +80}, {+55, +80}, {-55, -82}, {+55, -82}}};
  static constexpr std::array<std::array<int, 2>, 4> kHullPoly1 = {
      {{-60, +130}, {+60, +130}, {+60, +110}, {-60, +110}}};
  static constexpr std::array<std::array<int, 2>, 4> kHullPoly2 = {{{-15, +120}, {+15, +120}, {+20, +20}, {-20, 20}}};
  static constexpr std::array<std::array<int, 2>, 8> kHullPoly3 = {
      {{+25, +20}, {+50, -10}, {+50, -40}, {+20, -90}, {-20, -90}, {-50, -40}, {-50, -10}, {-25, +20}}};
  static constexpr std::array<std::array<int, 2>, 4> kHullPoly4 = {{{-50, -120}, {+50, -120}, {+50, -90}, {-50, -90}}};
  static constexpr double kWheelRad = 1.0 * kWheelR * kSize;  // front_k * WHEEL_R * SIZE, front_k = 1
  static constexpr double kMaxMotorTorque = 180 * 900 * kSize * kSize;
  static constexpr double kBrakeForce = 15;                      // radians per second
  static constexpr double kForceScale = 205000 * kSize * kSize;  // damps the tyre force's oscillation
  static constexpr std::size_t kMaxParticles = 30;
  static constexpr std::size_t kMaxParticlePoints = 30;
};

// What lies under a body, for the contact listener: the track's tiles and the car's wheels carry
// one of these as Box2D user data (the hull carries none, as in Gymnasium).
struct BodyTag {
  enum class Kind { kTile, kWheel };
  explicit BodyTag(Kind k) : kind(k) {}
  Kind kind;
};

// A skid mark (rendered by rgb_array/human, not by the state pixels): a polyline, black on road,
// mud on grass.
struct SkidParticle {
  bool grass = false;
  std::vector<std::array<double, 2>> poly;
};

// A wheel: Box2D body and joint, plus the state car_dynamics.py keeps on it in Python floats.
struct Wheel : BodyTag {
  Wheel() : BodyTag(Kind::kWheel) {}
  b2Body* body = nullptr;
  b2RevoluteJoint* joint = nullptr;
  double gas = 0.0;
  double brake = 0.0;
  double steer = 0.0;
  double phase = 0.0;  // wheel angle (drawn as the white stripe)
  double omega = 0.0;  // angular velocity
  int tiles = 0;       // road tiles it touches now (all have road_friction 1)
  // Skid marks: Gymnasium's skid_start (a position that follows the wheel, so only whether it is
  // set matters) and the particle it extends, if any (kept alive even once the car's list of
  // particles has dropped it, as in Python).
  bool skid_started = false;
  std::shared_ptr<SkidParticle> skid_particle;
};

class Car {
 public:
  using P = CarParams;

  // Car(world, init_angle, init_x, init_y): the hull, then each wheel and its joint, in
  // Gymnasium's order (Box2D's body and contact lists, hence its results, depend on it).
  Car(b2World* world, double angle, double x, double y) : world_(world) {
    b2BodyDef bd;
    bd.type = b2_dynamicBody;
    bd.position = Vec(x, y);
    bd.angle = static_cast<float>(angle);
    hull_ = world_->CreateBody(&bd);
    AddHullFixture(P::kHullPoly1.data(), P::kHullPoly1.size());
    AddHullFixture(P::kHullPoly2.data(), P::kHullPoly2.size());
    AddHullFixture(P::kHullPoly3.data(), P::kHullPoly3.size());
    AddHullFixture(P::kHullPoly4.data(), P::kHullPoly4.size());
    for (std::size_t i = 0; i < wheels_.size(); ++i) {
      const double wx = P::kWheelPos[i][0];
      const double wy = P::kWheelPos[i][1];
      b2BodyDef wd;
      wd.type = b2_dynamicBody;
      wd.position = Vec(x + wx * P::kSize, y + wy * P::kSize);
      wd.angle = static_cast<float>(angle);
      Wheel& w = wheels_[i];
      w.body = world_->CreateBody(&wd);
      const std::array<std::array<double, 2>, 4> poly = {{{-P::kWheelW, +P::kWheelR},
                                                          {+P::kWheelW, +P::kWheelR},
                                                          {+P::kWheelW, -P::kWheelR},
                                                          {-P::kWheelW, -P::kWheelR}}};
      b2Vec2 vertices[4];
      for (std::size_t k = 0; k < 4; ++k) vertices[k] = Vec(poly[k][0] * 1.0 * P::kSize, poly[k][1] * 1.0 * P::kSize);
      b2PolygonShape shape;
      shape.Set(vertices, 4);
      b2FixtureDef fd;
      fd.shape = &shape;
      fd.density = 0.1f;
      fd.filter.categoryBits = 0x0020;
      fd.filter.maskBits = 0x001;
      fd.restitution = 0.0f;
      w.body->CreateFixture(&fd);
      w.body->SetUserData(static_cast<BodyTag*>(&w));

      b2RevoluteJointDef rjd;
      rjd.bodyA = hull_;
      rjd.bodyB = w.body;
      rjd.localAnchorA = Vec(wx * P::kSize, wy * P::kSize);
      rjd.localAnchorB = b2Vec2(0.0f, 0.0f);
      rjd.enableMotor = true;
      rjd.enableLimit = true;
      rjd.maxMotorTorque = static_cast<float>(P::kMaxMotorTorque);
      rjd.motorSpeed = 0.0f;
      rjd.lowerAngle = -0.4f;
      rjd.upperAngle = +0.4f;
      // box2d-py's revoluteJointDef(bodyA=..., bodyB=...) sets the reference angle from the bodies.
      rjd.referenceAngle =
          static_cast<float>(static_cast<double>(w.body->GetAngle()) - static_cast<double>(hull_->GetAngle()));
      w.joint = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&rjd));
    }
  }
  Car(const Car&) = delete;
  Car& operator=(const Car&) = delete;

  // Car.destroy(): the hull (and with it the joints), then the wheels.
  ~Car() {
    world_->DestroyBody(hull_);
    for (Wheel& w : wheels_) world_->DestroyBody(w.body);
  }

  // Rear-wheel drive; the throttle rises by at most 0.1 a step but drops at once.
  void Gas(double gas) {
    gas = std::clamp(gas, 0.0, 1.0);
    for (std::size_t i = 2; i < 4; ++i) {
      double diff = gas - wheels_[i].gas;
      if (diff > 0.1) diff = 0.1;
      wheels_[i].gas += diff;
    }
  }
  // Above 0.9 the wheels block.
  void Brake(double brake) {
    for (Wheel& w : wheels_) w.brake = brake;
  }
  // The front wheels' target angle; the steering motor turns them towards it.
  void Steer(double steer) {
    wheels_[0].steer = steer;
    wheels_[1].steer = steer;
  }

  // Car.step(dt): per wheel, the steering motor's speed, the engine's and the brake's effect on
  // the wheel's spin, and the tyre force (the slip between spin and ground speed, capped by the
  // grip of road or grass), applied before the world steps.
  void Step(double dt) {
    for (Wheel& w : wheels_) {
      const double joint_angle = w.joint->GetJointAngle();
      const double steer_dir = Sign(w.steer - joint_angle);
      const double steer_val = std::abs(w.steer - joint_angle);
      w.joint->SetMotorSpeed(static_cast<float>(steer_dir * std::min(50.0 * steer_val, 3.0)));

      const bool grass = w.tiles == 0;
      const double friction_limit = grass ? P::kFrictionLimit * 0.6 : P::kFrictionLimit * 1.0;

      const b2Vec2 forw = w.body->GetWorldVector(b2Vec2(0.0f, 1.0f));
      const b2Vec2 side = w.body->GetWorldVector(b2Vec2(1.0f, 0.0f));
      const b2Vec2 v = w.body->GetLinearVelocity();
      const double vf = static_cast<double>(forw.x) * v.x + static_cast<double>(forw.y) * v.y;  // forward speed
      const double vs = static_cast<double>(side.x) * v.x + static_cast<double>(side.y) * v.y;  // side speed

      // Engine power W = I omega domega/dt; 5 keeps the division finite at rest.
      w.omega += dt * P::kEnginePower * w.gas / P::kWheelMomentOfInertia / (std::abs(w.omega) + 5.0);
      fuel_spent_ += dt * P::kEnginePower * w.gas;

      if (w.brake >= 0.9) {
        w.omega = 0;
      } else if (w.brake > 0) {
        const double brake_dir = -Sign(w.omega);
        double brake_val = P::kBrakeForce * w.brake;
        if (std::abs(brake_val) > std::abs(w.omega)) brake_val = std::abs(w.omega);  // low speed: stop
        w.omega += brake_dir * brake_val;
      }
      w.phase += w.omega * dt;

      const double vr = w.omega * P::kWheelRad;  // the rim's speed
      double f_force = -vf + vr;                 // along the slip
      double p_force = -vs;
      f_force *= P::kForceScale;
      p_force *= P::kForceScale;
      double force = std::sqrt(f_force * f_force + p_force * p_force);

      UpdateSkid(w, force, friction_limit, grass);

      if (std::abs(force) > friction_limit) {
        f_force /= force;
        p_force /= force;
        force = friction_limit;
        f_force *= force;
        p_force *= force;
      }
      w.omega -= dt * f_force * P::kWheelRad / P::kWheelMomentOfInertia;
      w.body->ApplyForceToCenter(Vec(p_force * side.x + f_force * forw.x, p_force * side.y + f_force * forw.y), true);
    }
  }

  b2Body* hull() const { return hull_; }
  std::array<Wheel, 4>& wheels() { return wheels_; }
  const std::array<Wheel, 4>& wheels() const { return wheels_; }
  const std::deque<std::shared_ptr<SkidParticle>>& particles() const { return particles_; }
  double fuel_spent() const { return fuel_spent_; }
  // Gymnasium's step zeroes it after each action (it is not part of the reward).
  void ResetFuelSpent() { fuel_spent_ = 0.0; }

 private:
  static double Sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }  // np.sign (NaN aside)

  void AddHullFixture(const std::array<int, 2>* points, std::size_t n) {
    b2Vec2 vertices[b2_maxPolygonVertices];
    for (std::size_t k = 0; k < n; ++k) vertices[k] = Vec(points[k][0] * P::kSize, points[k][1] * P::kSize);
    b2PolygonShape shape;
    shape.Set(vertices, static_cast<int32>(n));
    b2FixtureDef fd;
    fd.shape = &shape;
    fd.density = 1.0f;
    hull_->CreateFixture(&fd);
  }

  // Skid marks where the tyre force exceeds twice the grip: the second such step in a row starts
  // a particle (both its points are the wheel's position now: Gymnasium's skid_start is a live
  // reference to it), later ones extend it up to 30 points; at most 30 particles are kept.
  void UpdateSkid(Wheel& w, double force, double friction_limit, bool grass) {
    const b2Vec2 pos = w.body->GetPosition();
    if (std::abs(force) > 2.0 * friction_limit) {
      SkidParticle* current = w.skid_particle.get();
      if (current != nullptr && current->grass == grass && current->poly.size() < P::kMaxParticlePoints) {
        current->poly.push_back({pos.x, pos.y});
      } else if (!w.skid_started) {
        w.skid_started = true;
      } else {
        w.skid_particle = std::make_shared<SkidParticle>(SkidParticle{grass, {{pos.x, pos.y}, {pos.x, pos.y}}});
        particles_.push_back(w.skid_particle);
        while (particles_.size() > P::kMaxParticles) particles_.pop_front();
        w.skid_started = false;
      }
    } else {
      w.skid_started = false;
      w.skid_particle.reset();
    }
  }

  b2World* world_;
  b2Body* hull_ = nullptr;
  std::array<Wheel, 4> wheels_;
  double fuel_spent_ = 0.0;
  std::deque<std::shared_ptr<SkidParticle>> particles_;
};

}  // namespace pp::box2d
