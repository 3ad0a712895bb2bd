// CarRacing-v3's world: Gymnasium's random track (checkpoints, road tiles, borders, colours), the
// car of car_dynamics.h, tile rewards, lap and off-field termination, as in gymnasium/envs/box2d/car_racing.py.
#pragma once

#include <Box2D/Box2D.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/numpy_random.h"
#include "core/spec.h"
#include "envs/box2d/car_dynamics.h"
#include "envs/common/pygame_raster.h"
#include "envs/common/pygame_smoothscale.h"
#include "envs/common/pygame_text.h"

namespace pp::box2d {

// The constants of car_racing.py, under its names.
struct CarRacingParams {
  static constexpr double kPi = 3.14159265358979323846;  // math.pi
  static constexpr int kStateW = 96;
  static constexpr int kStateH = 96;
  static constexpr int kVideoW = 600;
  static constexpr int kVideoH = 400;
  static constexpr int kWindowW = 1000;
  static constexpr int kWindowH = 800;
  static constexpr double kZoom = 2.7;                 // camera zoom
  static constexpr double kScale = 6.0;                // track scale
  static constexpr double kTrackRad = 900 / kScale;    // the track is a heavily morphed circle
  static constexpr double kPlayfield = 2000 / kScale;  // game over boundary
  static constexpr double kFps = 50;
  static constexpr double kTrackDetailStep = 21 / kScale;
  static constexpr double kTrackTurnRate = 0.31;
  static constexpr double kTrackWidth = 40 / kScale;
  static constexpr double kBorder = 8 / kScale;
  static constexpr int kBorderMinCount = 4;
  static constexpr int kCheckpoints = 12;
  // _create_track gives up after this many points; a lap is a slice of them, so no track has more tiles.
  static constexpr int kNoFreeze = 2500;
  static constexpr int kVelocityIterations = 6 * 30;
  static constexpr int kPositionIterations = 2 * 30;
  static constexpr double kGrassDim = kPlayfield / 20.0;
  // MAX_SHAPE_DIM: max(GRASS_DIM, TRACK_WIDTH, TRACK_DETAIL_STEP) * sqrt(2) * ZOOM * SCALE; the
  // margin around the window within which a polygon with a vertex is drawn.
  static double MaxShapeDim() {
    return std::max({kGrassDim, kTrackWidth, kTrackDetailStep}) * std::sqrt(2.0) * kZoom * kScale;
  }
};

// One point of the track's centre line: Gymnasium's (alpha, beta, x, y) tuple. alpha is the polar
// angle around the origin, beta the road's heading (perpendicular to the direction of travel).
struct TrackPoint {
  double alpha, beta, x, y;
};

// A closed track: the points of one lap (tile i joins point i-1 to point i) and which tiles get a
// red-white border (the hard turns).
struct Track {
  std::vector<TrackPoint> points;
  std::vector<bool> border;
};

// Python's seq[i] for i in [-n, n): negative indices count from the end.
template <typename T>
const T& Wrap(const std::vector<T>& v, int i) {
  return v[static_cast<std::size_t>(i < 0 ? i + static_cast<int>(v.size()) : i)];
}

inline double NpSign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0); }

// One attempt of CarRacing._create_track: 12 random checkpoints around a circle, a path that
// steers towards them lap after lap, and the second full lap cut out of it. Returns nothing when
// that lap fails to close (Gymnasium then draws new checkpoints). Draws 2 uniforms per checkpoint.
inline std::optional<Track> CreateTrack(NumpyGenerator& np_random) {
  using P = CarRacingParams;
  struct Checkpoint {
    double alpha, x, y;
  };
  std::array<Checkpoint, P::kCheckpoints> checkpoints{};
  double start_alpha = 0.0;
  for (int c = 0; c < P::kCheckpoints; ++c) {
    const double noise = np_random.Uniform(0, 2 * P::kPi * 1 / P::kCheckpoints);
    double alpha = 2 * P::kPi * c / P::kCheckpoints + noise;
    double rad = np_random.Uniform(P::kTrackRad / 3, P::kTrackRad);
    if (c == 0) {
      alpha = 0;
      rad = 1.5 * P::kTrackRad;
    }
    if (c == P::kCheckpoints - 1) {
      alpha = 2 * P::kPi * c / P::kCheckpoints;
      start_alpha = 2 * P::kPi * (-0.5) / P::kCheckpoints;
      rad = 1.5 * P::kTrackRad;
    }
    checkpoints[static_cast<std::size_t>(c)] = {alpha, rad * std::cos(alpha), rad * std::sin(alpha)};
  }

  // Drive from checkpoint to checkpoint, turning at most TRACK_TURN_RATE per step.
  double x = 1.5 * P::kTrackRad, y = 0, beta = 0;
  int dest_i = 0;
  int laps = 0;
  int no_freeze = P::kNoFreeze;
  bool visited_other_side = false;
  std::vector<TrackPoint> track;
  for (;;) {
    double alpha = std::atan2(y, x);
    if (visited_other_side && alpha > 0) {
      laps += 1;
      visited_other_side = false;
    }
    if (alpha < 0) {
      visited_other_side = true;
      alpha += 2 * P::kPi;
    }
    Checkpoint dest{};
    for (;;) {  // the first checkpoint ahead; past the last one, look again one turn back
      bool failed = true;
      for (;;) {
        dest = checkpoints[static_cast<std::size_t>(dest_i % P::kCheckpoints)];
        if (alpha <= dest.alpha) {
          failed = false;
          break;
        }
        dest_i += 1;
        if (dest_i % P::kCheckpoints == 0) break;
      }
      if (!failed) break;
      alpha -= 2 * P::kPi;
    }
    const double r1x = std::cos(beta);
    const double r1y = std::sin(beta);
    const double p1x = -r1y;
    const double p1y = r1x;
    const double dest_dx = dest.x - x;  // towards the destination
    const double dest_dy = dest.y - y;
    double proj = r1x * dest_dx + r1y * dest_dy;  // ... projected on the radius
    while (beta - alpha > 1.5 * P::kPi) beta -= 2 * P::kPi;
    while (beta - alpha < -1.5 * P::kPi) beta += 2 * P::kPi;
    const double prev_beta = beta;
    proj *= P::kScale;
    if (proj > 0.3) beta -= std::min(P::kTrackTurnRate, std::abs(0.001 * proj));
    if (proj < -0.3) beta += std::min(P::kTrackTurnRate, std::abs(0.001 * proj));
    x += p1x * P::kTrackDetailStep;
    y += p1y * P::kTrackDetailStep;
    track.push_back({alpha, prev_beta * 0.5 + beta * 0.5, x, y});
    if (laps > 4) break;
    no_freeze -= 1;
    if (no_freeze == 0) break;
  }

  // The closed loop i1..i2: between the last two passes through the start angle.
  int i1 = -1, i2 = -1;
  for (int i = static_cast<int>(track.size()) - 1;; --i) {
    if (i == 0) return std::nullopt;
    const std::size_t k = static_cast<std::size_t>(i);
    const bool pass_through_start = track[k].alpha > start_alpha && track[k - 1].alpha <= start_alpha;
    if (pass_through_start && i2 == -1) {
      i2 = i;
    } else if (pass_through_start && i1 == -1) {
      i1 = i;
      break;
    }
  }
  Track out;
  // track[i1 : i2 - 1]
  out.points.assign(track.begin() + i1, track.begin() + std::max(i1, i2 - 1));
  if (out.points.empty()) return std::nullopt;  // Python would fail on track[0]; unreachable in practice
  const TrackPoint& first = out.points.front();
  const TrackPoint& last = out.points.back();
  const double first_perp_x = std::cos(first.beta);
  const double first_perp_y = std::sin(first.beta);
  // The perpendicular gap between head and tail.
  const double gx = first_perp_x * (first.x - last.x);
  const double gy = first_perp_y * (first.y - last.y);
  if (std::sqrt(gx * gx + gy * gy) > P::kTrackDetailStep) return std::nullopt;

  // Red-white borders where the last BORDER_MIN_COUNT segments all turn the same way, sharply,
  // spread over the BORDER_MIN_COUNT tiles before (in place, so the spread wraps round as in Python).
  const int n = static_cast<int>(out.points.size());
  std::vector<bool> border(static_cast<std::size_t>(n), false);
  for (int i = 0; i < n; ++i) {
    bool good = true;
    double oneside = 0;
    for (int neg = 0; neg < P::kBorderMinCount; ++neg) {
      const double beta1 = Wrap(out.points, i - neg - 0).beta;
      const double beta2 = Wrap(out.points, i - neg - 1).beta;
      good = good && std::abs(beta1 - beta2) > P::kTrackTurnRate * 0.2;
      oneside += NpSign(beta1 - beta2);
    }
    good = good && std::abs(oneside) == P::kBorderMinCount;
    border[static_cast<std::size_t>(i)] = good;
  }
  for (int i = 0; i < n; ++i) {
    for (int neg = 0; neg < P::kBorderMinCount; ++neg) {
      const int j = i - neg < 0 ? i - neg + n : i - neg;
      border[static_cast<std::size_t>(j)] = border[static_cast<std::size_t>(j)] || border[static_cast<std::size_t>(i)];
    }
  }
  out.border = std::move(border);
  return out;
}

