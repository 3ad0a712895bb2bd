// What the Box2D envs share: Gymnasium's Python floats handed to Box2D as float32 vectors, and the
// one-polygon body of BipedalWalker's hull and LunarLander's lander, and their legs.
#pragma once

#include <Box2D/Box2D.h>

#include <array>
#include <cstddef>

namespace pp::box2d {

inline b2Vec2 Vec(double x, double y) { return b2Vec2(static_cast<float>(x), static_cast<float>(y)); }

// A dynamic body at `position` with one polygon fixture: `poly`'s points (pixels) over `scale`,
// density 5, friction 0.1, no restitution, of `category_bits`, colliding only with the ground
// (category 0x001), as both Gymnasium envs make theirs.
template <std::size_t N>
b2Body* AddPolygonBody(b2World& world, b2Vec2 position, const std::array<std::array<int, 2>, N>& poly, double scale,
                       uint16 category_bits) {
  b2BodyDef bd;
  bd.type = b2_dynamicBody;
  bd.position = position;
  b2Body* body = world.CreateBody(&bd);
  b2Vec2 vertices[N];
  for (std::size_t k = 0; k < N; ++k) vertices[k] = Vec(poly[k][0] / scale, poly[k][1] / scale);
  b2PolygonShape shape;
  shape.Set(vertices, static_cast<int32>(N));
  b2FixtureDef fd;
  fd.shape = &shape;
  fd.density = 5.0f;
  fd.friction = 0.1f;
  fd.filter.categoryBits = category_bits;
  fd.filter.maskBits = 0x001;
  fd.restitution = 0.0f;
  body->CreateFixture(&fd);
  return body;
}

// A leg of BipedalWalker or LunarLander: a dynamic body at `position` turned by `angle`, with one
// box fixture of half extents (half_w, half_h), density 1, no restitution, of category 0x0020,
// colliding only with the ground, as both Gymnasium envs make theirs.
inline b2Body* AddLegBody(b2World& world, b2Vec2 position, float angle, double half_w, double half_h) {
  b2BodyDef bd;
  bd.type = b2_dynamicBody;
  bd.position = position;
  bd.angle = angle;
  b2Body* body = world.CreateBody(&bd);
  b2PolygonShape box;
  box.SetAsBox(static_cast<float>(half_w), static_cast<float>(half_h));
  b2FixtureDef fd;
  fd.shape = &box;
  fd.density = 1.0f;
  fd.restitution = 0.0f;
  fd.filter.categoryBits = 0x0020;
  fd.filter.maskBits = 0x001;
  body->CreateFixture(&fd);
  return body;
}

}  // namespace pp::box2d
