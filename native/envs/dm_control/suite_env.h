// The glue between a suite domain's class and the task table: its spec from (config, task), and
// a constructor that gives the base its model, constants and observation layout.
#pragma once

#include <string>

#include "core/config.h"
#include "core/spec.h"
#include "envs/dm_control/dm_control_env.h"
#include "envs/dm_control/physics.h"

namespace pp::dm_control {

// Derived provides, for its Task enum:
//   static TaskInfo Info(Task);
//   static ModelPtr Model(const Config&, Task);                 the compiled (cached) model
//   static ObsLayout Layout(const mjModel&, Task);              get_observation's keys and shapes
//   static ObsLayout TaskStateLayout(Task) (optional);          expose_physics_state's task entries
//   static constexpr bool kEditsModel = true (optional);        it writes into its model: each env
//                                                               then gets a full copy (Physics)
template <typename Derived, typename TaskT>
class SuiteEnv : public DmControlEnv {
 public:
  using Task = TaskT;

  static EnvSpec MakeSpec(const Config& config, Task task) {
    const ModelPtr model = Derived::Model(config, task);
    return MakeDmSpec(*model, config, Derived::Info(task), Derived::Layout(*model, task),
                      Derived::TaskStateLayout(task));
  }
  static ObsLayout TaskStateLayout(Task /*task*/) { return {}; }
  static constexpr bool kEditsModel = false;

 protected:
  SuiteEnv(const EnvSpec& spec, int env_id, Task task)
      : SuiteEnv(spec, env_id, task, Derived::Model(spec.config, task)) {}

  static ModelPtr SuiteModel(const Config& config, const std::string& xml_file) {
    return CompileModel(config.GetString("suite_dir"), xml_file);
  }

  const Task task_;

 private:
  SuiteEnv(const EnvSpec& spec, int env_id, Task task, const ModelPtr& model)
      : DmControlEnv(spec, env_id, model, Derived::kEditsModel, Derived::Info(task), Derived::Layout(*model, task),
                     Derived::TaskStateLayout(task)),
        task_(task) {}
};

}  // namespace pp::dm_control