// A road tile: a sensor polygon between two track points. The contact listener marks it visited
// and gives its reward; its colour turns to the road colour once anything touches it.
struct Tile : BodyTag {
  Tile() : BodyTag(Kind::kTile) {}
  b2Body* body = nullptr;
  int idx = 0;
  bool visited = false;
  std::array<double, 3> color{};
};

// A polygon of the road as Gymnasium's road_poly lists it for drawing: a tile (whose colour is
// the tile's, current) or a border stripe (white or red).
struct RoadPoly {
  std::array<std::array<double, 2>, 4> vertices{};
  int tile = -1;  // index into the tiles, or -1 for a border stripe
  std::array<double, 3> color{};
};

// The score's font, pygame's default (freesansbold.ttf) at 42 points: loaded when the first env
// needs it and then shared by every env of the process (a text::Font is immutable and calls no
// FreeType after its construction, so the pool's threads read it at once).
class ScoreFont {
 public:
  static constexpr int kSize = 42;
  explicit ScoreFont(std::string path) : path_(std::move(path)) {}
  // Loaded by the first env made (a lock, not std::call_once: its thunk is a std:: template
  // instance, which libstdc++ gives default visibility, and the family library must export only
  // its two entry points; tests/core/test_families.py checks).
  const text::Font& Get() {
    const std::lock_guard<std::mutex> lock(mu_);
    if (!font_) font_ = std::make_unique<const text::Font>(path_, kSize);
    return *font_;
  }

 private:
  std::string path_;
  std::mutex mu_;
  std::unique_ptr<const text::Font> font_;
};

// What CarRacing's frame shows: the world as the env holds it, read when the frame is drawn.
struct CarRacingScene {
  const Car* car = nullptr;
  const std::vector<RoadPoly>* road_poly = nullptr;
  const std::vector<Tile>* tiles = nullptr;  // the current colours of the road_poly tiles
  std::array<double, 3> bg_color{};
  std::array<double, 3> grass_color{};
  double t = 0.0;       // Gymnasium's self.t (the zoom-in of the first second)
  double reward = 0.0;  // Gymnasium's self.reward, the score in the corner
};

// The surfaces a frame is drawn on and scaled into: one set per thread, shared by every env the
// thread draws (a frame is drawn from scratch, so an env leaves nothing in them for the next). A
// pool of many envs keeps a few 1000x800 surfaces warm in the cache, not one per env, and a step
// allocates nothing once they have grown.
struct CarRacingSurfaces {
  raster::Surface window{CarRacingParams::kWindowW, CarRacingParams::kWindowH};
  raster::Surface state{CarRacingParams::kStateW, CarRacingParams::kStateH};
  raster::Surface video{1, 1};  // made on the thread's first render()
  std::vector<uint32_t> scale_tmp;

  static CarRacingSurfaces& OfThisThread() {
    static thread_local CarRacingSurfaces surfaces;
    return surfaces;
  }
};

// Gymnasium's CarRacing._render(mode) on its 1000x800 surface, pixel for pixel: the same pygame
// calls (raster::) in the same order on the same coordinates (Python floats, Box2D's float32
// vertices widened), then smoothscaled to the observation's 96x96 or render()'s 600x400.
class CarRacingCanvas {
 public:
  using P = CarRacingParams;

  explicit CarRacingCanvas(const text::Font& font) : font_(font), max_shape_dim_(P::MaxShapeDim()) {}

