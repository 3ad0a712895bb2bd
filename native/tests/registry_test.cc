// Tests of the task registry and MakeSpec: lookup by id, the rule every task declares
// max_episode_steps, and a spec resolved from the defaults and the user's overrides.
#include "core/registry.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

// An env that is never stepped here: the registry only stores its factory.
class Idle final : public pp::Env {
 public:
  using pp::Env::Env;
  void Reset() override {}
  pp::StepResult Step(const pp::Action&) override { return {}; }
};

pp::TaskEntry Entry(const std::string& id, int64_t max_episode_steps = 200) {
  pp::TaskEntry e;
  e.task_id = id;
  e.family = "test";
  e.defaults = pp::Config{{"max_episode_steps", max_episode_steps}, {"size", int64_t{3}}};
  e.make_spec = [](const std::string&, const pp::Config& config) {
    pp::EnvSpec spec;
    spec.state = {pp::Box("obs", pp::Dtype::kFloat32, {static_cast<int>(config.GetInt("size"))})};
    spec.action = {pp::Discrete("action", 2)};
    return spec;
  };
  e.make_env = [](const pp::EnvSpec& spec, int env_id) -> std::unique_ptr<pp::Env> {
    return std::make_unique<Idle>(spec, env_id);
  };
  return e;
}

TEST(FindByIdAndListInOrder) {
  pp::Registry r;
  r.Add(Entry("B-v0"));
  r.Add(Entry("A-v1"));
  CHECK(r.TaskIds() == (std::vector<std::string>{"A-v1", "B-v0"}));
  auto a = r.Find("A-v1");
  if (!CHECK(a != nullptr)) return;
  CHECK_EQ(a->task_id, std::string("A-v1"));
  CHECK_EQ(a->family, std::string("test"));
  CHECK(r.Find("C-v0") == nullptr);
}

TEST(EveryTaskDeclaresMaxEpisodeSteps) {
  pp::Registry r;
  pp::TaskEntry e = Entry("A-v0");
  e.defaults = pp::Config{{"size", int64_t{3}}};
  CHECK_THROWS_WITH(std::invalid_argument, r.Add(std::move(e)), "task 'A-v0' must declare max_episode_steps");
  CHECK(r.TaskIds().empty());
}

TEST(AddingAnIdAgainReplacesItAndHoldersKeepTheOld) {
  pp::Registry r;
  r.Add(Entry("A-v0", 100));
  auto old = r.Find("A-v0");
  r.Add(Entry("A-v0", 300));
  CHECK_EQ(r.TaskIds().size(), 1u);
  CHECK_EQ(r.Find("A-v0")->defaults.GetInt("max_episode_steps"), 300);
  CHECK_EQ(old->defaults.GetInt("max_episode_steps"), 100);  // a pool made from it keeps working
}

TEST(MakeSpecResolvesTheConfig) {
  pp::TaskEntry e = Entry("A-v0");
  e.reward_threshold = 475.0;
  const pp::EnvSpec spec = pp::MakeSpec(e, {{"size", int64_t{5}}, {"max_episode_steps", int64_t{50}}});
  CHECK_EQ(spec.task_id, std::string("A-v0"));
  CHECK(spec.state[0].shape == std::vector<int>{5});  // the override reached make_spec
  CHECK_EQ(spec.config.GetInt("size"), 5);
  CHECK_EQ(spec.max_episode_steps, 50);
  CHECK(spec.reward_threshold.has_value() && *spec.reward_threshold == 475.0);
  const pp::EnvSpec defaults = pp::MakeSpec(e, {});
  CHECK_EQ(defaults.max_episode_steps, 200);
  CHECK(defaults.state[0].shape == std::vector<int>{3});
  CHECK(!pp::MakeSpec(Entry("B-v0"), {}).reward_threshold.has_value());
  std::unique_ptr<pp::Env> env = e.make_env(spec, 3);
  CHECK_EQ(env->env_id(), 3);
}

// A spec maker may derive the time limit from the other kwargs (MiniGrid's max_steps follows its
// size): it stands when the config's max_episode_steps is 0, a positive one replaces it.
TEST(MakeSpecKeepsADerivedTimeLimitUnlessOneIsGiven) {
  pp::TaskEntry e = Entry("A-v0", 0);
  e.make_spec = [](const std::string&, const pp::Config& config) {
    pp::EnvSpec spec;
    spec.state = {pp::Box("obs", pp::Dtype::kFloat32, {1})};
    spec.action = {pp::Discrete("action", 2)};
    spec.max_episode_steps = static_cast<int>(10 * config.GetInt("size"));
    return spec;
  };
  CHECK_EQ(pp::MakeSpec(e, {}).max_episode_steps, 30);
  CHECK_EQ(pp::MakeSpec(e, {{"size", int64_t{7}}}).max_episode_steps, 70);
  CHECK_EQ(pp::MakeSpec(e, {{"size", int64_t{7}}, {"max_episode_steps", int64_t{5}}}).max_episode_steps, 5);
  CHECK_EQ(pp::MakeSpec(Entry("B-v0", 0), {}).max_episode_steps, 0);  // none derived: no limit
}

TEST(MakeSpecRefusesBadOverrides) {
  const pp::TaskEntry e = Entry("A-v0");
  CHECK_THROWS_WITH(std::invalid_argument, pp::MakeSpec(e, {{"max_episode_steps", int64_t{-1}}}),
                    "max_episode_steps must be >= 0");
  CHECK_THROWS_WITH(std::invalid_argument, pp::MakeSpec(e, {{"colour", int64_t{1}}}), "unknown config key 'colour'");
  CHECK_THROWS_WITH(std::invalid_argument, pp::MakeSpec(e, {{"size", 2.5}}), "config key 'size' expects int");
}

TEST(GlobalIsOneRegistry) { CHECK(&pp::Registry::Global() == &pp::Registry::Global()); }

// Libraries may register while another thread looks tasks up.
TEST(ConcurrentAddAndFind) {
  pp::Registry r;
  r.Add(Entry("Base-v0"));
  std::atomic<bool> stop{false};
  std::atomic<int> misses{0};
  std::thread reader([&] {
    while (!stop.load()) {
      if (r.Find("Base-v0") == nullptr) misses.fetch_add(1);
      r.TaskIds();
    }
  });
  for (int i = 0; i < 500; ++i) {
    std::string id = "T";  // built in steps: GCC 12 warns (-Wrestrict) on "T" + std::to_string(i)
    id += std::to_string(i);
    r.Add(Entry(id + "-v0"));
  }
  stop.store(true);
  reader.join();
  CHECK_EQ(misses.load(), 0);
  CHECK_EQ(r.TaskIds().size(), 501u);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
