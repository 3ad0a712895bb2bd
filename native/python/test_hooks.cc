// The pybind11 module parallel_pool._testing: test hooks that run one piece of the engine (NumPy's
// streams, pygame's rasteriser, the PNG decoder, pygame's text) on inputs a test gives, so that the
// test can compare it with the reference library. Built with PP_BUILD_TEST_HOOKS (default ON); not
// part of the API, and left out of the wheels.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/numpy_random.h"
#include "core/numpy_random_state.h"
#ifdef PP_WITH_TEXT_HOOKS
#include "envs/common/png.h"
#endif
#include "envs/common/pygame_raster.h"
#include "envs/common/pygame_smoothscale.h"

namespace py = pybind11;

namespace pp {
namespace {

// Runs `program`, a list of (method, args, n), in order: run(method, args, n) gives each entry's
// result. Returns the results.
template <typename Run>
py::list RunProgram(const py::list& program, Run run) {
  py::list results;
  for (py::handle entry : program) {
    const auto call = entry.cast<py::tuple>();
    results.append(run(call[0].cast<std::string>(), call[1].cast<py::tuple>(), call[2].cast<int>()));
  }
  return results;
}

// ---- Test hook: core/numpy_random.h against NumPy itself (tests/core/test_numpy_random.py) ----------
// _numpy_random(seed, program) runs `program`, a list of (method, args, n), on one
// NumpyGenerator seeded with `seed` (any int >= 0, as SeedSequence takes it) and returns one array
// per entry; the test runs the same calls on np.random.default_rng(seed). Not part of the API.
py::list NumpyRandomProgram(const py::int_& seed, const py::list& program) {
  if (seed < py::int_(0)) throw py::value_error("seed must be >= 0");
  std::vector<uint32_t> words;
  py::int_ rest = seed;
  const py::int_ mask(0xffffffffULL), zero(0);
  do {
    words.push_back(py::int_(rest & mask).cast<uint32_t>());
    rest = py::int_(rest >> py::int_(32));
  } while (rest > zero);
  NumpyGenerator gen;
  gen.SeedWords(words.data(), static_cast<int>(words.size()));
  return RunProgram(program, [&](const std::string& method, const py::tuple& args, int n) -> py::object {
    auto arg_i = [&](int i) { return args[i].cast<int64_t>(); };
    auto arg_d = [&](int i) { return args[i].cast<double>(); };
    if (method == "next_u64") {
      py::array_t<uint64_t> out(n);
      for (int i = 0; i < n; ++i) out.mutable_at(i) = gen.NextU64();
      return out;
    } else if (method == "next_u32") {
      py::array_t<uint32_t> out(n);
      for (int i = 0; i < n; ++i) out.mutable_at(i) = gen.NextU32();
      return out;
    } else if (method == "random" || method == "uniform" || method == "uniform_n" || method == "standard_normal" ||
               method == "normal") {
      py::array_t<double> out(n);
      double* data = out.mutable_data();
      if (method == "uniform_n") {
        gen.Uniform(arg_d(0), arg_d(1), data, n);
      } else {
        for (int i = 0; i < n; ++i) {
          data[i] = method == "random"            ? gen.Random()
                    : method == "uniform"         ? gen.Uniform(arg_d(0), arg_d(1))
                    : method == "standard_normal" ? gen.StandardNormal()
                                                  : gen.Normal(arg_d(0), arg_d(1));
        }
      }
      return out;
    } else if (method == "integers" || method == "integers_closed" || method == "choice") {
      py::array_t<int64_t> out(n);
      for (int i = 0; i < n; ++i) {
        out.mutable_at(i) = method == "integers"          ? gen.Integers(arg_i(0), arg_i(1))
                            : method == "integers_closed" ? gen.IntegersClosed(arg_i(0), arg_i(1))
                                                          : gen.Choice(arg_i(0));
      }
      return out;
    } else if (method == "integers_n" || method == "integers_closed_n") {
      py::array_t<int64_t> out(n);
      if (method == "integers_n") {
        gen.Integers(arg_i(0), arg_i(1), out.mutable_data(), n);
      } else {
        gen.IntegersClosed(arg_i(0), arg_i(1), out.mutable_data(), n);
      }
      return out;
    } else if (method == "choice_p" || method == "choice_p_n") {
      const auto p = args[0].cast<std::vector<double>>();
      py::array_t<int64_t> out(n);
      if (method == "choice_p_n") {
        gen.Choice(p.data(), static_cast<int>(p.size()), out.mutable_data(), n);
      } else {
        for (int i = 0; i < n; ++i) out.mutable_at(i) = gen.Choice(p.data(), static_cast<int>(p.size()));
      }
      return out;
    } else if (method == "shuffle") {  // n shuffles of arange(k), one after the other
      const auto k = arg_i(0);
      py::array_t<int64_t> out({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(k)});
      for (int i = 0; i < n && k > 0; ++i) {
        int64_t* row = out.mutable_data(i, 0);
        for (int64_t v = 0; v < k; ++v) row[v] = v;
        gen.Shuffle(row, static_cast<std::size_t>(k));
      }
      return out;
    } else {
      throw py::value_error("unknown NumpyGenerator method '" + method + "'");
    }
  });
}

// ---- Test hook: core/numpy_random_state.h against np.random.RandomState (tests/envs/dm_control/test_dm_control.py) --
// _numpy_random_state(seed, program) runs `program`, a list of (method, args, n), on one
// NumpyRandomState(seed) and returns one array per entry. Not part of the API.
py::list NumpyRandomStateProgram(uint64_t seed, const py::list& program) {
  NumpyRandomState gen(seed);
  return RunProgram(program, [&](const std::string& method, const py::tuple& args, int n) -> py::object {
    if (method == "next_u32") {
      py::array_t<uint32_t> out(n);
      for (int i = 0; i < n; ++i) out.mutable_at(i) = gen.NextU32();
      return out;
    } else if (method == "random_sample" || method == "uniform" || method == "standard_normal") {
      py::array_t<double> out(n);
      for (int i = 0; i < n; ++i) {
        out.mutable_at(i) = method == "random_sample" ? gen.RandomSample()
                            : method == "uniform"     ? gen.Uniform(args[0].cast<double>(), args[1].cast<double>())
                                                      : gen.StandardNormal();
      }
      return out;
    } else if (method == "randint" || method == "choice") {
      py::array_t<int64_t> out(n);
      for (int i = 0; i < n; ++i) {
        out.mutable_at(i) = method == "randint" ? gen.Randint(args[0].cast<int64_t>(), args[1].cast<int64_t>())
                                                : gen.Choice(args[0].cast<int64_t>());
      }
      return out;
    } else if (method == "choice_p") {
      const auto p = args[0].cast<std::vector<double>>();
      py::array_t<int64_t> out(n);
      for (int i = 0; i < n; ++i) out.mutable_at(i) = gen.Choice(p.data(), static_cast<int>(p.size()));
      return out;
    } else {
      throw py::value_error("unknown NumpyRandomState method '" + method + "'");
    }
  });
}

// ---- Test hook: envs/common/pygame_raster.h against pygame itself (tests/envs/common/test_pygame_raster.py) ---
// _pygame_raster(width, height, ops, flip_y, x0, out_width) draws `ops`, a list of
// (primitive, (r, g, b), points, arg) on a black raster::Surface(width, height) and returns its
// RGB frame (out_width columns from x0, default all, flipped vertically if flip_y); the test draws the same on a
// pygame.Surface. `arg` is the width (polygon, line, lines), `closed` (lines, aalines) or the
// radius (circle, circle_outline: width 1; aacircle, filled_circle: gfxdraw's, at points[0]); hline and vline
// are gfxdraw's between points[0] and points[1]. Two ops have no pygame call of their own: aa_filled_polygon is
// aapolygon then filled_polygon in one (raster::GfxAaFilledPolygon), and keep_rows, with arg (first, end), keeps the
// writes that follow to those rows (Surface::KeepWritesIn). Not part of the API.
py::array PygameRasterProgram(int width, int height, const py::list& ops, bool flip_y, int x0, int out_width) {
  if (out_width == 0) out_width = width;
  if (width < 1 || height < 1 || out_width < 1) throw py::value_error("width, height and out_width must be >= 1");
  raster::Surface surface(width, height);
  for (py::handle entry : ops) {
    const auto op = entry.cast<py::tuple>();
    const auto name = op[0].cast<std::string>();
    const auto rgb = op[1].cast<std::vector<int>>();
    if (rgb.size() != 3) throw py::value_error("a colour is (r, g, b)");
    const raster::Rgb color{static_cast<uint8_t>(rgb[0]), static_cast<uint8_t>(rgb[1]), static_cast<uint8_t>(rgb[2])};
    std::vector<raster::Point> points;
    for (py::handle p : op[2].cast<py::sequence>()) {
      const auto xy = p.cast<std::vector<double>>();
      points.push_back({xy.at(0), xy.at(1)});
    }
    const py::object arg = op[3];
    if (name == "fill") {
      surface.Fill(color);
    } else if (name == "polygon") {
      raster::Polygon(surface, color, points, arg.cast<int>());
    } else if (name == "line") {
      raster::Line(surface, color, points.at(0), points.at(1), arg.cast<int>());
    } else if (name == "lines") {
      raster::Lines(surface, color, false, points, arg.cast<int>());
    } else if (name == "closed_lines") {
      raster::Lines(surface, color, true, points, arg.cast<int>());
    } else if (name == "aaline") {
      raster::AaLine(surface, color, points.at(0), points.at(1));
    } else if (name == "aalines") {
      raster::AaLines(surface, color, arg.cast<bool>(), points);
    } else if (name == "circle") {
      raster::Circle(surface, color, points.at(0), arg.cast<double>());
    } else if (name == "circle_outline") {  // pygame.draw.circle(..., width=1)
      raster::CircleOutline(surface, color, points.at(0), arg.cast<double>());
    } else if (name == "aapolygon") {
      raster::GfxAaPolygon(surface, color, points);
    } else if (name == "filled_polygon") {
      raster::GfxFilledPolygon(surface, color, points);
    } else if (name == "aa_filled_polygon") {  // aapolygon, then filled_polygon (CarRacing's polygons)
      raster::GfxAaFilledPolygon(surface, color, points);
    } else if (name == "aacircle" || name == "filled_circle") {  // gfxdraw's: integer centre and radius
      const auto x = static_cast<int16_t>(points.at(0).x), y = static_cast<int16_t>(points.at(0).y);
      const auto r = static_cast<int16_t>(arg.cast<int>());
      if (name == "aacircle") {
        raster::GfxAaCircle(surface, color, x, y, r);
      } else {
        raster::GfxFilledCircle(surface, color, x, y, r);
      }
    } else if (name == "hline") {  // gfxdraw.hline(x1 = points[0].x, x2 = points[1].x, y = points[0].y)
      raster::GfxHorizontalLine(surface, color, static_cast<int16_t>(points.at(0).x),
                                static_cast<int16_t>(points.at(1).x), static_cast<int16_t>(points.at(0).y));
    } else if (name == "vline") {  // gfxdraw.vline(x = points[0].x, y1 = points[0].y, y2 = points[1].y)
      raster::GfxVerticalLine(surface, color, static_cast<int16_t>(points.at(0).x),
                              static_cast<int16_t>(points.at(0).y), static_cast<int16_t>(points.at(1).y));
    } else if (name == "keep_rows") {  // Surface::KeepWritesIn(first, end): arg is (first, end)
      const auto rows = arg.cast<std::pair<int, int>>();
      surface.KeepWritesIn(rows.first, rows.second);
    } else {
      throw py::value_error("unknown primitive '" + name + "'");
    }
  }
  py::array_t<uint8_t> frame({height, out_width, 3});
  surface.WriteRgb(frame.mutable_data(), flip_y, x0, out_width);
  return std::move(frame);
}

// The raster code a hook's `simd` argument asks for: "auto", "avx2" or "sse2".
raster::detail::Simd SimdLevel(const std::string& simd) {
  if (simd == "avx2") return raster::detail::Simd::kAvx2;
  if (simd == "sse2") return raster::detail::Simd::kSse2;
  if (simd != "auto") throw py::value_error("simd is 'auto', 'avx2' or 'sse2'");
  return raster::detail::Simd::kAuto;
}

// _pygame_smoothscale(frame, width, height, simd): raster::SmoothScale of an (h, w, 3) uint8 frame,
// as pygame.transform.smoothscale scales a surface holding it (tests/envs/common/test_pygame_raster.py); simd
// "avx2" or "sse2" keeps it to that code where the CPU would take a wider one ("auto": the widest).
py::array PygameSmoothScale(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& frame, int width,
                            int height, const std::string& simd) {
  if (frame.ndim() != 3 || frame.shape(2) != 3) throw py::value_error("frame must be (height, width, 3) uint8");
  if (width < 1 || height < 1) throw py::value_error("width and height must be >= 1");
  const int h = static_cast<int>(frame.shape(0)), w = static_cast<int>(frame.shape(1));
  raster::Surface surface(w, h);
  const uint8_t* p = frame.data();
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x, p += 3) surface.Set(x, y, raster::Surface::Map({p[0], p[1], p[2]}));
  }
  const raster::detail::Simd level = SimdLevel(simd);
  const raster::Surface scaled = raster::SmoothScale(surface, width, height, level);
  py::array_t<uint8_t> out({height, width, 3});
  scaled.WriteRgb(out.mutable_data(), false, 0, width);
  return std::move(out);
}