  // _render(mode) into `rgb`, (height, width, 3): mode "state_pixels" (the observation, 96x96)
  // leaves the skid marks out, "rgb_array" (600x400) draws them.
  //
  // The 1000x800 surface (3.2 MB) does not fit in a core's L2 cache: drawn whole and then
  // smoothscaled, every pixel would go out to L3 and come back. So the frame's drawing calls are
  // worked out once (Record) and drawn a band of rows at a time, with the surface's writes kept to
  // the band; each band is shrunk along its rows right after, while it is in the cache. Every call
  // draws each row as it would in a frame drawn whole (what a primitive writes on a row depends on
  // its geometry and on that row's pixels only), so the frame is the same.
  void Frame(const CarRacingScene& scene, bool state_pixels, int width, int height, uint8_t* rgb) {
    CarRacingSurfaces& surfaces = CarRacingSurfaces::OfThisThread();
    surf_ = &surfaces.window;
    Record(scene, state_pixels);
    raster::Surface& scaled = state_pixels ? surfaces.state : surfaces.video;
    if (scaled.width() != width || scaled.height() != height) scaled = raster::Surface(width, height);
    for (int first = 0; first < P::kWindowH; first += kBandRows) {
      const int end = std::min(first + kBandRows, P::kWindowH);
      DrawBand(first, end, scene.reward);
      // _create_image_array(surf, (width, height)): smoothscale (its X pass here, band by band).
      raster::SmoothScaleRows(*surf_, first, end, width, surfaces.scale_tmp);
      surf_->FlipVertical();  // back to the world's rows, for the next band
    }
    surf_->KeepWritesIn(0, P::kWindowH);
    raster::SmoothScaleColumns(surfaces.scale_tmp, P::kWindowH, scaled);
    scaled.WriteRgb(rgb, /*flip_y=*/false, 0, width);  // transposed to rows
    surf_ = nullptr;
  }

 private:
  static constexpr int kBandRows = 80;  // 320 KB of the surface: in L2 with room to spare

  // One drawing call of _render, in screen coordinates, with the rows it can write.
  struct Op {
    enum class Kind { kAaFilledPolygon, kPolygon, kLines2 } kind = Kind::kPolygon;
    raster::Rgb color;
    std::vector<raster::Point> points;
    int top = 0, bottom = 0;  // rows [top, bottom] hold every pixel it writes
  };

  // The world's calls (before the flip) and the indicators' (after it), in drawing order. The
  // entries are reused frame after frame: no allocation once they have grown.
  struct OpList {
    std::vector<Op> ops;
    std::size_t size = 0;
    void Clear() { size = 0; }
    void Add(Op::Kind kind, raster::Rgb color, const std::vector<raster::Point>& points) {
      if (size == ops.size()) ops.emplace_back();
      Op& op = ops[size++];
      op.kind = kind;
      op.color = color;
      op.points.assign(points.begin(), points.end());
      // pygame and gfxdraw truncate the coordinates (gfxdraw to Sint16: huge ones wrap), anti-aliased
      // outlines reach a row below, lines 2 pixels wide one to each side: 2 rows of margin, and every
      // row for coordinates out of range.
      double lo = 0, hi = 0;
      bool bounded = !points.empty();
      for (std::size_t k = 0; k < points.size(); ++k) {
        const double y = points[k].y;
        bounded = bounded && std::abs(y) < 30000;  // false for NaN too
        lo = k ? std::min(lo, y) : y;
        hi = k ? std::max(hi, y) : y;
      }
      op.top = bounded ? static_cast<int>(std::floor(lo)) - 2 : std::numeric_limits<int>::min();
      op.bottom = bounded ? static_cast<int>(std::ceil(hi)) + 2 : std::numeric_limits<int>::max();
    }
    // Draws the calls that can write the rows whose writes `s` keeps.
    void Draw(raster::Surface& s) const {
      for (std::size_t i = 0; i < size; ++i) {
        const Op& op = ops[i];
        if (op.bottom < s.write_first() || op.top >= s.write_end()) continue;
        switch (op.kind) {
          case Op::Kind::kAaFilledPolygon: raster::GfxAaFilledPolygon(s, op.color, op.points); break;
          case Op::Kind::kPolygon: raster::Polygon(s, op.color, op.points); break;
          case Op::Kind::kLines2: raster::Lines(s, op.color, /*closed=*/false, op.points, 2); break;
        }
      }
    }
  };

  // _render's calls up to the smoothscale, in screen coordinates.
  void Record(const CarRacingScene& scene, bool state_pixels) {
    const b2Body* hull = scene.car->hull();
    angle_ = -static_cast<double>(hull->GetAngle());
    // The zoom-in of the first second.
    zoom_ = 0.1 * P::kScale * std::max(1 - scene.t, 0.0) + P::kZoom * P::kScale * std::min(scene.t, 1.0);
    const double scroll_x = -static_cast<double>(hull->GetPosition().x) * zoom_;
    const double scroll_y = -static_cast<double>(hull->GetPosition().y) * zoom_;
    rotation_ = raster::Rotation(angle_);
    const raster::Point trans = rotation_({scroll_x, scroll_y});
    trans_ = {P::kWindowW / 2.0 + trans.x, P::kWindowH / 4.0 + trans.y};
    field_covers_window_ = FieldCoversWindow();
    world_.Clear();
    RenderRoad(scene);
    DrawCar(*scene.car, !state_pixels);
    overlay_.Clear();
    RenderIndicators(*scene.car);
  }

  // _render's drawing on the final rows [first, end), as in a frame drawn whole: the world on the
  // rows they are before the flip, then the flip, the indicators and the score. Leaves the surface
  // flipped.
  void DrawBand(int first, int end, double reward) {
    // After the flip, _render_indicators paints rows [H - 5 h, H) black first, opaquely: the rows
    // [0, 5 h) of the world, so the world's drawing there is never seen (nothing reads a pixel of
    // another row) and is left out.
    const int world_first = std::max(P::kWindowH - end, kIndicatorBandRows);
    const int world_end = P::kWindowH - first;
    if (world_first < world_end) {
      surf_->KeepWritesIn(world_first, world_end);
      // A new pygame.Surface is black; the field drawn first covers it all but near the edge of
      // the playfield and while zoomed out, so only then is the black needed.
      if (!field_covers_window_) surf_->Fill({0, 0, 0});
      world_.Draw(*surf_);
    }
    surf_->FlipVertical();
    surf_->KeepWritesIn(first, end);
    overlay_.Draw(*surf_);
    DrawScore(reward);
  }

  // pygame.math.Vector2(c).rotate_rad(angle) * zoom + translation, per coordinate.
  raster::Point ToScreen(double x, double y) const {
    const raster::Point r = rotation_({x, y});
    return {r.x * zoom_ + trans_.x, r.y * zoom_ + trans_.y};
  }

