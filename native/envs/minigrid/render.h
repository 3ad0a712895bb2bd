// minigrid's rgb_array frames in C++, pixel for pixel: tiles drawn at 3x by point-in-shape tests
// (minigrid/utils/rendering.py, world_object.py), highlighted, averaged down, cached per tile kind.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <unordered_map>
#include <vector>

#include "envs/minigrid/world.h"

namespace pp::minigrid {

// COLORS
inline constexpr uint8_t kRgb[kNumColors][3] = {{255, 0, 0},    {0, 255, 0},   {0, 0, 255},
                                                {112, 39, 195}, {255, 255, 0}, {100, 100, 100}};

// One tile at supersampled resolution, drawn as minigrid's fill_coords does: every pixel whose
// centre ((x + 0.5) / size, (y + 0.5) / size) passes the test takes the colour, converted to uint8
// by truncation as NumPy's assignment of a float colour into a uint8 image does.
class TileCanvas {
 public:
  explicit TileCanvas(int size) : size_(size), px_(static_cast<std::size_t>(size * size * 3), 0) {}

  template <typename Test>
  void Fill(Test&& inside, double r, double g, double b) {
    const uint8_t rgb[3] = {static_cast<uint8_t>(r), static_cast<uint8_t>(g), static_cast<uint8_t>(b)};
    for (int y = 0; y < size_; ++y) {
      for (int x = 0; x < size_; ++x) {
        const double yf = (y + 0.5) / size_, xf = (x + 0.5) / size_;
        if (inside(xf, yf)) std::memcpy(&px_[static_cast<std::size_t>((y * size_ + x) * 3)], rgb, 3);
      }
    }
  }
  void Fill(auto&& inside, const uint8_t* c) { Fill(inside, c[0], c[1], c[2]); }

  // highlight_img: img + 0.3 * (255 - img), clipped and truncated to uint8.
  void Highlight() {
    for (uint8_t& p : px_) p = static_cast<uint8_t>(p + 0.3 * static_cast<uint8_t>(255 - p));
  }

  // downsample by `factor`: the mean over each block's columns, then over its rows (float64, in
  // NumPy's summation order), truncated to uint8 as the frame's assignment does.
  std::vector<uint8_t> Downsample(int factor) const {
    const int out_size = size_ / factor;
    std::vector<uint8_t> out(static_cast<std::size_t>(out_size * out_size * 3));
    for (int ty = 0; ty < out_size; ++ty) {
      for (int tx = 0; tx < out_size; ++tx) {
        for (int c = 0; c < 3; ++c) {
          double rows = 0.0;
          for (int sy = 0; sy < factor; ++sy) {
            double cols = 0.0;
            for (int sx = 0; sx < factor; ++sx) cols += At(ty * factor + sy, tx * factor + sx, c);
            const double mean = cols / factor;
            rows = sy == 0 ? mean : rows + mean;
          }
          out[static_cast<std::size_t>((ty * out_size + tx) * 3 + c)] = static_cast<uint8_t>(rows / factor);
        }
      }
    }
    return out;
  }

