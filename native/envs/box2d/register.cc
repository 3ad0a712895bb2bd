// Registers Gymnasium's Box2D tasks: per task id, its defaults (time limit included), Gymnasium's
// reward threshold, and the functions that build its spec and its envs.
#include "envs/box2d/register.h"

#include <Box2D/Box2D.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/task_maker.h"
#include "envs/box2d/bipedal_walker.h"
#include "envs/box2d/car_racing.h"
#include "envs/box2d/lunar_lander.h"

namespace pp {

namespace {

// Box2D 2.3 fills two global tables on first use, unsynchronised: the block allocator's size lookup
// (in the first b2World's constructor) and the contact-type registers (at the first contact). The
// pool's workers build worlds concurrently, so they are filled here, once, at family load (one
// thread), by a world in which two bodies touch. (Box2D's gjk/toi call counters, statistics
// nothing reads, are made per-thread by a build-time patch: box2d_library.cmake.)
void FillBox2dGlobalTables() {
  b2World world(b2Vec2(0.0f, 0.0f));
  b2CircleShape circle;
  circle.m_radius = 1.0f;
  for (int i = 0; i < 2; ++i) {
    b2BodyDef bd;
    bd.type = b2_dynamicBody;
    bd.position.Set(0.5f * static_cast<float>(i), 0.0f);
    world.CreateBody(&bd)->CreateFixture(&circle, 1.0f);
  }
  world.Step(0.01f, 1, 1);
}

}  // namespace

void RegisterBox2d(Registry& registry, const std::string& fonts_dir) {
  FillBox2dGlobalTables();
  using namespace box2d;
  // Time limits and thresholds from gymnasium/envs/__init__.py.
  registry.Add(MakeTask<LunarLanderEnv>("LunarLander-v3", "box2d", LunarLanderDefaults(false), LunarLanderSpec, 200.0));
  registry.Add(
      MakeTask<LunarLanderEnv>("LunarLanderContinuous-v3", "box2d", LunarLanderDefaults(true), LunarLanderSpec, 200.0));
  registry.Add(
      MakeTask<BipedalWalkerEnv>("BipedalWalker-v3", "box2d", BipedalWalkerDefaults(false), BipedalWalkerSpec, 300.0));
  registry.Add(MakeTask<BipedalWalkerEnv>("BipedalWalkerHardcore-v3", "box2d", BipedalWalkerDefaults(true),
                                          BipedalWalkerSpec, 300.0));
  // CarRacing's frame shows its score in pygame's font: without the font, the frame would not be
  // Gymnasium's, and the task is left out.
  const std::string font_path = fonts_dir + "/freesansbold.ttf";
  if (std::filesystem::is_regular_file(font_path)) {
    registry.Add(MakeTask<CarRacingEnv>("CarRacing-v3", "box2d", CarRacingDefaults(), CarRacingSpec, 900.0,
                                        std::make_shared<box2d::ScoreFont>(font_path)));
  }
}

}  // namespace pp