  // pygame takes a colour's components with C's (int) cast: what int() does to the floats of
  // Gymnasium's colour arrays.
  static raster::Rgb Color(const std::array<double, 3>& c) {
    return {static_cast<uint8_t>(static_cast<int>(c[0])), static_cast<uint8_t>(static_cast<int>(c[1])),
            static_cast<uint8_t>(static_cast<int>(c[2]))};
  }

  // _draw_colored_polygon: drawn when a vertex lies within MAX_SHAPE_DIM of the window (always
  // without clip), anti-aliased outline first.
  void DrawColoredPolygon(const std::array<std::array<double, 2>, 4>& poly, raster::Rgb color, bool clip) {
    poly_.resize(4);
    bool near = !clip;
    for (std::size_t k = 0; k < 4; ++k) {
      poly_[k] = ToScreen(poly[k][0], poly[k][1]);
      near = near || (-max_shape_dim_ <= poly_[k].x && poly_[k].x <= P::kWindowW + max_shape_dim_ &&
                      -max_shape_dim_ <= poly_[k].y && poly_[k].y <= P::kWindowH + max_shape_dim_);
    }
    if (!near) return;
    world_.Add(Op::Kind::kAaFilledPolygon, color, poly_);  // gfxdraw.aapolygon, then gfxdraw.filled_polygon
  }

  // The playfield's corners on the screen.
  std::array<std::array<double, 2>, 4> Field() const {
    const double b = P::kPlayfield;
    return {{{b, b}, {b, -b}, {-b, -b}, {-b, b}}};
  }

  // Whether the field's polygon (a square, drawn filled) contains the window with 4 pixels to
  // spare: gfxdraw truncates its vertices and rounds its edges' crossings by a pixel at most, so
  // it then writes every pixel of the window, and its anti-aliased edges none.
  bool FieldCoversWindow() const {
    const auto field = Field();
    std::array<raster::Point, 4> q;
    for (std::size_t k = 0; k < 4; ++k) {
      q[k] = ToScreen(field[k][0], field[k][1]);
      if (!(std::abs(q[k].x) < 30000 && std::abs(q[k].y) < 30000)) return false;  // Sint16 coordinates
    }
    const double corners[4][2] = {
        {0, 0}, {P::kWindowW - 1, 0}, {0, P::kWindowH - 1}, {P::kWindowW - 1, P::kWindowH - 1}};
    const double cx = (q[0].x + q[2].x) / 2, cy = (q[0].y + q[2].y) / 2;  // the centre: inside
    for (std::size_t k = 0; k < 4; ++k) {
      const raster::Point a = q[k], b = q[(k + 1) % 4];
      const double ex = b.x - a.x, ey = b.y - a.y;
      const double length = std::sqrt(ex * ex + ey * ey);
      const double inside = ex * (cy - a.y) - ey * (cx - a.x) > 0 ? 1.0 : -1.0;  // the side the centre is on
      for (const auto& c : corners) {
        if (!(inside * (ex * (c[1] - a.y) - ey * (c[0] - a.x)) >= 4.0 * length)) return false;
      }
    }
    return true;
  }

  // _render_road: the field, the grass patches of a checkerboard, the road.
  void RenderRoad(const CarRacingScene& scene) {
    DrawColoredPolygon(Field(), Color(scene.bg_color), /*clip=*/false);
    const raster::Rgb grass = Color(scene.grass_color);
    const double g = P::kGrassDim;
    for (int x = -20; x < 20; x += 2) {
      for (int y = -20; y < 20; y += 2) {
        DrawColoredPolygon(
            {{{g * x + g, g * y + 0}, {g * x + 0, g * y + 0}, {g * x + 0, g * y + g}, {g * x + g, g * y + g}}}, grass,
            /*clip=*/true);
      }
    }
    for (const RoadPoly& poly : *scene.road_poly) {
      const std::array<double, 3>& color =
          poly.tile >= 0 ? (*scene.tiles)[static_cast<std::size_t>(poly.tile)].color : poly.color;
      DrawColoredPolygon(poly.vertices, Color(color), /*clip=*/true);
    }
  }

  // Car.draw: the skid marks (2 pixels wide), then each wheel and the hull, fixture by fixture,
  // and on each wheel the white stripe that shows its rotation.
  void DrawCar(const Car& car, bool draw_particles) {
    using C = CarParams;
    if (draw_particles) {
      for (const auto& particle : car.particles()) {
        poly_.clear();
        for (const auto& p : particle->poly) poly_.push_back(ToScreen(p[0], p[1]));
        const raster::Rgb color = particle->grass ? raster::Rgb{102, 102, 0} : raster::Rgb{0, 0, 0};
        world_.Add(Op::Kind::kLines2, color, poly_);  // pygame.draw.lines, 2 pixels wide
      }
    }
    auto draw_body = [&](const b2Body* body, raster::Rgb color, const Wheel* wheel) {
      const b2Transform& xf = body->GetTransform();
      // box2d-py lists a body's fixtures in creation order, the reverse of Box2D's list.
      std::array<const b2Fixture*, 4> fixtures{};
      std::size_t count = 0;
      for (const b2Fixture* f = body->GetFixtureList(); f && count < fixtures.size(); f = f->GetNext()) {
        fixtures[count++] = f;
      }
      for (std::size_t i = count; i-- > 0;) {
        const auto* shape = static_cast<const b2PolygonShape*>(fixtures[i]->GetShape());
        poly_.clear();
        for (int k = 0; k < shape->m_count; ++k) {
          const b2Vec2 v = b2Mul(xf, shape->m_vertices[k]);
          poly_.push_back(ToScreen(v.x, v.y));
        }
        world_.Add(Op::Kind::kPolygon, color, poly_);
        if (wheel == nullptr) continue;
        const double a1 = wheel->phase;
        const double a2 = wheel->phase + 1.2;  // radians
        const double s1 = std::sin(a1);
        const double s2 = std::sin(a2);
        double c1 = std::cos(a1);
        double c2 = std::cos(a2);
        if (s1 > 0 && s2 > 0) continue;
        if (s1 > 0) c1 = NpSign(c1);
        if (s2 > 0) c2 = NpSign(c2);
        const double w = -C::kWheelW * C::kSize;
        const double e = +C::kWheelW * C::kSize;
        const std::array<std::array<double, 2>, 4> white = {{{w, C::kWheelR * c1 * C::kSize},
                                                             {e, C::kWheelR * c1 * C::kSize},
                                                             {e, C::kWheelR * c2 * C::kSize},
                                                             {w, C::kWheelR * c2 * C::kSize}}};
        poly_.clear();
        for (const auto& p : white) {
          // box2d-py takes the Python floats as float32 for `trans * v`.
          const b2Vec2 v = b2Mul(xf, b2Vec2(static_cast<float>(p[0]), static_cast<float>(p[1])));
          poly_.push_back(ToScreen(v.x, v.y));
        }
        world_.Add(Op::Kind::kPolygon, {77, 77, 77}, poly_);  // WHEEL_WHITE
      }
    };
    for (const Wheel& wheel : car.wheels()) draw_body(wheel.body, {0, 0, 0}, &wheel);  // WHEEL_COLOR
    draw_body(car.hull(), {204, 0, 0}, nullptr);                                       // int(0.8 * 255)
  }

