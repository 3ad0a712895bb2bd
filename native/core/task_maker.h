// The generic task maker: the TaskEntry of one task id whose envs are an EnvT, built from the
// task's defaults, its spec function and its metadata. Every family registers its tasks with it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "registry.h"

namespace pp {

using SpecMaker = std::function<EnvSpec(const std::string& task_id, const Config& config)>;

// `env_args` are passed to EnvT's constructor after (spec, env_id), e.g. a task version.
// `reward_threshold` is Gymnasium's registered value, if it registers one.
template <typename EnvT, typename... EnvArgs>
TaskEntry MakeTask(std::string task_id, std::string family, Config defaults, SpecMaker make_spec,
                   std::optional<double> reward_threshold = std::nullopt, EnvArgs... env_args) {
  TaskEntry task;
  task.task_id = std::move(task_id);
  task.family = std::move(family);
  task.defaults = std::move(defaults);
  task.reward_threshold = reward_threshold;
  task.make_spec = std::move(make_spec);
  task.make_env = [env_args...](const EnvSpec& spec, int env_id) -> std::unique_ptr<Env> {
    return std::make_unique<EnvT>(spec, env_id, env_args...);
  };
  return task;
}

}  // namespace pp