// _raster_fill_pixels(size, start, count, value, simd): raster::detail::FillPixels of [start,
// start + count) in a zeroed buffer of `size` uint32 values (64-byte aligned), with the code `simd`
// ("auto", "avx2", "sse2") allows (tests/envs/common/test_pygame_raster.py).
py::array RasterFillPixels(int size, int start, int count, uint32_t value, const std::string& simd) {
  if (size < 0 || start < 0 || count < 0 || start + count > size) throw py::value_error("span out of the buffer");
  const raster::detail::Simd level = SimdLevel(simd);
  std::vector<uint32_t> storage(static_cast<std::size_t>(size) + 16, 0u);
  uint32_t* buffer = storage.data();
  while (reinterpret_cast<std::uintptr_t>(buffer) % 64 != 0) ++buffer;
  raster::detail::FillPixels(buffer + start, static_cast<std::size_t>(count), value, level);
  py::array_t<uint32_t> out(size);
  std::copy(buffer, buffer + size, out.mutable_data());
  return std::move(out);
}

// _pygame_rotate_rad(points, angle): raster::RotateRad of each (x, y), as
// pygame.math.Vector2(p).rotate_rad(angle) (tests/envs/common/test_pygame_raster.py).
py::array PygameRotateRad(const std::vector<std::array<double, 2>>& points, double angle) {
  py::array_t<double> out({static_cast<py::ssize_t>(points.size()), py::ssize_t{2}});
  double* data = out.mutable_data();
  for (const auto& [x, y] : points) {
    const raster::Point r = raster::RotateRad({x, y}, angle);
    *data++ = r.x;
    *data++ = r.y;
  }
  return std::move(out);
}