  static constexpr int kIndicatorBandRows = 5 * (P::kWindowH / 40);  // 5 h

  // _render_indicators on the flipped surface: a black band, the speed, the four wheels' omega,
  // the steering and the hull's angular velocity, each drawn when above 1e-4 in magnitude.
  void RenderIndicators(const Car& car) {
    constexpr double W = P::kWindowW, H = P::kWindowH;
    constexpr double s = W / 40.0, h = H / 40.0;
    poly_ = {{W, H}, {W, H - 5 * h}, {0, H - 5 * h}, {0, H}};
    overlay_.Add(Op::Kind::kPolygon, {0, 0, 0}, poly_);
    auto vertical_ind = [&](double place, double val) {
      poly_ = {{place * s, H - (h + h * val)},
               {(place + 1) * s, H - (h + h * val)},
               {(place + 1) * s, H - h},
               {(place + 0) * s, H - h}};
    };
    auto horiz_ind = [&](double place, double val) {
      poly_ = {{(place + 0) * s, H - 4 * h},
               {(place + val) * s, H - 4 * h},
               {(place + val) * s, H - 2 * h},
               {(place + 0) * s, H - 2 * h}};
    };
    auto render_if_min = [&](double value, raster::Rgb color) {
      if (std::abs(value) > 1e-4) overlay_.Add(Op::Kind::kPolygon, color, poly_);
    };
    const b2Body* hull = car.hull();
    const double vx = hull->GetLinearVelocity().x;
    const double vy = hull->GetLinearVelocity().y;
    const double true_speed = std::sqrt(vx * vx + vy * vy);
    const auto& wheels = car.wheels();
    vertical_ind(5, 0.02 * true_speed);
    render_if_min(true_speed, {255, 255, 255});
    // ABS sensors
    vertical_ind(7, 0.01 * wheels[0].omega);
    render_if_min(wheels[0].omega, {0, 0, 255});
    vertical_ind(8, 0.01 * wheels[1].omega);
    render_if_min(wheels[1].omega, {0, 0, 255});
    vertical_ind(9, 0.01 * wheels[2].omega);
    render_if_min(wheels[2].omega, {51, 0, 255});
    vertical_ind(10, 0.01 * wheels[3].omega);
    render_if_min(wheels[3].omega, {51, 0, 255});
    const double joint_angle = wheels[0].joint->GetJointAngle();
    horiz_ind(20, -10.0 * joint_angle);
    render_if_min(joint_angle, {0, 255, 0});
    const double angular_velocity = hull->GetAngularVelocity();
    horiz_ind(30, -0.8 * angular_velocity);
    render_if_min(angular_velocity, {255, 0, 0});
  }

  // The score: font.render("%04i" % reward, True, white, black), blitted centred at
  // (60, WINDOW_H - WINDOW_H * 2.5 / 40.0) = (60, 750). "%04i" takes int() of the float (towards
  // zero) and pads with zeros after the sign. The text is rendered again only when it changes.
  void DrawScore(double reward) {
    char text[32];
    std::snprintf(text, sizeof text, "%04lld", static_cast<long long>(std::trunc(reward)));
    if (score_text_ != text) {
      score_ = font_.Render(text, {255, 255, 255}, raster::Rgb{0, 0, 0});
      score_text_ = text;
    }
    constexpr int kCenterX = 60;
    constexpr int kCenterY = static_cast<int>(P::kWindowH - P::kWindowH * 2.5 / 40.0);
    // Rect.center = (x, y) puts the corner at (x - w / 2, y - h / 2), C's int division.
    const int top = kCenterY - score_.height / 2;
    if (top >= surf_->write_end() || top + score_.height <= surf_->write_first()) return;  // not in the band
    text::Blit(*surf_, score_, kCenterX - score_.width / 2, top);
  }

  const text::Font& font_;
  std::string score_text_;
  text::TextSurface score_;
  raster::Surface* surf_ = nullptr;  // this thread's window surface, while a frame is drawn
  std::vector<raster::Point> poly_;
  OpList world_;
  OpList overlay_;
  bool field_covers_window_ = false;
  const double max_shape_dim_;
  double angle_ = 0.0;
  raster::Rotation rotation_{0.0};
  double zoom_ = 0.0;
  raster::Point trans_;
};

// Config: Gymnasium's constructor kwargs continuous, lap_complete_percent, domain_randomize and
// verbose (accepted; Gymnasium only prints with it), the time limit, and
//   expose_physics_state  adds the world's state to info (hull, wheels, track, tiles visited,
//                         Gymnasium's running reward, colours, skid marks): what the tests
//                         compare with Gymnasium's env.unwrapped. info["lap_finished"] is always there (Gymnasium sets
//                         it on termination; here it is False on every other step).
inline Config CarRacingDefaults() {
  return Config{{"max_episode_steps", int64_t{1000}}, {"continuous", true}, {"lap_complete_percent", 0.95},
                {"domain_randomize", false},          {"verbose", false},   {"expose_physics_state", false}};
}

// Columns of info["wheels"] (one row per wheel: front left, front right, rear left, rear right).
enum WheelColumn {
  kWheelX,
  kWheelY,
  kWheelAngle,
  kWheelVx,
  kWheelVy,
  kWheelAngularVelocity,
  kWheelJointAngle,
  kWheelOmega,
  kWheelPhase,
  kWheelGas,
  kWheelBrake,
  kWheelSteer,
  kWheelOnRoad,  // 1 if it touches a road tile (road grip), 0 on grass
  kWheelColumns
};