 private:
  double At(int y, int x, int c) const { return px_[static_cast<std::size_t>((y * size_ + x) * 3 + c)]; }
  int size_;
  std::vector<uint8_t> px_;
};

// point_in_rect(xmin, xmax, ymin, ymax)
inline auto Rect(double xmin, double xmax, double ymin, double ymax) {
  return [=](double x, double y) { return x >= xmin && x <= xmax && y >= ymin && y <= ymax; };
}
// point_in_circle(cx, cy, r)
inline auto Circle(double cx, double cy, double r) {
  return [=](double x, double y) { return (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r; };
}
// point_in_line(x0, y0, x1, y1, r): the segment's ends and direction are float32 arrays in minigrid,
// the point and the projection float64.
inline auto Line(double x0, double y0, double x1, double y1, double r) {
  const float p0x = static_cast<float>(x0), p0y = static_cast<float>(y0);
  const float p1x = static_cast<float>(x1), p1y = static_cast<float>(y1);
  float dx = p1x - p0x, dy = p1y - p0y;
  const float dist = std::sqrt(dx * dx + dy * dy);
  dx = dx / dist;
  dy = dy / dist;
  const double xmin = std::min(x0, x1) - r, xmax = std::max(x0, x1) + r;
  const double ymin = std::min(y0, y1) - r, ymax = std::max(y0, y1) + r;
  return [=](double x, double y) {
    if (x < xmin || x > xmax || y < ymin || y > ymax) return false;
    const double pqx = x - p0x, pqy = y - p0y;
    double a = pqx * dx + pqy * dy;
    a = a < 0.0 ? 0.0 : (a > dist ? static_cast<double>(dist) : a);
    const double px = p0x + a * dx, py = p0y + a * dy;
    const double ex = x - px, ey = y - py;
    return std::sqrt(ex * ex + ey * ey) <= r;
  };
}
// point_in_triangle(a, b, c) by barycentric coordinates: the corners' products in float32, the
// point's in float64, as minigrid's NumPy arithmetic promotes them.
inline auto Triangle(double ax, double ay, double bx, double by, double cx, double cy) {
  const float a0 = static_cast<float>(ax), a1 = static_cast<float>(ay);
  const float v0x = static_cast<float>(cx) - a0, v0y = static_cast<float>(cy) - a1;
  const float v1x = static_cast<float>(bx) - a0, v1y = static_cast<float>(by) - a1;
  const float dot00 = v0x * v0x + v0y * v0y, dot01 = v0x * v1x + v0y * v1y, dot11 = v1x * v1x + v1y * v1y;
  const float inv_denom = 1.0f / (dot00 * dot11 - dot01 * dot01);
  return [=](double x, double y) {
    const double v2x = x - a0, v2y = y - a1;
    const double dot02 = v0x * v2x + v0y * v2y, dot12 = v1x * v2x + v1y * v2y;
    const double u = (static_cast<double>(dot11) * dot02 - static_cast<double>(dot01) * dot12) * inv_denom;
    const double v = (static_cast<double>(dot00) * dot12 - static_cast<double>(dot01) * dot02) * inv_denom;
    return u >= 0 && v >= 0 && (u + v) < 1;
  };
}
// rotate_fn(f, cx, cy, theta)
inline auto Rotate(auto inside, double cx, double cy, double theta) {
  return [=](double x, double y) {
    x = x - cx;
    y = y - cy;
    const double x2 = cx + x * std::cos(-theta) - y * std::sin(-theta);
    const double y2 = cy + y * std::cos(-theta) + x * std::sin(-theta);
    return inside(x2, y2);
  };
}

// WorldObj.render of each kind.
inline void DrawObject(TileCanvas& img, ObjType type, Color color, uint8_t state) {
  const uint8_t* c = kRgb[color];
  constexpr uint8_t kBlack[3] = {0, 0, 0};
  switch (type) {
    case kGoal:
    case kWall: img.Fill(Rect(0, 1, 0, 1), c); break;
    case kFloor: img.Fill(Rect(0.031, 1, 0.031, 1), c[0] / 2.0, c[1] / 2.0, c[2] / 2.0); break;
    case kLava: {
      const uint8_t orange[3] = {255, 128, 0};
      img.Fill(Rect(0, 1, 0, 1), orange);
      for (int i = 0; i < 3; ++i) {
        const double ylo = 0.3 + 0.2 * i, yhi = 0.4 + 0.2 * i;
        img.Fill(Line(0.1, ylo, 0.3, yhi, 0.03), kBlack);
        img.Fill(Line(0.3, yhi, 0.5, ylo, 0.03), kBlack);
        img.Fill(Line(0.5, ylo, 0.7, yhi, 0.03), kBlack);
        img.Fill(Line(0.7, yhi, 0.9, ylo, 0.03), kBlack);
      }
      break;
    }
    case kDoor:
      if (state == kOpen) {
        img.Fill(Rect(0.88, 1.00, 0.00, 1.00), c);
        img.Fill(Rect(0.92, 0.96, 0.04, 0.96), kBlack);
      } else if (state == kLocked) {
        img.Fill(Rect(0.00, 1.00, 0.00, 1.00), c);
        img.Fill(Rect(0.06, 0.94, 0.06, 0.94), 0.45 * c[0], 0.45 * c[1], 0.45 * c[2]);
        img.Fill(Rect(0.52, 0.75, 0.50, 0.56), c);
      } else {
        img.Fill(Rect(0.00, 1.00, 0.00, 1.00), c);
        img.Fill(Rect(0.04, 0.96, 0.04, 0.96), kBlack);
        img.Fill(Rect(0.08, 0.92, 0.08, 0.92), c);
        img.Fill(Rect(0.12, 0.88, 0.12, 0.88), kBlack);
        img.Fill(Circle(0.75, 0.50, 0.08), c);
      }
      break;
    case kKey:
      img.Fill(Rect(0.50, 0.63, 0.31, 0.88), c);
      img.Fill(Rect(0.38, 0.50, 0.59, 0.66), c);
      img.Fill(Rect(0.38, 0.50, 0.81, 0.88), c);
      img.Fill(Circle(0.56, 0.28, 0.190), c);
      img.Fill(Circle(0.56, 0.28, 0.064), kBlack);
      break;
    case kBall: img.Fill(Circle(0.5, 0.5, 0.31), c); break;
    case kBox:
      img.Fill(Rect(0.12, 0.88, 0.12, 0.88), c);
      img.Fill(Rect(0.18, 0.82, 0.18, 0.82), kBlack);
      img.Fill(Rect(0.16, 0.84, 0.47, 0.53), c);
      break;
    default: break;
  }
}

// Grid.render_tile's tiles for one tile size, cached by (object code, agent direction, highlight)
// as minigrid caches them. One per env: no locking.
class TileCache {
 public:
  explicit TileCache(int tile_size) : tile_size_(tile_size) {}
  int tile_size() const { return tile_size_; }

  // `code`: the cell's (type, colour, state), type kEmpty for an empty cell; agent_dir -1: none.
  const std::vector<uint8_t>& Tile(const uint8_t* code, int agent_dir, bool highlight) {
    const uint32_t key =
        ((((uint32_t{code[0]} * 8 + code[1]) * 4 + code[2]) * 8 + static_cast<uint32_t>(agent_dir + 1)) << 1) |
        (highlight ? 1u : 0u);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    constexpr int kSubdivs = 3;
    TileCanvas img(tile_size_ * kSubdivs);
    const uint8_t grid_line[3] = {100, 100, 100};
    img.Fill(Rect(0, 0.031, 0, 1), grid_line);
    img.Fill(Rect(0, 1, 0, 0.031), grid_line);
    if (code[0] != kEmpty) DrawObject(img, static_cast<ObjType>(code[0]), static_cast<Color>(code[1]), code[2]);
    if (agent_dir >= 0) {
      const uint8_t red[3] = {255, 0, 0};
      img.Fill(Rotate(Triangle(0.12, 0.19, 0.87, 0.50, 0.12, 0.81), 0.5, 0.5, 0.5 * std::numbers::pi * agent_dir), red);
    }
    if (highlight) img.Highlight();
    return cache_.emplace(key, img.Downsample(kSubdivs)).first->second;
  }

 private:
  int tile_size_;
  std::unordered_map<uint32_t, std::vector<uint8_t>> cache_;
};

}  // namespace pp::minigrid
