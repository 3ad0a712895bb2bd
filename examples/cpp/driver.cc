// Steps pools of three tasks from C++, with no Python: the example's own Corridor-v0, and
// CartPole-v1 and Ant-v5 from the families installed with the parallel_pool Python package.
// Prints one JSON line per run (tests/core/test_cpp_engine.py compares them with the Python API).
//
//   driver [PACKAGE_DIR [SITE_DIR...]]
// PACKAGE_DIR defaults to the package found by CMake's find_package(parallel_pool). The families'
// data (Gymnasium's MuJoCo models, ale-py's ROMs) is looked up in the site-packages directory that
// holds the package, then in each SITE_DIR.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/family_loader.h"
#include "core/pool.h"
#include "core/registry.h"
#include "corridor.h"

namespace {

constexpr int kNumEnvs = 4;

// The action of env `env` at step `t`, the same formula as the test's Python side: discrete
// fields cycle through their values, continuous ones take exact tenths in [-0.5, 0.5].
std::vector<std::byte> Actions(const pp::EnvSpec& spec, const std::vector<int32_t>& env_ids, int t,
                               std::vector<const std::byte*>* pointers) {
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  for (const pp::FieldSpec& f : spec.action) {
    offsets.push_back(total);
    total += f.RowBytes() * env_ids.size();
  }
  std::vector<std::byte> storage(total);
  for (std::size_t k = 0; k < spec.action.size(); ++k) {
    const pp::FieldSpec& f = spec.action[k];
    if (f.per_player) throw std::invalid_argument("this driver steps single-player tasks");
    const std::size_t elements = f.RowBytes() / pp::DtypeSize(f.dtype);
    for (std::size_t r = 0; r < env_ids.size(); ++r) {
      const int i = env_ids[r];
      for (std::size_t j = 0; j < elements; ++j) {
        std::byte* at = storage.data() + offsets[k] + (r * elements + j) * pp::DtypeSize(f.dtype);
        if (f.space == pp::SpaceKind::kDiscrete) {
          const auto n = static_cast<int64_t>(f.high[0] - f.low[0] + 1);
          const int64_t value = static_cast<int64_t>(f.low[0]) + (t + i) % n;
          if (f.dtype != pp::Dtype::kInt64) throw std::invalid_argument("expected int64 discrete actions");
          *reinterpret_cast<int64_t*>(at) = value;
        } else {
          const float value = static_cast<float>((t * 7 + i * 3 + static_cast<int>(j)) % 11 - 5) / 10.0f;
          if (f.dtype != pp::Dtype::kFloat32) throw std::invalid_argument("expected float32 actions");
          *reinterpret_cast<float*>(at) = value;
        }
      }
    }
  }
  pointers->clear();
  for (std::size_t offset : offsets) pointers->push_back(storage.data() + offset);
  return storage;
}

std::unique_ptr<pp::Pool> MakePool(const pp::Registry& registry, const std::string& task_id, int batch_size) {
  auto task = registry.Find(task_id);
  if (task == nullptr) throw std::invalid_argument("no task " + task_id + " (is its family installed?)");
  pp::PoolOptions options;
  options.num_envs = kNumEnvs;
  options.batch_size = batch_size;
  options.num_threads = 2;
  options.seeds = {0, 1, 2, 3};  // as parallel_pool.make(..., seed=0): env i gets seed 0 + i
  return std::make_unique<pp::Pool>(task, pp::MakeSpec(*task, {}), options);
}

// Every element of the batch's observations, as JSON numbers that parse back to the same double
// (a float32 converts to a double exactly).
std::string ObsJson(const pp::Batch& batch) {
  const std::size_t n = batch.RowSize("obs") * static_cast<std::size_t>(batch.rows());
  const bool is_double = pp::Dtype::kFloat64 == [&] {
    for (const pp::BlockField& f : batch.fields()) {
      if (f.name == "obs") return f.dtype;
    }
    return pp::Dtype::kFloat32;
  }();
  std::string out = "[";
  char buffer[32];
  for (std::size_t i = 0; i < n; ++i) {
    const double value = is_double ? batch.Get<double>("obs")[i] : static_cast<double>(batch.Get<float>("obs")[i]);
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    out += (i ? ", " : "") + std::string(buffer);
  }
  return out + "]";
}

// Sync mode: every step steps all envs; row i is env i.
void RunSync(const pp::Registry& registry, const std::string& task_id, int steps) {
  auto pool = MakePool(registry, task_id, kNumEnvs);
  std::vector<int32_t> ids(kNumEnvs);
  std::iota(ids.begin(), ids.end(), 0);
  pool->Reset(ids.data(), kNumEnvs, {}, /*caller_waits=*/true);
  pp::Batch batch(pool->layout(), pool->Recv(-1.0), kNumEnvs);
  double reward_sum = 0.0;
  int episodes = 0;
  std::vector<const std::byte*> actions;
  for (int t = 0; t < steps; ++t) {
    std::vector<std::byte> storage = Actions(pool->spec(), ids, t, &actions);
    batch = pp::Batch(pool->layout(), pool->Step(ids.data(), kNumEnvs, actions), kNumEnvs);
    if (!batch.errors().empty()) throw std::runtime_error(batch.errors()[0].second);
    for (int r = 0; r < batch.rows(); ++r) {
      reward_sum += batch.Get<double>("reward")[r];
      episodes += batch.Get<bool>("terminated")[r] || batch.Get<bool>("truncated")[r];
    }
  }
  std::printf(
      "{\"task\": \"%s\", \"mode\": \"sync\", \"steps\": %d, \"reward_sum\": %.17g, \"episodes\": %d, "
      "\"obs\": %s}\n",
      task_id.c_str(), steps, reward_sum, episodes, ObsJson(batch).c_str());
}

// Async mode: batches of 2 of the 4 envs, whichever finish first; each is sent its next action.
// At least `batches` batches, and on until every env has come back twice: an env whose step
// was preempted (a loaded machine) may miss many batches of quick steps, but is never lost.
void RunAsync(const pp::Registry& registry, const std::string& task_id, int batches) {
  constexpr int kBatch = 2;
  auto pool = MakePool(registry, task_id, kBatch);
  std::vector<int32_t> ids(kNumEnvs);
  std::iota(ids.begin(), ids.end(), 0);
  pool->Reset(ids.data(), kNumEnvs, {});
  std::vector<int> results(kNumEnvs, 0);
  std::vector<const std::byte*> actions;
  constexpr int kMaxBatches = 1'000'000;
  int b = 0;
  for (; b < kMaxBatches && (b < batches || *std::min_element(results.begin(), results.end()) < 2); ++b) {
    pp::Batch batch(pool->layout(), pool->Recv(-1.0), kBatch);
    const int32_t* env_ids = batch.Get<int32_t>("info:env_id");
    std::vector<int32_t> done(env_ids, env_ids + batch.rows());
    for (int32_t id : done) ++results[static_cast<std::size_t>(id)];
    std::vector<std::byte> storage = Actions(pool->spec(), done, results[static_cast<std::size_t>(done[0])], &actions);
    pool->Send(done.data(), static_cast<int>(done.size()), actions);
  }
  std::string counts = "[";
  for (int i = 0; i < kNumEnvs; ++i) counts += (i ? ", " : "") + std::to_string(results[static_cast<std::size_t>(i)]);
  std::printf("{\"task\": \"%s\", \"mode\": \"async\", \"batches\": %d, \"batch_size\": %d, \"results_per_env\": %s}\n",
              task_id.c_str(), b, kBatch, (counts + "]").c_str());
  pool->Close();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string package_dir = argc > 1 ? argv[1] : PP_PACKAGE_DIR;
  const std::vector<std::string> site_dirs(argv + std::min(argc, 2), argv + argc);
  try {
    pp::Registry registry;
    corridor::RegisterCorridor(registry);
    const std::vector<std::string> loaded = pp::LoadInstalledFamilies(registry, package_dir, site_dirs);
    std::printf("{\"families_tasks\": %zu}\n", loaded.size());
    for (const char* task : {"Corridor-v0", "CartPole-v1", "Ant-v5"}) {
      RunSync(registry, task, 100);
      RunAsync(registry, task, 50);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: %s\n", e.what());
    return 1;
  }
  return 0;
}