inline EnvSpec CarRacingSpec(const std::string& /*task_id*/, const Config& config) {
  using P = CarRacingParams;
  EnvSpec spec;
  spec.state = {Box("obs", Dtype::kUInt8, {P::kStateH, P::kStateW, 3}, {0.0}, {255.0}),
                // Gymnasium's step info has "lap_finished" only when a lap ends.
                WithPresence(Box("info:lap_finished", Dtype::kBool, {}), InfoPresence::kWhereTrue)};
  spec.render_shape = {P::kVideoH, P::kVideoW, 3};
  spec.render_fps = 50;  // FPS
  if (config.GetBool("expose_physics_state")) {
    // Fixed shapes: the track is padded with NaN to the most points a lap can have.
    spec.state.push_back(Box("info:hull", Dtype::kFloat64, {6}));  // x, y, angle, vx, vy, angular velocity
    spec.state.push_back(Box("info:wheels", Dtype::kFloat64, {4, kWheelColumns}));
    spec.state.push_back(Box("info:track_length", Dtype::kInt64, {}));
    spec.state.push_back(Box("info:track", Dtype::kFloat64, {P::kNoFreeze, 4}));  // alpha, beta, x, y
    spec.state.push_back(Box("info:tile_visited", Dtype::kBool, {P::kNoFreeze}));
    spec.state.push_back(Box("info:tile_visited_count", Dtype::kInt64, {}));
    spec.state.push_back(Box("info:env_reward", Dtype::kFloat64, {}));  // Gymnasium's self.reward
    spec.state.push_back(Box("info:fuel_spent", Dtype::kFloat64, {}));
    spec.state.push_back(Box("info:colors", Dtype::kFloat64, {3, 3}));  // road, background, grass
    spec.state.push_back(Box("info:tile_color", Dtype::kFloat64, {P::kNoFreeze, 3}));
    // The skid marks, oldest first: their points (NaN-padded) and whether each is on grass.
    const int particles = static_cast<int>(CarParams::kMaxParticles);
    const int points = static_cast<int>(CarParams::kMaxParticlePoints);
    spec.state.push_back(Box("info:skid_points", Dtype::kFloat64, {particles, points, 2}));
    spec.state.push_back(Box("info:skid_grass", Dtype::kBool, {particles}));
  }
  if (config.GetBool("continuous")) {
    spec.action = {Box("action", Dtype::kFloat32, {3}, {-1.0, 0.0, 0.0}, {1.0, 1.0, 1.0})};  // steer, gas, brake
  } else {
    spec.action = {Discrete("action", 5)};  // nothing, right, left, gas, brake
  }
  return spec;
}

class CarRacingEnv final : public Env, private b2ContactListener {
 public:
  using P = CarRacingParams;

  CarRacingEnv(const EnvSpec& spec, int env_id, const std::shared_ptr<ScoreFont>& font)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        lap_finished_index_(spec.StateIndex("info:lap_finished")),
        action_index_(spec.ActionIndex("action")),
        continuous_(spec.config.GetBool("continuous")),
        lap_complete_percent_(spec.config.GetFloat("lap_complete_percent")),
        domain_randomize_(spec.config.GetBool("domain_randomize")),
        expose_(spec.config.GetBool("expose_physics_state")),
        // Gymnasium makes one world (no gravity: seen from above) and keeps it across resets,
        // destroying and re-creating the bodies; so do we, in the same order.
        world_(std::make_unique<b2World>(b2Vec2(0.0f, 0.0f))),
        canvas_(font->Get()) {
    world_->SetContactListener(this);
    if (expose_) {
      hull_index_ = spec.StateIndex("info:hull");
      wheels_index_ = spec.StateIndex("info:wheels");
      track_length_index_ = spec.StateIndex("info:track_length");
      track_index_ = spec.StateIndex("info:track");
      tile_visited_index_ = spec.StateIndex("info:tile_visited");
      tile_visited_count_index_ = spec.StateIndex("info:tile_visited_count");
      env_reward_index_ = spec.StateIndex("info:env_reward");
      fuel_spent_index_ = spec.StateIndex("info:fuel_spent");
      colors_index_ = spec.StateIndex("info:colors");
      tile_color_index_ = spec.StateIndex("info:tile_color");
      skid_points_index_ = spec.StateIndex("info:skid_points");
      skid_grass_index_ = spec.StateIndex("info:skid_grass");
    }
  }

  ~CarRacingEnv() override {
    world_->SetContactListener(nullptr);
    Destroy();
  }

  void Reset() override {
    Destroy();
    reward_ = 0.0;
    prev_reward_ = 0.0;
    tile_visited_count_ = 0;
    t_ = 0.0;
    new_lap_ = false;
    // Gymnasium's reset options cannot reach a pool env: every reset of a domain-randomized env
    // draws new colours (its default, options={"randomize": True}).
    if (domain_randomize_) DrawColors();
    std::optional<Track> track;
    while (!(track = CreateTrack(np_random()))) {
    }
    track_ = std::move(*track);
    BuildRoad();
    const TrackPoint& start = track_.points.front();
    car_ = std::make_unique<Car>(world_.get(), start.beta, start.x, start.y);
    // Gymnasium's reset returns the frame of one step without action.
    Advance(false);
  }

  StepResult Step(const Action& action) override {
    if (continuous_) {
      const float* a = action.Get<float>(action_index_);
      car_->Steer(-static_cast<double>(a[0]));
      car_->Gas(static_cast<double>(a[1]));
      car_->Brake(static_cast<double>(a[2]));
    } else {
      const int64_t a = action.Get<int64_t>(action_index_)[0];
      car_->Steer(-0.6 * (a == 1) + 0.6 * (a == 2));
      car_->Gas(0.2 * (a == 3));
      car_->Brake(0.8 * (a == 4));
    }
    return Advance(true);
  }

  // Gymnasium's render() in rgb_array mode: the frame of the world as it is now (the skid marks
  // drawn, the score after this step's cost), 600x400.
  void Render(uint8_t* rgb) override {
    canvas_.Frame(Scene(reward_), /*state_pixels=*/false, P::kVideoW, P::kVideoH, rgb);
  }

  // The world, for drawing it (and for tests).
  const Track& track() const { return track_; }
  const std::vector<Tile>& tiles() const { return tiles_; }
  const std::vector<RoadPoly>& road_poly() const { return road_poly_; }
  const Car& car() const { return *car_; }
  double time() const { return t_; }
  double reward() const { return reward_; }  // Gymnasium's running self.reward (shown in the frame)
  const std::array<double, 3>& road_color() const { return road_color_; }
  const std::array<double, 3>& bg_color() const { return bg_color_; }
  const std::array<double, 3>& grass_color() const { return grass_color_; }

