// pygame 2.6.1's text on a pygame.Surface, pixel for pixel: pygame.font.Font(path, size).render(text,
// True, fg[, bg]) as its manylinux wheel runs it (SDL2_ttf 2.20.1 on FreeType 2.12.1 and HarfBuzz 5.1), and
// Surface.blit of the result, for envs whose reference draws text (CarRacing's score, Blackjack's labels).
//
// API:
//   pp::text::Font font("/path/to/font.ttf", 42);   // reads the file; the only FreeType calls
//   pp::text::TextSurface t = font.Render("0123", {255, 255, 255}, pp::raster::Rgb{0, 0, 0});  // shaded
//   pp::text::TextSurface u = font.Render("Player", {255, 255, 255});  // blended (per-pixel alpha)
//   pp::text::Blit(surface, t, x, y);               // surface.blit(t, (x, y)) on a raster::Surface
// A Font is immutable once constructed: it renders every glyph printable ASCII (U+0020..U+007E) can
// produce at construction, then releases FreeType, so any number of threads may Render() at once with
// no lock (FreeType's FT_Face is not thread-safe; no FreeType object outlives the constructor).
// Link FreeType (find_package(Freetype), Freetype::Freetype) into a library that includes this file.
#pragma once

#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_ADVANCES_H
#include FT_TRUETYPE_TABLES_H
#include FT_TRUETYPE_TAGS_H

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "envs/common/pygame_raster.h"

namespace pp::text {

// font.render()'s result. Both modes share one 8-bit coverage map (SDL_ttf ORs each glyph's 8-bit
// antialiasing coverage into it): with a background ("shaded") it indexes a 256-colour palette from bg
// to fg (an 8-bit surface); without ("blended") it is the alpha of an ARGB8888 surface whose colour is
// fg everywhere.
struct TextSurface {
  int width = 0;
  int height = 0;
  bool shaded = false;
  raster::Rgb fg;
  std::array<raster::Rgb, 256> palette{};  // shaded only
  std::vector<uint8_t> coverage;           // width * height, row by row

