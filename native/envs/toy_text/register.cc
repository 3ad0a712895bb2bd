// Registers Gymnasium's toy-text tasks: per task id, its defaults (Gymnasium's registered kwargs and
// time limit), its reward threshold, and the functions that build its spec and its envs.
#include "envs/toy_text/register.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "core/task_maker.h"
#include "envs/toy_text/blackjack.h"
#include "envs/toy_text/cliff_walking.h"
#include "envs/toy_text/frozen_lake.h"
#include "envs/toy_text/sprites.h"
#include "envs/toy_text/taxi.h"

namespace pp {

void RegisterToyText(Registry& registry, const std::string& img_dir, const std::string& font_dir) {
  using namespace toy_text;
  // One sheet for every task of this registration: each sprite is decoded and scaled once, each
  // font made once.
  auto sheet = std::make_shared<SpriteSheet>(img_dir, font_dir);
  auto task = [&sheet](auto tag, std::string id, Config defaults, SpecMaker spec, std::optional<double> threshold) {
    using EnvT = typename decltype(tag)::type;
    if constexpr (std::is_constructible_v<EnvT, const EnvSpec&, int, SpriteSheetPtr>) {
      return MakeTask<EnvT>(std::move(id), "toy_text", std::move(defaults), std::move(spec), threshold, sheet);
    } else {
      return MakeTask<EnvT>(std::move(id), "toy_text", std::move(defaults), std::move(spec), threshold);
    }
  };
  // Time limits and thresholds from gymnasium/envs/__init__.py.
  registry.Add(
      task(std::type_identity<FrozenLakeEnv>{}, "FrozenLake-v1", FrozenLakeDefaults("4x4", 100), FrozenLakeSpec, 0.70));
  registry.Add(task(std::type_identity<FrozenLakeEnv>{}, "FrozenLake8x8-v1", FrozenLakeDefaults("8x8", 200),
                    FrozenLakeSpec, 0.85));
  registry.Add(task(std::type_identity<TaxiEnv>{}, "Taxi-v3", TaxiDefaults(), TaxiSpec, 8.0));
  registry.Add(task(std::type_identity<CliffWalkingEnv>{}, "CliffWalking-v1", CliffWalkingDefaults(false),
                    CliffWalkingSpec, std::nullopt));
  registry.Add(task(std::type_identity<CliffWalkingEnv>{}, "CliffWalkingSlippery-v1", CliffWalkingDefaults(true),
                    CliffWalkingSpec, std::nullopt));
  registry.Add(
      task(std::type_identity<BlackjackEnv>{}, "Blackjack-v1", BlackjackDefaults(), BlackjackSpec, std::nullopt));
}

}  // namespace pp
