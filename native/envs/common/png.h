// A small PNG decoder (zlib inflates, the rest is here) for the sprites envs read at run time from an
// installed package, giving the pixels pygame.image.load (SDL_image 2.0.5 with libpng) gives.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/common/argb_image.h"

namespace pp::png {

// A decoded image.
using Image = ArgbImage;

namespace detail {

inline uint32_t Be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

inline int Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

}  // namespace detail

// Decodes a non-interlaced PNG of colour type 0 (grey), 2 (RGB), 3 (palette, 1/2/4/8 bits),
// 4 (grey + alpha) or 6 (RGBA) at 8 bits per channel: what the sprites this project reads use. Any
// other PNG (16-bit channels, interlacing, a colour key from tRNS on grey/RGB or a single
// transparent palette index, which SDL_image turns into a colour key) throws std::runtime_error
// naming `what`, rather than decoding to something pygame would not show.
inline Image Decode(const std::vector<uint8_t>& file, const std::string& what) {
  auto fail = [&](const std::string& why) { throw std::runtime_error("PNG " + what + ": " + why); };
  static constexpr uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (file.size() < 8 || !std::equal(kSignature, kSignature + 8, file.begin())) fail("not a PNG file");
  int width = 0, height = 0, bit_depth = 0, color_type = -1;
  std::vector<uint32_t> palette;  // a << 24 | rgb
  std::vector<uint8_t> trns;
  std::vector<uint8_t> idat;
  bool ended = false;
  for (std::size_t at = 8; at < file.size() && !ended;) {
    if (file.size() - at < 12) fail("truncated chunk");
    const uint32_t length = detail::Be32(&file[at]);
    if (length > file.size() - at - 12) fail("truncated chunk");
    const std::string type(reinterpret_cast<const char*>(&file[at + 4]), 4);
    const uint8_t* data = &file[at + 8];
    if (type == "IHDR") {
      if (length != 13) fail("bad IHDR");
      width = static_cast<int>(detail::Be32(data));
      height = static_cast<int>(detail::Be32(data + 4));
      bit_depth = data[8];
      color_type = data[9];
      if (data[10] != 0 || data[11] != 0) fail("unknown compression or filter method");
      if (data[12] != 0) fail("interlaced PNGs are not supported");
      if (width <= 0 || height <= 0 || width > (1 << 15) || height > (1 << 15)) fail("bad size");
      const bool palette_depth = bit_depth == 1 || bit_depth == 2 || bit_depth == 4 || bit_depth == 8;
      if (!(color_type == 3 ? palette_depth : bit_depth == 8) ||
          !(color_type == 0 || color_type == 2 || color_type == 3 || color_type == 4 || color_type == 6)) {
        fail("colour type " + std::to_string(color_type) + " at " + std::to_string(bit_depth) +
             " bits is not supported");
      }
    } else if (type == "PLTE") {
      if (length % 3 != 0 || length / 3 > 256) fail("bad PLTE");
      for (uint32_t i = 0; i < length; i += 3) {
        palette.push_back(0xff000000u | uint32_t{data[i]} << 16 | uint32_t{data[i + 1]} << 8 | data[i + 2]);
      }
    } else if (type == "tRNS") {
      trns.assign(data, data + length);
    } else if (type == "IDAT") {
      idat.insert(idat.end(), data, data + length);
    } else if (type == "IEND") {
      ended = true;
    } else if (!(type[0] & 0x20)) {
      fail("unknown critical chunk " + type);
    }
    at += 12 + std::size_t{length};
  }
  if (color_type < 0) fail("no IHDR");
  Image image;
  image.width = width;
  image.height = height;
  if (color_type == 3) {
    if (palette.empty()) fail("palette image without PLTE");
    if (!trns.empty()) {
      // SDL_image: exactly one fully transparent index and every other listed one opaque becomes a
      // colour key; anything else is expanded to RGBA (libpng's png_set_expand).
      int transparent = 0;
      bool translucent = false;
      for (uint8_t a : trns) {
        transparent += a == 0;
        translucent = translucent || (a != 0 && a != 255);
      }
      if (transparent == 1 && !translucent) fail("a palette colour key (one transparent index) is not supported");
      // Every listed index opaque: no colour key and no expansion, an opaque 8-bit surface.
      if (transparent > 0 || translucent) {
        for (std::size_t i = 0; i < trns.size() && i < palette.size(); ++i) {
          palette[i] = (palette[i] & 0x00ffffffu) | uint32_t{trns[i]} << 24;
        }
        image.alpha = true;
      }
    }
  } else if (!trns.empty()) {
    fail("a tRNS colour key on a grey or RGB image is not supported");
  }
  if (color_type == 4 || color_type == 6) image.alpha = true;

  const int channels = color_type == 2 ? 3 : color_type == 4 ? 2 : color_type == 6 ? 4 : 1;
  const std::size_t stride = (static_cast<std::size_t>(width) * channels * bit_depth + 7) / 8;
  const std::size_t bpp = std::max<std::size_t>(1, static_cast<std::size_t>(channels) * bit_depth / 8);
  std::vector<uint8_t> raw((stride + 1) * static_cast<std::size_t>(height));
  uLongf raw_size = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &raw_size, idat.data(), static_cast<uLong>(idat.size())) != Z_OK ||
      raw_size != raw.size()) {
    fail("corrupt image data");
  }
  // Undo the per-row filters in place (each row's filter byte, then `stride` bytes).
  std::vector<uint8_t> previous(stride, 0);
  image.argb.resize(static_cast<std::size_t>(width) * height);
  for (int y = 0; y < height; ++y) {
    uint8_t* row = &raw[static_cast<std::size_t>(y) * (stride + 1)];
    const int filter = row[0];
    uint8_t* line = row + 1;
    for (std::size_t i = 0; i < stride; ++i) {
      const int a = i >= bpp ? line[i - bpp] : 0, b = previous[i], c = i >= bpp ? previous[i - bpp] : 0;
      int predictor = 0;
      switch (filter) {
        case 0: break;
        case 1: predictor = a; break;
        case 2: predictor = b; break;
        case 3: predictor = (a + b) / 2; break;
        case 4: predictor = detail::Paeth(a, b, c); break;
        default: fail("bad row filter " + std::to_string(filter));
      }
      line[i] = static_cast<uint8_t>(line[i] + predictor);
    }
    std::copy(line, line + stride, previous.begin());
    uint32_t* out = &image.argb[static_cast<std::size_t>(y) * width];
    for (int x = 0; x < width; ++x) {
      const uint8_t* p = line + static_cast<std::size_t>(x) * bpp;
      switch (color_type) {
        case 0: out[x] = 0xff000000u | uint32_t{p[0]} * 0x010101u; break;
        case 2: out[x] = 0xff000000u | uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]; break;
        case 4: out[x] = uint32_t{p[1]} << 24 | uint32_t{p[0]} * 0x010101u; break;
        case 6: out[x] = uint32_t{p[3]} << 24 | uint32_t{p[0]} << 16 | uint32_t{p[1]} << 8 | p[2]; break;
        default: {  // palette: bit_depth-bit indices, the leftmost pixel in the high bits
          const std::size_t bit = static_cast<std::size_t>(x) * bit_depth;
          const int index = (line[bit / 8] >> (8 - bit_depth - static_cast<int>(bit % 8))) & ((1 << bit_depth) - 1);
          if (static_cast<std::size_t>(index) >= palette.size()) fail("palette index out of range");
          out[x] = palette[static_cast<std::size_t>(index)];
        }
      }
    }
  }
  return image;
}

// Reads and decodes the PNG file at `path`.
inline Image Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  const std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return Decode(file, path);
}

}  // namespace pp::png
