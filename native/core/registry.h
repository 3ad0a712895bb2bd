// Task ids mapped to the functions that build a task's spec and its envs.
// Families register themselves here; Python looks tasks up by id. The core never names a family.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "env.h"
#include "spec.h"

namespace pp {

struct TaskEntry {
  std::string task_id;
  std::string family;  // "classic_control", "tutorial", ... (for `parallel-pool list`)
  Config defaults;     // every config key the task accepts, with its default
  // Gymnasium's registered reward threshold, if any: task metadata, read without building a spec.
  std::optional<double> reward_threshold;
  // Builds the spec from the resolved config (spaces may depend on config, e.g. image size).
  std::function<EnvSpec(const std::string& task_id, const Config& config)> make_spec;
  std::function<std::unique_ptr<Env>(const EnvSpec& spec, int env_id)> make_env;
};

class Registry {
 public:
  static Registry& Global() {
    static Registry registry;
    return registry;
  }

  void Add(TaskEntry entry) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!entry.defaults.Has("max_episode_steps")) {
      throw std::invalid_argument("task '" + entry.task_id + "' must declare max_episode_steps");
    }
    const std::string id = entry.task_id;
    tasks_[id] = std::make_shared<const TaskEntry>(std::move(entry));
  }

  std::shared_ptr<const TaskEntry> Find(const std::string& task_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tasks_.find(task_id);
    return it == tasks_.end() ? nullptr : it->second;
  }

  std::vector<std::string> TaskIds() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> ids;
    for (const auto& kv : tasks_) ids.push_back(kv.first);
    return ids;
  }

  // The data directories found for the env library being registered (see family.h): the loader
  // sets them before it calls the library's parallel_pool_register, which reads them here.
  void SetResources(std::map<std::string, std::string> resources) {
    std::lock_guard<std::mutex> lock(mu_);
    resources_ = std::move(resources);
  }
  std::string Resource(const std::string& name) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = resources_.find(name);
    if (it == resources_.end()) {
      throw std::invalid_argument("no resource '" + name +
                                  "' was given to this env library (declare it with "
                                  "PP_FAMILY_RESOURCES)");
    }
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const TaskEntry>> tasks_;
  std::map<std::string, std::string> resources_;
};

// How many specs this process has built. Building one can be costly (a MuJoCo task compiles its
// model), so a test reads this to check that importing the package builds none.
inline std::atomic<std::uint64_t>& SpecsBuilt() {
  static std::atomic<std::uint64_t> count{0};
  return count;
}

// Builds a resolved spec for `task_id` with the user's overrides; throws on unknown keys.
inline EnvSpec MakeSpec(const TaskEntry& task, const std::map<std::string, ConfigValue>& overrides) {
  Config config = task.defaults.Override(overrides);
  SpecsBuilt().fetch_add(1, std::memory_order_relaxed);
  EnvSpec spec = task.make_spec(task.task_id, config);
  spec.task_id = task.task_id;
  spec.config = config;
  spec.reward_threshold = task.reward_threshold;
  // A positive max_episode_steps in the config (the task's default or the user's) is the limit; 0
  // keeps the one the spec maker derived from the other kwargs, if any (MiniGrid's max_steps
  // follows its size kwargs), else there is none.
  const int64_t max_episode_steps = config.GetInt("max_episode_steps");
  if (max_episode_steps < 0) throw std::invalid_argument("max_episode_steps must be >= 0");
  if (max_episode_steps > 0) spec.max_episode_steps = static_cast<int>(max_episode_steps);
  if (spec.max_episode_steps < 0) throw std::invalid_argument("max_episode_steps must be >= 0");
  return spec;
}

}  // namespace pp
