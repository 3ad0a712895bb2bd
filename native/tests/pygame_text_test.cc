// Tests of envs/common/pygame_text.h that need no pygame: one Font rendering from many threads at once
// (the pool's workers share it; ThreadSanitizer checks it in CI) and the blit's clipping. Its pixels are
// compared with pygame's by tests/envs/common/test_pygame_text.py.
#include "envs/common/pygame_text.h"

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

using pp::raster::Rgb;
using pp::text::Font;
using pp::text::TextSurface;

std::vector<std::string> Scores() {
  std::vector<std::string> out;
  for (int v = -100; v <= 1000; v += 7) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04d", v);
    out.emplace_back(buf);
  }
  return out;
}

bool Same(const TextSurface& a, const TextSurface& b) {
  return a.width == b.width && a.height == b.height && a.shaded == b.shaded && a.coverage == b.coverage;
}

TEST(ConcurrentRendersEqualSerialOnes) {
  const Font font(PP_PYGAME_FONT_FILE, 42);
  const std::vector<std::string> texts = Scores();
  std::vector<TextSurface> serial;
  for (const std::string& t : texts) serial.push_back(font.Render(t, {255, 255, 255}, Rgb{0, 0, 0}));
  constexpr int kThreads = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 3; ++round) {
        for (std::size_t i = 0; i < texts.size(); ++i) {
          const std::size_t j = (i + static_cast<std::size_t>(k) * 17) % texts.size();
          if (!Same(font.Render(texts[j], {255, 255, 255}, Rgb{0, 0, 0}), serial[j])) ++mismatches[k];
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < kThreads; ++k) CHECK_EQ(mismatches[k], 0);
}

TEST(ShadedAndBlendedShareTheCoverage) {
  const Font font(PP_PYGAME_FONT_FILE, 42);
  const TextSurface shaded = font.Render("0931", {255, 255, 255}, Rgb{0, 0, 0});
  const TextSurface blended = font.Render("0931", {255, 255, 255});
  CHECK(shaded.shaded);
  CHECK(!blended.shaded);
  CHECK(shaded.coverage == blended.coverage);
  // White on black: palette entry i is grey i.
  for (int i = 0; i < 256; ++i) CHECK_EQ(int{shaded.palette[i].g}, i);
  bool any_partial = false;
  for (uint8_t c : shaded.coverage) any_partial |= c > 0 && c < 255;
  CHECK(any_partial);  // antialiased
}

TEST(BlitClipsToTheSurface) {
  const Font font(PP_PYGAME_FONT_FILE, 42);
  const TextSurface text = font.Render("-012", {255, 255, 255}, Rgb{0, 0, 0});
  pp::raster::Surface whole(200, 100), clipped(20, 10);
  whole.Fill({7, 99, 36});
  clipped.Fill({7, 99, 36});
  pp::text::Blit(whole, text, 0, 0);
  pp::text::Blit(clipped, text, -30, -20);  // only text pixels (30..49, 20..29) land
  for (int y = 0; y < 10; ++y) {
    for (int x = 0; x < 20; ++x) CHECK_EQ(clipped.Get(x, y), whole.Get(x + 30, y + 20));
  }
  pp::text::Blit(clipped, text, 100, 100);  // entirely outside: nothing changes
  CHECK_EQ(clipped.Get(19, 9), whole.Get(49, 29));
}

TEST(TextOutsidePrintableAsciiIsRefused) {
  const Font font(PP_PYGAME_FONT_FILE, 12);
  bool threw = false;
  try {
    font.Render("a\nb", {255, 255, 255});
  } catch (const std::invalid_argument&) {
    threw = true;
  }
  CHECK(threw);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