 private:
  CarRacingScene Scene(double shown_reward) const {
    return CarRacingScene{car_.get(), &road_poly_, &tiles_, bg_color_, grass_color_, t_, shown_reward};
  }

  // _reinit_colors(True): road and background uniform in [0, 210), grass one channel greener.
  void DrawColors() {
    np_random().Uniform(0, 210, road_color_.data(), 3);
    np_random().Uniform(0, 210, bg_color_.data(), 3);
    grass_color_ = bg_color_;
    grass_color_[static_cast<std::size_t>(np_random().Integers(0, 3))] += 20;
  }

  // _destroy(): the tiles in order, then the car. Box2D reports the ended contacts to us meanwhile.
  void Destroy() {
    for (Tile& t : tiles_) world_->DestroyBody(t.body);
    car_.reset();
    tiles_.clear();
    road_poly_.clear();
  }

  // The tiles of _create_track (one sensor body each) and the polygons Gymnasium draws.
  void BuildRoad() {
    const int n = static_cast<int>(track_.points.size());
    tiles_.clear();
    tiles_.reserve(static_cast<std::size_t>(n));  // the bodies' user data points into it
    for (int i = 0; i < n; ++i) {
      const TrackPoint& p1 = Wrap(track_.points, i);
      const TrackPoint& p2 = Wrap(track_.points, i - 1);
      const double w = P::kTrackWidth;
      const std::array<double, 2> road1_l = {p1.x - w * std::cos(p1.beta), p1.y - w * std::sin(p1.beta)};
      const std::array<double, 2> road1_r = {p1.x + w * std::cos(p1.beta), p1.y + w * std::sin(p1.beta)};
      const std::array<double, 2> road2_l = {p2.x - w * std::cos(p2.beta), p2.y - w * std::sin(p2.beta)};
      const std::array<double, 2> road2_r = {p2.x + w * std::cos(p2.beta), p2.y + w * std::sin(p2.beta)};
      const std::array<std::array<double, 2>, 4> vertices = {road1_l, road1_r, road2_r, road2_l};

      Tile& tile = tiles_.emplace_back();
      b2BodyDef bd;  // static, at the origin
      tile.body = world_->CreateBody(&bd);
      b2Vec2 v[4];
      for (std::size_t k = 0; k < 4; ++k) v[k] = Vec(vertices[k][0], vertices[k][1]);
      b2PolygonShape shape;
      shape.Set(v, 4);
      b2FixtureDef fd;  // Gymnasium's fd_tile: a default fixture definition
      fd.shape = &shape;
      b2Fixture* fixture = tile.body->CreateFixture(&fd);
      tile.body->SetUserData(static_cast<BodyTag*>(&tile));
      const double shade = 0.01 * (i % 3) * 255;
      for (std::size_t c = 0; c < 3; ++c) tile.color[c] = road_color_[c] + shade;
      tile.idx = i;
      fixture->SetSensor(true);  // after creation, as Gymnasium does
      road_poly_.push_back(RoadPoly{vertices, i, {}});

      if (track_.border[static_cast<std::size_t>(i)]) {
        const double side = NpSign(p2.beta - p1.beta);
        const double b = P::kTrackWidth + P::kBorder;
        const std::array<double, 2> b1_l = {p1.x + side * w * std::cos(p1.beta), p1.y + side * w * std::sin(p1.beta)};
        const std::array<double, 2> b1_r = {p1.x + side * b * std::cos(p1.beta), p1.y + side * b * std::sin(p1.beta)};
        const std::array<double, 2> b2_l = {p2.x + side * w * std::cos(p2.beta), p2.y + side * w * std::sin(p2.beta)};
        const std::array<double, 2> b2_r = {p2.x + side * b * std::cos(p2.beta), p2.y + side * b * std::sin(p2.beta)};
        const std::array<double, 3> color =
            i % 2 == 0 ? std::array<double, 3>{255, 255, 255} : std::array<double, 3>{255, 0, 0};
        road_poly_.push_back(RoadPoly{{b1_l, b1_r, b2_r, b2_l}, -1, color});
      }
    }
  }

  // Gymnasium's FrictionDetector: a touched tile takes the road colour; a wheel on a tile gets
  // road grip, and the first touch of a tile pays 1000 / N and may complete the lap.
  void BeginContact(b2Contact* contact) override { OnContact(contact, true); }
  void EndContact(b2Contact* contact) override { OnContact(contact, false); }
  void OnContact(b2Contact* contact, bool begin) {
    auto* u1 = static_cast<BodyTag*>(contact->GetFixtureA()->GetBody()->GetUserData());
    auto* u2 = static_cast<BodyTag*>(contact->GetFixtureB()->GetBody()->GetUserData());
    Tile* tile = nullptr;
    BodyTag* obj = nullptr;
    if (u1 != nullptr && u1->kind == BodyTag::Kind::kTile) {
      tile = static_cast<Tile*>(u1);
      obj = u2;
    }
    if (u2 != nullptr && u2->kind == BodyTag::Kind::kTile) {
      tile = static_cast<Tile*>(u2);
      obj = u1;
    }
    if (tile == nullptr) return;
    tile->color = road_color_;
    if (obj == nullptr || obj->kind != BodyTag::Kind::kWheel) return;
    Wheel* wheel = static_cast<Wheel*>(obj);
    if (!begin) {
      wheel->tiles -= 1;
      return;
    }
    wheel->tiles += 1;
    if (tile->visited) return;
    tile->visited = true;
    const double n = static_cast<double>(tiles_.size());
    reward_ += 1000.0 / n;
    tile_visited_count_ += 1;
    // A lap is complete when the start tile is reached with enough of the track covered. (Tile 0
    // lies under the car from the reset on, so in practice, in Gymnasium too, a lap ends when every
    // tile has been visited, whatever lap_complete_percent is.)
    if (tile->idx == 0 && static_cast<double>(tile_visited_count_) / n > lap_complete_percent_) new_lap_ = true;
  }

