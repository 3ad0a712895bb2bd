// An image as pygame holds a loaded one: what png.h decodes and pygame_raster.h scales and blits.
#pragma once

#include <cstdint>
#include <vector>

namespace pp {

// Pixels a << 24 | r << 16 | g << 8 | b, row by row. `alpha`: the image has per-pixel alpha (the
// surface pygame.image.load makes is 32-bit RGBA: SDL_image's colour types 4 and 6, and a palette
// whose tRNS is not "one index fully transparent, the rest opaque"), so blits blend; otherwise
// every pixel is opaque (a = 255) and blits copy, whatever the file's pixel format (an 8-bit
// palette surface copies its palette's colours).
struct ArgbImage {
  int width = 0;
  int height = 0;
  bool alpha = false;
  std::vector<uint32_t> argb;
};

}  // namespace pp