  uint8_t Coverage(int x, int y) const { return coverage[static_cast<std::size_t>(y) * width + x]; }
  // The pixel as pygame.image.tobytes(surface, "RGBA") gives it.
  std::array<uint8_t, 4> Rgba(int x, int y) const {
    const uint8_t c = Coverage(x, y);
    if (shaded) return {palette[c].r, palette[c].g, palette[c].b, 255};
    return {fg.r, fg.g, fg.b, c};
  }
};

namespace detail {

// SDL_ttf's 26.6 fixed-point helpers (FT_FLOOR / FT_CEIL of SDL_ttf.c).
inline int Floor26(long v) { return static_cast<int>((v & -64) / 64); }
inline int Ceil26(long v) { return Floor26(v + 63); }

// SDL_ttf's exact division by 255 of i * diff for i, |diff| <= 255, rounding as its palette does.
inline int DivideBy255Signed(int x, int sign_val) { return (x + sign_val + (x >> 8)) >> 8; }

inline uint16_t U16(const std::vector<uint8_t>& t, std::size_t at) {
  if (at + 2 > t.size()) throw std::runtime_error("pygame_text: truncated GSUB table");
  return static_cast<uint16_t>(t[at] << 8 | t[at + 1]);
}
inline uint32_t U32(const std::vector<uint8_t>& t, std::size_t at) {
  return static_cast<uint32_t>(U16(t, at)) << 16 | U16(t, at + 2);
}

// OpenType Coverage table: the coverage index of `glyph`, or -1.
inline int CoverageIndex(const std::vector<uint8_t>& t, std::size_t at, uint32_t glyph) {
  const uint16_t format = U16(t, at), count = U16(t, at + 2);
  if (format == 1) {
    for (int i = 0; i < count; ++i) {
      if (U16(t, at + 4 + 2 * i) == glyph) return i;
    }
    return -1;
  }
  if (format == 2) {
    for (int i = 0; i < count; ++i) {
      const std::size_t r = at + 4 + 6 * i;
      if (glyph >= U16(t, r) && glyph <= U16(t, r + 2)) return U16(t, r + 4) + static_cast<int>(glyph - U16(t, r));
    }
    return -1;
  }
  throw std::runtime_error("pygame_text: unknown GSUB coverage format");
}

// One GSUB lookup of the kinds HarfBuzz applies to this text: single (type 1) and ligature (type 4)
// substitution, subtables in order, the first one that covers a glyph wins.
struct Lookup {
  int type = 0;
  std::vector<std::size_t> subtables;  // offsets into the GSUB bytes
};

class Gsub {
 public:
  Gsub() = default;
  // HarfBuzz 5.1's GSUB plan for SDL_ttf's buffer (script HB_SCRIPT_UNKNOWN, no language, LTR): the
  // script 'zzzz', else 'DFLT', 'dflt', then 'latn' (its fallback for old fonts); the default
  // language system; the features its default shaper enables for horizontal LTR text; their
  // lookups once each, in lookup-list order.
  explicit Gsub(std::vector<uint8_t> table) : t_(std::move(table)) {
    if (t_.empty()) return;
    const std::size_t scripts = U16(t_, 4), features = U16(t_, 6), lookups = U16(t_, 8);
    if (U16(t_, 2) != 0 && U32(t_, 10) != 0) {
      throw std::runtime_error(
          "pygame_text: the font's GSUB has feature variations, which this header does not reproduce");
    }
    // The first script found; in it the default language system, else one tagged 'dflt', else none.
    std::size_t script = 0;
    for (const char* want : {"zzzz", "DFLT", "dflt", "latn"}) {
      for (int i = 0; i < U16(t_, scripts) && script == 0; ++i) {
        const std::size_t rec = scripts + 2 + 6 * i;
        if (std::string_view(reinterpret_cast<const char*>(&t_[rec]), 4) == want) script = scripts + U16(t_, rec + 4);
      }
      if (script != 0) break;
    }
    if (script == 0) return;
    std::size_t lang_sys = U16(t_, script) != 0 ? script + U16(t_, script) : 0;
    for (int i = 0; i < U16(t_, script + 2) && lang_sys == 0; ++i) {
      const std::size_t rec = script + 4 + 6 * i;
      if (std::string_view(reinterpret_cast<const char*>(&t_[rec]), 4) == "dflt") lang_sys = script + U16(t_, rec + 4);
    }
    if (lang_sys == 0) return;
    static constexpr std::string_view kEnabled[] = {"rvrn", "ltra", "ltrm", "rand", "abvm", "blwm",
                                                    "ccmp", "locl", "mark", "mkmk", "rlig", "calt",
                                                    "clig", "curs", "dist", "kern", "liga", "rclt"};
    std::vector<int> feature_indices;
    if (U16(t_, lang_sys + 2) != 0xFFFF) feature_indices.push_back(U16(t_, lang_sys + 2));
    for (int i = 0; i < U16(t_, lang_sys + 4); ++i) feature_indices.push_back(U16(t_, lang_sys + 6 + 2 * i));
    std::vector<int> lookup_indices;
    for (std::size_t k = 0; k < feature_indices.size(); ++k) {
      const std::size_t rec = features + 2 + 6 * feature_indices[k];
      const std::string_view tag(reinterpret_cast<const char*>(&t_[rec]), 4);
      const bool required = k == 0 && U16(t_, lang_sys + 2) != 0xFFFF;
      if (!required && std::find(std::begin(kEnabled), std::end(kEnabled), tag) == std::end(kEnabled)) continue;
      const std::size_t feature = features + U16(t_, rec + 4);
      for (int i = 0; i < U16(t_, feature + 2); ++i) lookup_indices.push_back(U16(t_, feature + 4 + 2 * i));
    }
    std::sort(lookup_indices.begin(), lookup_indices.end());
    lookup_indices.erase(std::unique(lookup_indices.begin(), lookup_indices.end()), lookup_indices.end());
    for (int index : lookup_indices) {
      const std::size_t lookup = lookups + U16(t_, lookups + 2 + 2 * index);
      Lookup l;
      l.type = U16(t_, lookup);
      const uint16_t flags = U16(t_, lookup + 2);
      // Without GDEF every printable-ASCII glyph is a base glyph to HarfBuzz, so only flags that skip
      // base glyphs or ligatures (or name a mark filtering set) would change what matches.
      if ((flags & 0x1E) != 0 || (l.type != 1 && l.type != 4)) {
        throw std::runtime_error("pygame_text: the font's GSUB uses a lookup kind this header does not reproduce");
      }
      for (int i = 0; i < U16(t_, lookup + 4); ++i) l.subtables.push_back(lookup + U16(t_, lookup + 6 + 2 * i));
      lookups_.push_back(std::move(l));
    }
  }

