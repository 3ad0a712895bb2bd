// A test env library for family_loader_test: it declares two resources and registers one task
// whose defaults record the directories the loader handed it.
#include "core/family.h"
#include "core/task_maker.h"

namespace {

class Constant final : public pp::Env {
 public:
  Constant(const pp::EnvSpec& spec, int env_id) : pp::Env(spec, env_id) {}
  void Reset() override { *Allocate().Get<float>(0) = 1.0f; }
  pp::StepResult Step(const pp::Action& /*action*/) override {
    *Allocate().Get<float>(0) = 1.0f;
    return {0.5, false, TimeLimitReached()};
  }
};

}  // namespace

PP_FAMILY_RESOURCES("models some_package data/models\n\nroms other_package roms\n")

PP_REGISTER_FAMILY(registry) {
  pp::Config defaults{{"max_episode_steps", int64_t{3}},
                      {"models", registry->Resource("models")},
                      {"roms", registry->Resource("roms")}};
  registry->Add(pp::MakeTask<Constant>(
      "Constant-v0", "test_family", defaults,
      [](const std::string& /*id*/, const pp::Config& /*config*/) {
        pp::EnvSpec spec;
        spec.state.push_back(pp::Box("obs", pp::Dtype::kFloat32, {}));
        spec.action.push_back(pp::Discrete("action", 2));
        return spec;
      },
      7.5));
}