// ---- Test hooks: envs/common/png.h and the sprite half of pygame_raster.h (tests/envs/common/test_pygame_sprites.py)
// --- _png_decode(path) -> (alpha, (h, w, 4) uint8 RGBA): png::Load, compared with pygame.image.load.
#ifdef PP_WITH_TEXT_HOOKS
py::tuple PngDecode(const std::string& path) {
  const png::Image image = png::Load(path);
  py::array_t<uint8_t> rgba({image.height, image.width, 4});
  uint8_t* out = rgba.mutable_data();
  for (uint32_t v : image.argb) {
    *out++ = static_cast<uint8_t>(v >> 16);
    *out++ = static_cast<uint8_t>(v >> 8);
    *out++ = static_cast<uint8_t>(v);
    *out++ = static_cast<uint8_t>(v >> 24);
  }
  return py::make_tuple(image.alpha, std::move(rgba));
}
#endif

// _pygame_blit(background, ops) -> frame: on a raster::Surface holding `background` ((h, w, 3)
// uint8), draws each op and returns the RGB frame. Ops:
//   ("sprite", rgba (h, w, 4) uint8, alpha, (width, height), (x, y), surface_alpha): a Sprite
//       (per-pixel alpha if `alpha`), raster::Scale'd to (width, height), raster::Blit at (x, y);
//   ("filled", (r, g, b), (width, height), (x, y), surface_alpha): raster::BlitFilled;
//   ("rect", (r, g, b), (x, y, width, height), border): raster::Rect.
py::array PygameBlitProgram(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& background,
                            const py::list& ops) {
  if (background.ndim() != 3 || background.shape(2) != 3) throw py::value_error("background must be (h, w, 3) uint8");
  const int h = static_cast<int>(background.shape(0)), w = static_cast<int>(background.shape(1));
  raster::Surface surface(w, h);
  const uint8_t* p = background.data();
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x, p += 3) surface.Set(x, y, raster::Surface::Map({p[0], p[1], p[2]}));
  }
  auto rgb_of = [](const py::handle& o) {
    const auto c = o.cast<std::vector<int>>();
    if (c.size() != 3) throw py::value_error("a colour is (r, g, b)");
    return raster::Rgb{static_cast<uint8_t>(c[0]), static_cast<uint8_t>(c[1]), static_cast<uint8_t>(c[2])};
  };
  for (py::handle entry : ops) {
    const auto op = entry.cast<py::tuple>();
    const auto name = op[0].cast<std::string>();
    if (name == "sprite") {
      const auto rgba = op[1].cast<py::array_t<uint8_t, py::array::c_style | py::array::forcecast>>();
      if (rgba.ndim() != 3 || rgba.shape(2) != 4) throw py::value_error("a sprite is (h, w, 4) uint8");
      raster::Sprite sprite{static_cast<int>(rgba.shape(1)), static_cast<int>(rgba.shape(0)), op[2].cast<bool>(), {}};
      const uint8_t* q = rgba.data();
      for (py::ssize_t i = 0; i < rgba.shape(0) * rgba.shape(1); ++i, q += 4) {
        sprite.argb.push_back(uint32_t{q[3]} << 24 | uint32_t{q[0]} << 16 | uint32_t{q[1]} << 8 | q[2]);
      }
      const auto size = op[3].cast<std::array<int, 2>>();
      const auto at = op[4].cast<std::array<int, 2>>();
      if (size[0] < 1 || size[1] < 1) throw py::value_error("a scaled size is at least 1 x 1");
      raster::Blit(surface, raster::Scale(sprite, size[0], size[1]), at[0], at[1], op[5].cast<int>());
    } else if (name == "filled") {
      const auto size = op[2].cast<std::array<int, 2>>();
      const auto at = op[3].cast<std::array<int, 2>>();
      raster::BlitFilled(surface, rgb_of(op[1]), size[0], size[1], at[0], at[1], op[4].cast<int>());
    } else if (name == "rect") {
      const auto r = op[2].cast<std::array<int, 4>>();
      raster::Rect(surface, rgb_of(op[1]), r[0], r[1], r[2], r[3], op[3].cast<int>());
    } else {
      throw py::value_error("unknown op '" + name + "'");
    }
  }
  py::array_t<uint8_t> frame({h, w, 3});
  surface.WriteRgb(frame.mutable_data(), false, 0, w);
  return frame;
}

}  // namespace