  // Applies every lookup to `glyphs` in place, as hb_ot_substitute does for base glyphs.
  void Apply(std::vector<uint32_t>& glyphs) const {
    for (const Lookup& l : lookups_) {
      std::vector<uint32_t> out;
      out.reserve(glyphs.size());
      for (std::size_t i = 0; i < glyphs.size();) {
        std::size_t consumed = 1;
        uint32_t result = glyphs[i];
        for (std::size_t sub : l.subtables) {
          if (l.type == 1 ? Single(sub, glyphs[i], &result) : Ligature(sub, glyphs, i, &result, &consumed)) break;
        }
        out.push_back(result);
        i += consumed;
      }
      glyphs = std::move(out);
    }
  }

  // Every glyph the lookups can produce from `glyphs` (their closure), for the glyph cache.
  std::vector<uint32_t> Closure(std::vector<uint32_t> glyphs) const {
    for (const Lookup& l : lookups_) {
      for (std::size_t sub : l.subtables) {
        const std::size_t n = glyphs.size();
        for (std::size_t i = 0; i < n; ++i) {
          uint32_t result;
          if (l.type == 1 && Single(sub, glyphs[i], &result)) glyphs.push_back(result);
          if (l.type == 4) {
            const std::size_t cov = sub + U16(t_, sub + 2);
            const int c = CoverageIndex(t_, cov, glyphs[i]);
            if (c < 0) continue;
            const std::size_t set = sub + U16(t_, sub + 6 + 2 * c);
            for (int k = 0; k < U16(t_, set); ++k) glyphs.push_back(U16(t_, set + U16(t_, set + 2 + 2 * k)));
          }
        }
      }
    }
    std::sort(glyphs.begin(), glyphs.end());
    glyphs.erase(std::unique(glyphs.begin(), glyphs.end()), glyphs.end());
    return glyphs;
  }

 private:
  bool Single(std::size_t sub, uint32_t glyph, uint32_t* result) const {
    const int c = CoverageIndex(t_, sub + U16(t_, sub + 2), glyph);
    if (c < 0) return false;
    if (U16(t_, sub) == 1) {
      *result = static_cast<uint16_t>(glyph + U16(t_, sub + 4));  // delta modulo 65536
    } else {
      *result = U16(t_, sub + 6 + 2 * c);
    }
    return true;
  }
  bool Ligature(std::size_t sub, const std::vector<uint32_t>& glyphs, std::size_t i, uint32_t* result,
                std::size_t* consumed) const {
    const int c = CoverageIndex(t_, sub + U16(t_, sub + 2), glyphs[i]);
    if (c < 0) return false;
    const std::size_t set = sub + U16(t_, sub + 6 + 2 * c);
    for (int k = 0; k < U16(t_, set); ++k) {
      const std::size_t lig = set + U16(t_, set + 2 + 2 * k);
      const int components = U16(t_, lig + 2);
      if (i + components > glyphs.size()) continue;
      bool match = true;
      for (int m = 1; m < components && match; ++m) match = glyphs[i + m] == U16(t_, lig + 2 + 2 * m);
      if (!match) continue;
      *result = U16(t_, lig);
      *consumed = static_cast<std::size_t>(components);
      return true;
    }
    return false;
  }

