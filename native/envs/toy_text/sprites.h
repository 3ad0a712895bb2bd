// The toy-text envs' sprites: Gymnasium's PNGs (gymnasium/envs/toy_text/img, read where gymnasium is
// installed), decoded once per registration and scaled once per size, shared read-only by every env.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "envs/common/png.h"
#include "envs/common/pygame_raster.h"

namespace pp::toy_text {

using SpritePtr = std::shared_ptr<const raster::Sprite>;

class SpriteSheet {
 public:
  explicit SpriteSheet(std::string img_dir) : img_dir_(std::move(img_dir)) {}

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
      png::Image image = png::Load(img_dir_ + "/" + name);
      loaded =
          loaded_.emplace(name, raster::Sprite{image.width, image.height, image.alpha, std::move(image.argb)}).first;
    }
    SpritePtr sprite = std::make_shared<const raster::Sprite>(raster::Scale(loaded->second, width, height));
    scaled_.emplace(std::move(key), sprite);
    return sprite;
  }

 private:
  const std::string img_dir_;
  std::mutex mu_;
  std::map<std::string, raster::Sprite> loaded_;
  std::map<std::tuple<std::string, int, int>, SpritePtr> scaled_;
};

using SpriteSheetPtr = std::shared_ptr<SpriteSheet>;

}  // namespace pp::toy_text
