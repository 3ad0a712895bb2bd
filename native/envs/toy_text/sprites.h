// The toy-text envs' sprites and font: Gymnasium's PNGs and Minecraft.ttf (gymnasium/envs/toy_text, read
// where gymnasium is installed), loaded once per registration and shared read-only by every env.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "envs/common/png.h"
#include "envs/common/pygame_raster.h"
#include "envs/common/pygame_text.h"

namespace pp::toy_text {

using SpritePtr = std::shared_ptr<const raster::Sprite>;
using FontPtr = std::shared_ptr<const text::Font>;

class SpriteSheet {
 public:
  SpriteSheet(std::string img_dir, std::string font_dir)
      : img_dir_(std::move(img_dir)), font_dir_(std::move(font_dir)) {}

  // pygame.transform.scale(pygame.image.load(img_dir + "/" + name), (width, height)). Each file is
  // decoded once and each size scaled once; the sprites never change afterwards, so the envs of
  // every pool (rendering on several threads at once) share them. Throws if the file cannot be
  // read or decoded.
  SpritePtr Scaled(const std::string& name, int width, int height) {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_tuple(name, width, height);
    auto it = scaled_.find(key);
    if (it != scaled_.end()) return it->second;
    auto loaded = loaded_.find(name);
    if (loaded == loaded_.end()) {
      png::Image image = png::Load(Require(img_dir_ + "/" + name));
      loaded =
          loaded_.emplace(name, raster::Sprite{image.width, image.height, image.alpha, std::move(image.argb)}).first;
    }
    SpritePtr sprite = std::make_shared<const raster::Sprite>(raster::Scale(loaded->second, width, height));
    scaled_.emplace(std::move(key), sprite);
    return sprite;
  }

  // pygame.font.Font(font_dir + "/" + name, size), made once per (name, size); a text::Font never
  // changes after construction, so envs render with it on any thread.
  FontPtr Font(const std::string& name, int size) {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_pair(name, size);
    auto it = fonts_.find(key);
    if (it != fonts_.end()) return it->second;
    FontPtr font = std::make_shared<const text::Font>(Require(font_dir_ + "/" + name), size);
    fonts_.emplace(std::move(key), font);
    return font;
  }

 private:
  // The frames are those of Gymnasium 1.1 to 1.3, whose art these files are. Gymnasium 1.4 redrew the
  // toy-text art under other names (and dropped font/): there the tasks run, and render() says why it
  // cannot draw.
  static const std::string& Require(const std::string& path) {
    if (!std::filesystem::is_regular_file(path)) {
      throw std::runtime_error(
          "toy-text render() draws the sprites and font of Gymnasium 1.1 to 1.3, and " + path +
          " is not in the installed gymnasium (Gymnasium 1.4 redrew the toy-text art; frames of its art "
          "are not supported yet): install gymnasium<1.4 to render these tasks");
    }
    return path;
  }

  const std::string img_dir_;
  const std::string font_dir_;
  std::mutex mu_;
  std::map<std::pair<std::string, int>, FontPtr> fonts_;
  std::map<std::string, raster::Sprite> loaded_;
  std::map<std::tuple<std::string, int, int>, SpritePtr> scaled_;
};

using SpriteSheetPtr = std::shared_ptr<SpriteSheet>;

}  // namespace pp::toy_text