  std::vector<uint8_t> t_;
  std::vector<Lookup> lookups_;
};

// One glyph as SDL_ttf caches it: metrics from FT_Load_Glyph (sz_*: FreeType's preset bitmap box),
// advance as HarfBuzz's hb-ft reads it, and the FT_RENDER_MODE_NORMAL coverage bitmap.
struct Glyph {
  uint32_t index = 0;
  int sz_left = 0, sz_top = 0, sz_width = 0, sz_rows = 0;
  int32_t advance = 0;  // 26.6
  int left = 0, top = 0, width = 0, rows = 0;
  std::vector<uint8_t> pixels;  // width * rows
};

struct FtLibrary {
  FT_Library library = nullptr;
  FT_Face face = nullptr;
  ~FtLibrary() {
    if (face != nullptr) FT_Done_Face(face);
    if (library != nullptr) FT_Done_FreeType(library);
  }
};

}  // namespace detail

class Font {
 public:
  static constexpr uint32_t kFirstChar = 0x20, kLastChar = 0x7E;

  // pygame.font.Font(path, size): TTF_OpenFont(path, size), i.e. FT_Set_Char_Size(size pt at 72 dpi),
  // SDL_ttf's charmap choice, TTF_HINTING_NORMAL (FT_LOAD_DEFAULT), kerning on.
  Font(const std::string& path, int size) {
    detail::FtLibrary ft;
    if (FT_Init_FreeType(&ft.library) != 0) throw std::runtime_error("pygame_text: cannot initialise FreeType");
    if (FT_New_Face(ft.library, path.c_str(), 0, &ft.face) != 0) {
      throw std::runtime_error("pygame_text: cannot load the font " + path);
    }
    FT_Face face = ft.face;
    if (!FT_IS_SCALABLE(face) || FT_HAS_COLOR(face)) {
      throw std::runtime_error("pygame_text: " + path + " is not a scalable monochrome font");
    }
    SelectCharmap(face);
    if (FT_Set_Char_Size(face, 0, static_cast<FT_F26Dot6>(size) * 64, 0, 0) != 0) {
      throw std::runtime_error("pygame_text: cannot set the size of " + path);
    }
    // TTF_initFontMetrics.
    const FT_Fixed y_scale = face->size->metrics.y_scale;
    ascent_ = detail::Ceil26(FT_MulFix(face->ascender, y_scale));
    height_ = detail::Ceil26(FT_MulFix(face->ascender - face->descender, y_scale));
    lineskip_ = detail::Ceil26(FT_MulFix(face->height, y_scale));
    // hb_ft_font_changed's x scale, and hb_font_t's 16.16 multiplier from font units (mults_changed).
    const int64_t hb_x_scale = static_cast<int64_t>(
        (static_cast<uint64_t>(face->size->metrics.x_scale) * face->units_per_EM + (1u << 15)) >> 16);
    x_mult_ = (hb_x_scale << 16) / face->units_per_EM;

    FT_ULong length = 0;
    if (FT_Load_Sfnt_Table(face, TTAG_GPOS, 0, nullptr, &length) == 0 && length != 0) {
      throw std::runtime_error("pygame_text: " + path + " has a GPOS table, which this header does not reproduce");
    }
    std::vector<uint8_t> gsub_bytes;
    length = 0;
    if (FT_Load_Sfnt_Table(face, TTAG_GSUB, 0, nullptr, &length) == 0 && length != 0) {
      gsub_bytes.resize(length);
      FT_Load_Sfnt_Table(face, TTAG_GSUB, 0, gsub_bytes.data(), &length);
    }
    gsub_ = detail::Gsub(std::move(gsub_bytes));

    std::vector<uint32_t> indices;
    for (uint32_t c = kFirstChar; c <= kLastChar; ++c) {
      // hb-ft's nominal glyph: the charmap's, or for a symbol font its U+F0xx alias.
      FT_UInt glyph = FT_Get_Char_Index(face, c);
      if (glyph == 0 && face->charmap != nullptr && face->charmap->encoding == FT_ENCODING_MS_SYMBOL) {
        glyph = FT_Get_Char_Index(face, 0xF000u + c);
      }
      char_glyph_[c - kFirstChar] = glyph;
      indices.push_back(char_glyph_[c - kFirstChar]);
    }
    indices = gsub_.Closure(indices);
    for (uint32_t index : indices) glyphs_.push_back(LoadGlyph(face, index));
    // The 'kern' table pairs among the cached glyphs, in font units (HarfBuzz reads the same table).
    const std::size_t n = glyphs_.size();
    kern_.assign(n * n, 0);
    if (FT_HAS_KERNING(face)) {
      for (std::size_t a = 0; a < n; ++a) {
        for (std::size_t b = 0; b < n; ++b) {
          FT_Vector v{};
          if (FT_Get_Kerning(face, glyphs_[a].index, glyphs_[b].index, FT_KERNING_UNSCALED, &v) == 0) {
            kern_[a * n + b] = static_cast<int32_t>(v.x);
          }
        }
      }
    }
  }

