// Test hooks of envs/common/pygame_text.h (tests/envs/common/test_pygame_text.py), registered on
// parallel_pool._testing. Kept in a file of their own so that only it includes FreeType's headers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "envs/common/pygame_text.h"

namespace py = pybind11;

namespace pp {
namespace {

raster::Rgb ToRgb(const std::array<int, 3>& c) {
  for (int v : c) {
    if (v < 0 || v > 255) throw py::value_error("colour components must be in [0, 255]");
  }
  return {static_cast<uint8_t>(c[0]), static_cast<uint8_t>(c[1]), static_cast<uint8_t>(c[2])};
}

// One Font per (path, size), built on first use: the tests render thousands of strings per font.
const text::Font& CachedFont(const std::string& path, int size) {
  static std::mutex mu;
  static std::map<std::pair<std::string, int>, std::unique_ptr<text::Font>> fonts;
  std::lock_guard<std::mutex> lock(mu);
  auto& font = fonts[{path, size}];
  if (!font) font = std::make_unique<text::Font>(path, size);
  return *font;
}

text::TextSurface Render(const std::string& font_path, int size, const std::string& s, const std::array<int, 3>& fg,
                         const std::optional<std::array<int, 3>>& bg) {
  if (size < 1) throw py::value_error("size must be >= 1");
  std::optional<raster::Rgb> background;
  if (bg) background = ToRgb(*bg);
  try {
    return CachedFont(font_path, size).Render(s, ToRgb(fg), background);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

// _pygame_text(font_path, size, text, fg, bg): pygame.font.Font(font_path, size).render(text, True, fg[, bg])
// as an (height, width, 4) uint8 RGBA array: what pygame.image.tobytes(surface, "RGBA") holds (shaded:
// the palette colours, alpha 255; blended: fg everywhere, alpha the coverage).
py::array PygameText(const std::string& font_path, int size, const std::string& s, const std::array<int, 3>& fg,
                     const std::optional<std::array<int, 3>>& bg) {
  const text::TextSurface t = Render(font_path, size, s, fg, bg);
  py::array_t<uint8_t> out({t.height, t.width, 4});
  uint8_t* p = out.mutable_data();
  for (int y = 0; y < t.height; ++y) {
    for (int x = 0; x < t.width; ++x, p += 4) {
      const auto rgba = t.Rgba(x, y);
      std::copy(rgba.begin(), rgba.end(), p);
    }
  }
  return out;
}

// _pygame_text_blit(font_path, size, text, fg, bg, frame, x, y): the rendered text blitted at (x, y) onto
// a surface holding `frame`, an (h, w, 3) uint8 RGB frame, as surface.blit(text_surface, (x, y)) does;
// returns the new frame.
py::array PygameTextBlit(const std::string& font_path, int size, const std::string& s, const std::array<int, 3>& fg,
                         const std::optional<std::array<int, 3>>& bg,
                         const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& frame, int x, int y) {
  if (frame.ndim() != 3 || frame.shape(2) != 3) throw py::value_error("frame must be (height, width, 3) uint8");
  const int h = static_cast<int>(frame.shape(0)), w = static_cast<int>(frame.shape(1));
  if (h < 1 || w < 1) throw py::value_error("frame must not be empty");
  raster::Surface surface(w, h);
  const uint8_t* p = frame.data();
  for (int row = 0; row < h; ++row) {
    for (int col = 0; col < w; ++col, p += 3) surface.Set(col, row, raster::Surface::Map({p[0], p[1], p[2]}));
  }
  text::Blit(surface, Render(font_path, size, s, fg, bg), x, y);
  py::array_t<uint8_t> out({h, w, 3});
  surface.WriteRgb(out.mutable_data(), false, 0, w);
  return out;
}

// _pygame_alpha_blend(src_rgba, dst_rgb): text::detail::BlendOpaque pixel by pixel, (n, 4) and (n, 3)
// uint8 arrays; returns the (n, 3) result, as blitting a per-pixel-alpha surface holding src_rgba onto a
// default surface holding dst_rgb gives it.
py::array PygameAlphaBlend(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& src,
                           const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& dst) {
  if (src.ndim() != 2 || src.shape(1) != 4 || dst.ndim() != 2 || dst.shape(1) != 3 || src.shape(0) != dst.shape(0)) {
    throw py::value_error("src must be (n, 4) and dst (n, 3) uint8");
  }
  const py::ssize_t n = src.shape(0);
  py::array_t<uint8_t> out({n, py::ssize_t{3}});
  const uint8_t* s = src.data();
  const uint8_t* d = dst.data();
  uint8_t* o = out.mutable_data();
  for (py::ssize_t i = 0; i < n; ++i, s += 4, d += 3, o += 3) {
    const uint32_t r = text::detail::BlendOpaque(raster::Surface::Map({d[0], d[1], d[2]}), {s[0], s[1], s[2]}, s[3]);
    o[0] = static_cast<uint8_t>(r >> 16);
    o[1] = static_cast<uint8_t>(r >> 8);
    o[2] = static_cast<uint8_t>(r);
  }
  return out;
}

}  // namespace

void RegisterPygameTextHooks(py::module_& m) {
  m.def("pygame_text", &PygameText, py::arg("font_path"), py::arg("size"), py::arg("text"), py::arg("fg"),
        py::arg("bg") = py::none());
  m.def("pygame_text_blit", &PygameTextBlit, py::arg("font_path"), py::arg("size"), py::arg("text"), py::arg("fg"),
        py::arg("bg"), py::arg("frame"), py::arg("x"), py::arg("y"));
  m.def("pygame_alpha_blend", &PygameAlphaBlend, py::arg("src_rgba"), py::arg("dst_rgb"));
}

}  // namespace pp
