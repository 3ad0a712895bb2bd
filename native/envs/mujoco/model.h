// Model files for the MuJoCo family: where an `xml_file` lives, and each compiled mjModel once.
// A compiled model is read-only while simulating (mj_step takes a const mjModel*), so every env of
// every pool that uses the same file shares one; each env owns only its mjData.
#pragma once

#include <mujoco/mujoco.h>
#include <sys/stat.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/config.h"

namespace pp::mujoco {

using ModelPtr = std::shared_ptr<const mjModel>;

// The file an `xml_file` value names, as Gymnasium's expand_model_path() finds it: a path
// starting with "." or "/" is used as is, "~" is the home directory, and a bare name is one of
// the model files in `assets_dir` (Gymnasium's gymnasium/envs/mujoco/assets, which the Python
// package fills in at import). Throws std::invalid_argument if the file does not exist.
inline std::string ResolveXmlPath(const std::string& xml_file, const std::string& assets_dir) {
  if (xml_file.empty()) throw std::invalid_argument("xml_file must not be empty");
  std::string path;
  if (xml_file[0] == '.' || xml_file[0] == '/') {
    path = xml_file;
  } else if (xml_file[0] == '~') {
    const char* home = std::getenv("HOME");
    path = std::string(home != nullptr ? home : "") + xml_file.substr(1);
  } else {
    if (assets_dir.empty()) {
      throw std::invalid_argument("xml_file '" + xml_file +
                                  "' is a bare file name but assets_dir is empty; pass an absolute path");
    }
    path = assets_dir + "/" + xml_file;
  }
  struct stat st{};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw std::invalid_argument("MuJoCo model file " + path + " does not exist (xml_file='" + xml_file + "')");
  }
  return path;
}

// The model file a task's config names: its `xml_file` key when the task has one (Gymnasium's
// constructor takes it), else the task's fixed file, looked up in `assets_dir`.
inline std::string XmlPathFromConfig(const Config& config, const std::string& fixed_xml_file) {
  const std::string& xml_file = config.Has("xml_file") ? config.GetString("xml_file") : fixed_xml_file;
  return ResolveXmlPath(xml_file, config.GetString("assets_dir"));
}

// Compiles `path` once per process and file version (path, size, modification time): a pool's
// spec and all of its envs get the same model, and an edited file is compiled again.
inline ModelPtr LoadModel(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) throw std::invalid_argument("cannot read MuJoCo model file " + path);
  std::string canonical = path;
  if (char* resolved = realpath(path.c_str(), nullptr)) {
    canonical = resolved;
    std::free(resolved);
  }
  using Key = std::tuple<std::string, long long, long long, long long>;
  const Key key{canonical, static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
                static_cast<long long>(st.st_mtim.tv_nsec)};
  static std::mutex mu;
  static std::map<Key, ModelPtr> cache;  // models are small (~100 kB); kept for the process's life
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  constexpr int kErrorSize = 1000;
  char error[kErrorSize] = "";
  // The model compiler's warnings (Gymnasium's half_cheetah.xml uses the deprecated
  // `settotalmass`) are dropped: MuJoCo's default handler prints them and appends them to
  // MUJOCO_LOG.TXT in the working directory, and `import parallel_pool` builds every task's spec.
  // Errors still come back in `error`. The handler is libmujoco's global, so it is restored.
  void (*previous_warning)(const char*) = mju_user_warning;
  mju_user_warning = [](const char* /*message*/) {};
  mjModel* model = mj_loadXML(canonical.c_str(), nullptr, error, kErrorSize);
  mju_user_warning = previous_warning;
  if (model == nullptr) throw std::invalid_argument("cannot load MuJoCo model " + path + ": " + error);
  ModelPtr shared(model, [](mjModel* m) { mj_deleteModel(m); });
  cache.emplace(key, shared);
  return shared;
}

// An mjData that deletes itself.
struct DataDeleter {
  void operator()(mjData* d) const { mj_deleteData(d); }
};
using DataPtr = std::unique_ptr<mjData, DataDeleter>;

inline DataPtr MakeData(const mjModel* model) {
  DataPtr data(mj_makeData(model));
  if (!data) throw std::runtime_error("mj_makeData failed (out of memory?)");
  return data;
}

}  // namespace pp::mujoco