  int height() const { return height_; }
  int ascent() const { return ascent_; }
  int lineskip() const { return lineskip_; }

  // font.render(text, True, fg, bg) (shaded; bg given) or font.render(text, True, fg) (blended), for
  // printable-ASCII text (TTF_RenderUTF8_Shaded or TTF_RenderUTF8_Blended).
  TextSurface Render(std::string_view text, raster::Rgb fg, std::optional<raster::Rgb> bg = std::nullopt) const {
    if (text.empty()) throw std::invalid_argument("pygame_text: empty text (pygame makes a 0-wide surface)");
    std::vector<uint32_t> glyph_ids;
    for (char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < kFirstChar || c > kLastChar) {
        throw std::invalid_argument("pygame_text: only printable ASCII text is reproduced");
      }
      glyph_ids.push_back(char_glyph_[c - kFirstChar]);
    }
    gsub_.Apply(glyph_ids);
    std::vector<std::size_t> slots;
    for (uint32_t id : glyph_ids) slots.push_back(Slot(id));

    // hb_shape: advances, then the 'kern' table, each pair's kerning split between the two glyphs.
    const std::size_t n = glyphs_.size();
    std::vector<int32_t> x_advance(slots.size()), x_offset(slots.size(), 0);
    for (std::size_t i = 0; i < slots.size(); ++i) x_advance[i] = glyphs_[slots[i]].advance;
    for (std::size_t i = 0; i + 1 < slots.size(); ++i) {
      const int32_t units = kern_[slots[i] * n + slots[i + 1]];
      if (units == 0) continue;
      const auto kern =
          static_cast<int32_t>((static_cast<int64_t>(static_cast<int16_t>(units)) * x_mult_ + 32768) >> 16);
      const int32_t kern1 = kern >> 1, kern2 = kern - kern1;
      x_advance[i] += kern1;
      x_advance[i + 1] += kern2;
      x_offset[i + 1] += kern2;
    }

    // TTF_Size_Internal: 26.6 pen positions and the bounding box of the glyphs' preset boxes.
    std::vector<int32_t> pos_x(slots.size());
    const int32_t pos_y = ascent_ * 64;
    int32_t x = 0;
    int minx = 0, maxx = 0, miny = 0, maxy = height_;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const detail::Glyph& g = glyphs_[slots[i]];
      pos_x[i] = x + x_offset[i];
      x += x_advance[i];
      const int gx = detail::Floor26(pos_x[i]) + g.sz_left;
      const int gy = detail::Floor26(pos_y) - g.sz_top;
      minx = std::min(minx, gx);
      maxx = std::max(maxx, gx + g.sz_width);
      miny = std::min(miny, gy);
      maxy = std::max(maxy, gy + g.sz_rows);
    }
    maxx = std::max(maxx, detail::Floor26(x));
    const int xstart = minx < 0 ? -minx : 0;
    const int ystart = miny < 0 ? -miny : 0;