#ifdef PP_WITH_TEXT_HOOKS
// pygame_text_hooks.cc: the hooks of envs/common/pygame_text.h (built where FreeType and zlib are).
void RegisterPygameTextHooks(py::module_& m);
#endif

}  // namespace pp

PYBIND11_MODULE(_testing, m) {
  using namespace pp;
  m.doc() = "parallel_pool's test hooks: engine parts run alone, for comparison with their references";
  // core/numpy_random.h and numpy_random_state.h (tests/core/test_numpy_random.py, test_dm_control.py).
  m.def("numpy_random", &NumpyRandomProgram, py::arg("seed"), py::arg("program"));
  m.def("numpy_random_state", &NumpyRandomStateProgram, py::arg("seed"), py::arg("program"));
  m.def("numpy_ziggurat_tables", [] {
    const py::array_t<uint64_t> k(256, NumpyGenerator::ZigguratK());
    const py::array_t<double> w(256, NumpyGenerator::ZigguratW());
    const py::array_t<double> f(256, NumpyGenerator::ZigguratF());
    return py::make_tuple(k, w, f);
  });
  // envs/common/pygame_raster.h and pygame_smoothscale.h (tests/envs/common/test_pygame_raster.py).
  m.def("pygame_raster", &PygameRasterProgram, py::arg("width"), py::arg("height"), py::arg("ops"),
        py::arg("flip_y") = false, py::arg("x0") = 0, py::arg("out_width") = 0);
  m.def("raster_fill_pixels", &RasterFillPixels, py::arg("size"), py::arg("start"), py::arg("count"), py::arg("value"),
        py::arg("simd") = "auto");
  m.def("pygame_smoothscale", &PygameSmoothScale, py::arg("frame"), py::arg("width"), py::arg("height"),
        py::arg("simd") = "auto");
  m.def("pygame_rotate_rad", &PygameRotateRad, py::arg("points"), py::arg("angle"));
  // envs/common/png.h and pygame_raster.h's sprites (tests/envs/common/test_pygame_sprites.py).
  m.def("pygame_blit", &PygameBlitProgram, py::arg("background"), py::arg("ops"));
#ifdef PP_WITH_TEXT_HOOKS
  m.def("png_decode", &PngDecode, py::arg("path"));
  // envs/common/pygame_text.h (tests/envs/common/test_pygame_text.py).
  RegisterPygameTextHooks(m);
#endif
}
