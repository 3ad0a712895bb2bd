// One env of a registered task driven by hand, with the calls the pool's workers make (seed,
// allocator, reset, step, render): the families' C++ tests build on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/env_driver.h"
#include "core/registry.h"
#include "core/spec.h"

namespace pp::test {

class EnvRunner {
 public:
  EnvRunner(const Registry& registry, const std::string& task_id, uint64_t seed,
            const std::map<std::string, ConfigValue>& config = {}, int env_id = 0)
      : task_(registry.Find(task_id)),
        spec_(MakeSpec(*task_, config)),
        alloc_(spec_),
        env_(task_->make_env(spec_, env_id)),
        action_(spec_.action[static_cast<std::size_t>(spec_.ActionIndex("action"))]) {
    EnvDriver(*env_).SetAllocator(&alloc_);
    EnvDriver(*env_).Seed(seed);
    action_row_.resize(action_.RowBytes());
    action_rows_[0] = action_row_.data();
  }

  EnvRunner(const EnvRunner&) = delete;
  EnvRunner& operator=(const EnvRunner&) = delete;

  void Reset() { EnvDriver(*env_).Reset(); }
  // One step with the action row as it is.
  StepResult Step() { return EnvDriver(*env_).Step(Action(action_rows_)); }
  // One step with `a` as the whole action row (a discrete action, a one-element box).
  template <typename T>
  StepResult Step(T a) {
    std::memcpy(action_row_.data(), &a, sizeof a);
    return Step();
  }

  // The field "action" and its row, for a test that writes a whole action.
  const FieldSpec& action() const { return action_; }
  std::byte* action_row() { return action_row_.data(); }

  // State field `name` of the last output, as values of its dtype T.
  template <typename T>
  std::vector<T> Values(const std::string& name) const {
    const int index = spec_.StateIndex(name);
    const T* f = alloc_.Get<T>(index);
    return std::vector<T>(f, f + spec_.state[static_cast<std::size_t>(index)].NumElements());
  }
  // The current frame (spec().render_shape), as the pool's render() gets it.
  std::vector<uint8_t> Render() {
    const std::vector<int>& shape = spec_.render_shape;
    std::vector<uint8_t> frame(static_cast<std::size_t>(shape.at(0)) * shape.at(1) * 3);
    env_->Render(frame.data());
    return frame;
  }

  const EnvSpec& spec() const { return spec_; }
  const SingleSlotAllocator& slots() const { return alloc_; }
  int elapsed_step() const { return env_->elapsed_step(); }

 private:
  std::shared_ptr<const TaskEntry> task_;
  EnvSpec spec_;
  SingleSlotAllocator alloc_;
  std::unique_ptr<Env> env_;
  const FieldSpec& action_;
  std::vector<std::byte> action_row_;
  const std::byte* action_rows_[1] = {nullptr};
};

}  // namespace pp::test