    TextSurface out;
    out.width = maxx - minx;
    out.height = maxy - miny;
    if (out.width == 0) throw std::invalid_argument("pygame_text: text has zero width");
    out.fg = fg;
    out.shaded = bg.has_value();
    if (out.shaded) out.palette = ShadedPalette(fg, *bg);
    out.coverage.assign(static_cast<std::size_t>(out.width) * out.height, 0);

    // Render_Line: each glyph's coverage ORed in at its floored pen position, clipped to the surface.
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const detail::Glyph& g = glyphs_[slots[i]];
      const int gx = xstart + detail::Floor26(pos_x[i]) + g.left;
      const int gy = ystart + detail::Floor26(pos_y) - g.top;
      for (int row = 0; row < g.rows; ++row) {
        const int y = gy + row;
        if (y < 0 || y >= out.height) continue;
        for (int col = 0; col < g.width; ++col) {
          const int px = gx + col;
          if (px < 0 || px >= out.width) continue;
          out.coverage[static_cast<std::size_t>(y) * out.width + px] |=
              g.pixels[static_cast<std::size_t>(row) * g.width + col];
        }
      }
    }
    return out;
  }

 private:
  // TTF_OpenFont's charmap: UCS-4 (3, 10) first, then Windows Unicode or Symbol, ISO Unicode, Apple Unicode.
  static void SelectCharmap(FT_Face face) {
    FT_CharMap found = nullptr;
    for (int i = 0; i < face->num_charmaps && found == nullptr; ++i) {
      const FT_CharMap cm = face->charmaps[i];
      if (cm->platform_id == 3 && cm->encoding_id == 10) found = cm;
    }
    for (int i = 0; i < face->num_charmaps && found == nullptr; ++i) {
      const FT_CharMap cm = face->charmaps[i];
      if ((cm->platform_id == 3 && (cm->encoding_id == 1 || cm->encoding_id == 0)) ||
          (cm->platform_id == 2 && cm->encoding_id == 1) || cm->platform_id == 0) {
        found = cm;
      }
    }
    if (found != nullptr) FT_Set_Charmap(face, found);
  }

  static detail::Glyph LoadGlyph(FT_Face face, uint32_t index) {
    detail::Glyph g;
    g.index = index;
    // hb-ft's advance: FT_Get_Advance with the load flags SDL_ttf gives it (FT_LOAD_DEFAULT), 16.16
    // rounded to 26.6.
    FT_Fixed advance = 0;
    if (FT_Get_Advance(face, index, FT_LOAD_DEFAULT, &advance) != 0) {
      throw std::runtime_error("pygame_text: cannot read a glyph advance");
    }
    g.advance = static_cast<int32_t>((advance + (1 << 9)) >> 10);
    if (FT_Load_Glyph(face, index, FT_LOAD_DEFAULT) != 0) throw std::runtime_error("pygame_text: cannot load a glyph");
    FT_GlyphSlot slot = face->glyph;
    g.sz_left = slot->bitmap_left;
    g.sz_top = slot->bitmap_top;
    g.sz_rows = static_cast<int>(slot->bitmap.rows);
    g.sz_width = static_cast<int>(slot->bitmap.width);
    if (g.sz_left == 0 && g.sz_top == 0 && g.sz_rows == 0 && g.sz_width == 0) {
      // Load_Glyph's fallback to the outline metrics when FreeType presets no bitmap box.
      const FT_Glyph_Metrics& m = slot->metrics;
      const int minx = detail::Floor26(m.horiBearingX);
      const int maxx = detail::Ceil26(m.horiBearingX + m.width);
      const int maxy = detail::Floor26(m.horiBearingY);
      const int miny = maxy - detail::Ceil26(m.height);
      g.sz_left = minx;
      g.sz_top = maxy;
      g.sz_rows = maxy - miny;
      g.sz_width = maxx - minx;
    }
    if (FT_Render_Glyph(slot, FT_RENDER_MODE_NORMAL) != 0)
      throw std::runtime_error("pygame_text: cannot render a glyph");
    const FT_Bitmap& bm = slot->bitmap;
    if (bm.pixel_mode != FT_PIXEL_MODE_GRAY && bm.width != 0 && bm.rows != 0) {
      throw std::runtime_error("pygame_text: FreeType rendered a glyph that is not 8-bit grey");
    }
    g.left = slot->bitmap_left;
    g.top = slot->bitmap_top;
    g.width = static_cast<int>(bm.width);
    g.rows = g.width == 0 ? 0 : static_cast<int>(bm.rows);
    g.pixels.resize(static_cast<std::size_t>(g.width) * g.rows);
    for (int r = 0; r < g.rows; ++r) {
      const unsigned char* src = bm.buffer + static_cast<std::ptrdiff_t>(r) * bm.pitch;
      std::copy(src, src + g.width, g.pixels.begin() + static_cast<std::ptrdiff_t>(r) * g.width);
    }
    return g;
  }

  // Create_Surface_Shaded's palette: 256 levels from bg to fg, both opaque.
  static std::array<raster::Rgb, 256> ShadedPalette(raster::Rgb fg, raster::Rgb bg) {
    std::array<raster::Rgb, 256> p{};
    auto level = [](uint8_t from, uint8_t to, int i) {
      const int diff = to - from;
      return static_cast<uint8_t>(from + detail::DivideBy255Signed(i * diff, diff >= 0 ? 1 : 255));
    };
    for (int i = 0; i < 256; ++i) p[i] = {level(bg.r, fg.r, i), level(bg.g, fg.g, i), level(bg.b, fg.b, i)};
    return p;
  }

  std::size_t Slot(uint32_t glyph) const {
    for (std::size_t i = 0; i < glyphs_.size(); ++i) {
      if (glyphs_[i].index == glyph) return i;
    }
    throw std::logic_error("pygame_text: a glyph missing from the cache");
  }

  int ascent_ = 0, height_ = 0, lineskip_ = 0;
  int64_t x_mult_ = 0;
  std::array<uint32_t, kLastChar - kFirstChar + 1> char_glyph_{};
  detail::Gsub gsub_;
  std::vector<detail::Glyph> glyphs_;  // sorted by glyph index
  std::vector<int32_t> kern_;          // glyphs_.size() squared, font units
};

