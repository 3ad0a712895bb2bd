// Registers Gymnasium's toy-text tasks and EnvPool's Catch and NChain: per task id, its defaults
// (the registered kwargs and time limit), its reward threshold, and the functions that build its
// spec and its envs.
#include "envs/toy_text/register.h"

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "core/task_maker.h"
#include "envs/toy_text/blackjack.h"
#include "envs/toy_text/catch.h"
#include "envs/toy_text/cliff_walking.h"
#include "envs/toy_text/frozen_lake.h"
#include "envs/toy_text/nchain.h"
#include "envs/toy_text/sprites.h"
#include "envs/toy_text/taxi.h"

namespace pp {

void RegisterToyText(Registry& registry, const std::string& img_dir, const std::string& font_dir) {
  using namespace toy_text;
  // One sheet for every task of this registration: each sprite is decoded and scaled once, each
  // font made once.
  auto sheet = std::make_shared<SpriteSheet>(img_dir, font_dir);
  // The render shape in each spec is that of the art the installed gymnasium holds.
  auto with_art = [art = sheet->art()](EnvSpec (*make)(const std::string&, const Config&, Art)) -> SpecMaker {
    return [make, art](const std::string& task_id, const Config& config) { return make(task_id, config, art); };
  };
  auto task = [&sheet](auto tag, std::string id, Config defaults, SpecMaker spec, std::optional<double> threshold) {
    using EnvT = typename decltype(tag)::type;
    if constexpr (std::is_constructible_v<EnvT, const EnvSpec&, int, SpriteSheetPtr>) {
      return MakeTask<EnvT>(std::move(id), "toy_text", std::move(defaults), std::move(spec), threshold, sheet);
    } else {
      return MakeTask<EnvT>(std::move(id), "toy_text", std::move(defaults), std::move(spec), threshold);
    }
  };
  // Time limits and thresholds from gymnasium/envs/__init__.py.
  // Taxi-v3 keeps Gymnasium 1.2's rules whatever gymnasium is installed; Taxi-v4 (Gymnasium 1.3 on)
  // has the fixed is_rainy and fickle_passenger and their probabilities as kwargs.
  registry.Add(task(std::type_identity<FrozenLakeEnv>{}, "FrozenLake-v1", FrozenLakeDefaults("4x4", 100),
                    with_art(FrozenLakeSpec), 0.70));
  registry.Add(task(std::type_identity<FrozenLakeEnv>{}, "FrozenLake8x8-v1", FrozenLakeDefaults("8x8", 200),
                    with_art(FrozenLakeSpec), 0.85));
  registry.Add(task(std::type_identity<TaxiEnv>{}, "Taxi-v3", TaxiDefaults(TaxiRules::kV3), with_art(TaxiSpec), 8.0));
  registry.Add(task(std::type_identity<TaxiEnv>{}, "Taxi-v4", TaxiDefaults(TaxiRules::kV4), with_art(TaxiSpec), 8.0));
  registry.Add(task(std::type_identity<CliffWalkingEnv>{}, "CliffWalking-v1", CliffWalkingDefaults(false),
                    with_art(CliffWalkingSpec), std::nullopt));
  registry.Add(task(std::type_identity<CliffWalkingEnv>{}, "CliffWalkingSlippery-v1", CliffWalkingDefaults(true),
                    with_art(CliffWalkingSpec), std::nullopt));
  registry.Add(task(std::type_identity<BlackjackEnv>{}, "Blackjack-v1", BlackjackDefaults(), with_art(BlackjackSpec),
                    std::nullopt));
  // EnvPool's two toy-text tasks that Gymnasium does not have (envpool/toy_text/registration.py):
  // no reward threshold, nothing to render.
  registry.Add(task(std::type_identity<CatchEnv>{}, "Catch-v0", CatchDefaults(), CatchSpec, std::nullopt));
  registry.Add(task(std::type_identity<NChainEnv>{}, "NChain-v0", NChainDefaults(), NChainSpec, std::nullopt));
}

}  // namespace pp
