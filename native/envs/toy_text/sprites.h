// The toy-text envs' sprites and font: Gymnasium's PNGs and Minecraft.ttf (gymnasium/envs/toy_text, read
// where gymnasium is installed), loaded once per registration and shared read-only by every env.
// Gymnasium 1.4 redrew the art (other files, other layouts): the sheet says which art it holds.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "envs/common/png.h"
#include "envs/common/pygame_raster.h"
#include "envs/common/pygame_text.h"

namespace pp::toy_text {

using SpritePtr = std::shared_ptr<const raster::Sprite>;
using FontPtr = std::shared_ptr<const text::Font>;

// Which Gymnasium's toy-text art the installed img/ folder holds, and so which drawing code render()
// follows: the frames of Gymnasium 1.1 to 1.3 (elves, cab sprites, Minecraft.ttf) or of 1.4 (pixel
// art at 4x, img/taxi/, img/blackjack/, no font).
enum class Art { kGymnasium1_1, kGymnasium1_4 };

// Gymnasium 1.4's art is told by a file only it has; anything else (including no folder at all) is
// drawn as 1.1 to 1.3 draw it, whose missing files render() then names.
inline Art DetectArt(const std::string& img_dir) {
  return std::filesystem::is_regular_file(img_dir + "/taxi/background.png") ? Art::kGymnasium1_4 : Art::kGymnasium1_1;
}

class SpriteSheet {
 public:
  SpriteSheet(std::string img_dir, std::string font_dir)
      : img_dir_(std::move(img_dir)), font_dir_(std::move(font_dir)), art_(DetectArt(img_dir_)) {}

  Art art() const { return art_; }

  // pygame.image.load(img_dir + "/" + name), unscaled (the 1.4 art is drawn at its own size).
  SpritePtr Image(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return LoadLocked(name);
  }

  // pygame.transform.scale(pygame.image.load(img_dir + "/" + name), (width, height)). Each file is
  // decoded once and each size scaled once; the sprites never change afterwards, so the envs of
  // every pool (rendering on several threads at once) share them. Throws if the file cannot be
  // read or decoded.
  SpritePtr Scaled(const std::string& name, int width, int height) {
    std::lock_guard<std::mutex> lock(mu_);
    auto key = std::make_tuple(name, width, height);
    auto it = scaled_.find(key);
    if (it != scaled_.end()) return it->second;
    SpritePtr sprite = std::make_shared<const raster::Sprite>(raster::Scale(*LoadLocked(name), width, height));
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
  SpritePtr LoadLocked(const std::string& name) {
    auto loaded = loaded_.find(name);
    if (loaded == loaded_.end()) {
      auto sprite = std::make_shared<const raster::Sprite>(png::Load(Require(img_dir_ + "/" + name)));
      loaded = loaded_.emplace(name, std::move(sprite)).first;
    }
    return loaded->second;
  }

  // A missing file fails render() only (the tasks still load, reset and step), with a message naming it.
  const std::string& Require(const std::string& path) const {
    if (!std::filesystem::is_regular_file(path)) {
      throw std::runtime_error(
          "toy-text render() draws the installed gymnasium's own sprites and font, and " + path +
          " is not there (render() knows the toy-text art of Gymnasium 1.1 to 1.3 and of 1.4; this folder "
          "looked like " +
          (art_ == Art::kGymnasium1_4 ? "1.4's" : "1.1 to 1.3's") + "): reinstall gymnasium to render these tasks");
    }
    return path;
  }

  const std::string img_dir_;
  const std::string font_dir_;
  const Art art_;
  std::mutex mu_;
  std::map<std::pair<std::string, int>, FontPtr> fonts_;
  std::map<std::string, SpritePtr> loaded_;
  std::map<std::tuple<std::string, int, int>, SpritePtr> scaled_;
};

using SpriteSheetPtr = std::shared_ptr<SpriteSheet>;

}  // namespace pp::toy_text