namespace detail {

// pygame 2.6.1's blit of one ARGB8888 source pixel (colour `src`, alpha `alpha`) onto an opaque 32-bit
// destination pixel: its own alpha blitter (alphablit.c, SSE2 and C alike), per channel
// d' = floor(((s - d) * a + s) / 256) + d. Checked against pygame for every (s, d, a).
inline uint32_t BlendOpaque(uint32_t dst, raster::Rgb src, uint8_t alpha) {
  auto channel = [alpha](int s, uint32_t d) {
    const int dc = static_cast<int>(d & 0xffu);
    return static_cast<uint32_t>((((s - dc) * alpha + s) >> 8) + dc);
  };
  return channel(src.r, dst >> 16) << 16 | channel(src.g, dst >> 8) << 8 | channel(src.b, dst);
}

}  // namespace detail

// surface.blit(text, (x, y)) as pygame 2.6.1 does it onto the 32-bit surface pygame.Surface((w, h))
// makes, clipped to it. Shaded text (8-bit, no colorkey, no alpha) is copied through its palette;
// blended text (ARGB8888, per-pixel alpha) is blended with detail::BlendOpaque.
inline void Blit(raster::Surface& dst, const TextSurface& text, int x, int y) {
  for (int row = 0; row < text.height; ++row) {
    const int dy = y + row;
    if (dy < 0 || dy >= dst.height() || !dst.Writable(dy)) continue;  // a row whose writes are dropped
    for (int col = 0; col < text.width; ++col) {
      const int dx = x + col;
      if (dx < 0 || dx >= dst.width()) continue;
      const uint8_t c = text.Coverage(col, row);
      if (text.shaded) {
        dst.Set(dx, dy, raster::Surface::Map(text.palette[c]));
      } else {
        dst.Set(dx, dy, detail::BlendOpaque(dst.Get(dx, dy), text.fg, c));
      }
    }
  }
}

}  // namespace pp::text