  // Gymnasium's step() after the action reached the car (`has_action` false: the step reset()
  // takes, which neither costs nor pays).
  StepResult Advance(bool has_action) {
    car_->Step(1.0 / P::kFps);
    world_->Step(static_cast<float>(1.0 / P::kFps), P::kVelocityIterations, P::kPositionIterations);
    t_ += 1.0 / P::kFps;
    // Gymnasium draws the observation here, before the step's cost is taken from the score.
    const double shown_reward = reward_;

    double step_reward = 0;
    bool terminated = false;
    bool lap_finished = false;
    if (has_action) {
      reward_ -= 0.1;
      car_->ResetFuelSpent();  // Gymnasium does not charge fuel: it wants the car fast
      step_reward = reward_ - prev_reward_;
      prev_reward_ = reward_;
      if (tile_visited_count_ == static_cast<int64_t>(tiles_.size()) || new_lap_) {
        terminated = true;
        lap_finished = true;
      }
      const b2Vec2 pos = car_->hull()->GetPosition();
      if (std::abs(static_cast<double>(pos.x)) > P::kPlayfield ||
          std::abs(static_cast<double>(pos.y)) > P::kPlayfield) {
        terminated = true;
        lap_finished = false;
        step_reward = -100;
      }
    }
    WriteOutputs(lap_finished, shown_reward);
    return StepResult{step_reward, terminated, has_action && TimeLimitReached()};
  }

  void WriteOutputs(bool lap_finished, double shown_reward) {
    Slot out = Allocate();
    // self._render("state_pixels"): the 96x96 frame without skid marks.
    canvas_.Frame(Scene(shown_reward), /*state_pixels=*/true, P::kStateW, P::kStateH, out.Get<uint8_t>(obs_index_));
    *out.Get<bool>(lap_finished_index_) = lap_finished;
    if (!expose_) return;
    const b2Body* hull = car_->hull();
    double* h = out.Get<double>(hull_index_);
    h[0] = hull->GetPosition().x;
    h[1] = hull->GetPosition().y;
    h[2] = hull->GetAngle();
    h[3] = hull->GetLinearVelocity().x;
    h[4] = hull->GetLinearVelocity().y;
    h[5] = hull->GetAngularVelocity();
    double* wrow = out.Get<double>(wheels_index_);
    for (const Wheel& w : car_->wheels()) {
      wrow[kWheelX] = w.body->GetPosition().x;
      wrow[kWheelY] = w.body->GetPosition().y;
      wrow[kWheelAngle] = w.body->GetAngle();
      wrow[kWheelVx] = w.body->GetLinearVelocity().x;
      wrow[kWheelVy] = w.body->GetLinearVelocity().y;
      wrow[kWheelAngularVelocity] = w.body->GetAngularVelocity();
      wrow[kWheelJointAngle] = w.joint->GetJointAngle();
      wrow[kWheelOmega] = w.omega;
      wrow[kWheelPhase] = w.phase;
      wrow[kWheelGas] = w.gas;
      wrow[kWheelBrake] = w.brake;
      wrow[kWheelSteer] = w.steer;
      wrow[kWheelOnRoad] = w.tiles > 0 ? 1.0 : 0.0;
      wrow += kWheelColumns;
    }
    *out.Get<int64_t>(track_length_index_) = static_cast<int64_t>(track_.points.size());
    double* tr = out.Get<double>(track_index_);
    bool* visited = out.Get<bool>(tile_visited_index_);
    double* tile_color = out.Get<double>(tile_color_index_);
    for (std::size_t i = 0; i < static_cast<std::size_t>(P::kNoFreeze); ++i) {
      if (i < track_.points.size()) {
        const TrackPoint& p = track_.points[i];
        tr[4 * i + 0] = p.alpha;
        tr[4 * i + 1] = p.beta;
        tr[4 * i + 2] = p.x;
        tr[4 * i + 3] = p.y;
        visited[i] = tiles_[i].visited;
        std::copy(tiles_[i].color.begin(), tiles_[i].color.end(), tile_color + 3 * i);
      } else {
        std::fill(tr + 4 * i, tr + 4 * i + 4, std::numeric_limits<double>::quiet_NaN());
        visited[i] = false;
        std::fill(tile_color + 3 * i, tile_color + 3 * i + 3, std::numeric_limits<double>::quiet_NaN());
      }
    }
    *out.Get<int64_t>(tile_visited_count_index_) = tile_visited_count_;
    *out.Get<double>(env_reward_index_) = reward_;
    *out.Get<double>(fuel_spent_index_) = car_->fuel_spent();
    double* colors = out.Get<double>(colors_index_);
    std::copy(road_color_.begin(), road_color_.end(), colors);
    std::copy(bg_color_.begin(), bg_color_.end(), colors + 3);
    std::copy(grass_color_.begin(), grass_color_.end(), colors + 6);
    double* skid = out.Get<double>(skid_points_index_);
    bool* skid_grass = out.Get<bool>(skid_grass_index_);
    constexpr std::size_t kParticleValues = CarParams::kMaxParticlePoints * 2;
    std::fill(skid, skid + CarParams::kMaxParticles * kParticleValues, std::numeric_limits<double>::quiet_NaN());
    std::fill(skid_grass, skid_grass + CarParams::kMaxParticles, false);
    std::size_t k = 0;
    for (const auto& particle : car_->particles()) {
      for (std::size_t j = 0; j < particle->poly.size(); ++j) {
        skid[k * kParticleValues + 2 * j] = particle->poly[j][0];
        skid[k * kParticleValues + 2 * j + 1] = particle->poly[j][1];
      }
      skid_grass[k] = particle->grass;
      ++k;
    }
  }

  const int obs_index_;
  const int lap_finished_index_;
  const int action_index_;
  const bool continuous_;
  const double lap_complete_percent_;
  const bool domain_randomize_;
  const bool expose_;
  int hull_index_ = -1;
  int wheels_index_ = -1;
  int track_length_index_ = -1;
  int track_index_ = -1;
  int tile_visited_index_ = -1;
  int tile_visited_count_index_ = -1;
  int env_reward_index_ = -1;
  int fuel_spent_index_ = -1;
  int colors_index_ = -1;
  int tile_color_index_ = -1;
  int skid_points_index_ = -1;
  int skid_grass_index_ = -1;

  std::unique_ptr<b2World> world_;
  std::unique_ptr<Car> car_;
  Track track_;
  std::vector<Tile> tiles_;
  std::vector<RoadPoly> road_poly_;
  // _init_colors without domain_randomize: Gymnasium's fixed colours.
  std::array<double, 3> road_color_ = {102, 102, 102};
  std::array<double, 3> bg_color_ = {102, 204, 102};
  std::array<double, 3> grass_color_ = {102, 230, 102};
  double reward_ = 0.0;
  double prev_reward_ = 0.0;
  int64_t tile_visited_count_ = 0;
  double t_ = 0.0;
  bool new_lap_ = false;
  CarRacingCanvas canvas_;
};

}  // namespace pp::box2d
