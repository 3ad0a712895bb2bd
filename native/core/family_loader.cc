// The loader of env libraries: dlopen, the resources the library declares, its registration.
#include "family_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "family.h"

namespace pp {
namespace {

using RegisterFn = void (*)(Registry*);
using ResourcesFn = const char* (*)();

void* Open(const std::string& path) {
  // RTLD_LOCAL: two libraries may define the same internal symbols; each keeps its own.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw std::invalid_argument("cannot load env library " + path + ": " + (why ? why : "unknown error"));
  }
  return handle;
}

std::vector<ResourceRequest> ParseResources(const std::string& path, const char* text) {
  std::vector<ResourceRequest> out;
  if (text == nullptr) return out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    ResourceRequest r;
    std::string extra;
    if (!(words >> r.name)) continue;  // a blank line
    if (!(words >> r.package >> r.path) || (words >> extra)) {
      throw std::invalid_argument("env library " + path + " declares a malformed resource line '" + line +
                                  "' (expected '<name> <python package> <directory in the package>')");
    }
    out.push_back(std::move(r));
  }
  return out;
}

// One library registers at a time: the registry's resources belong to the library being loaded.
std::mutex& LoadMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

std::vector<ResourceRequest> LibraryResources(const std::string& library_path) {
  void* handle = Open(library_path);
  auto fn = reinterpret_cast<ResourcesFn>(dlsym(handle, "parallel_pool_resources"));
  std::vector<ResourceRequest> out;
  try {
    out = ParseResources(library_path, fn != nullptr ? fn() : nullptr);
  } catch (...) {
    dlclose(handle);
    throw;
  }
  dlclose(handle);  // only a reference count: LoadEnvLibrary opens it again
  return out;
}

std::vector<std::string> LoadEnvLibrary(Registry& registry, const std::string& library_path,
                                        const std::map<std::string, std::string>& resources) {
  std::lock_guard<std::mutex> lock(LoadMutex());
  void* handle = Open(library_path);
  auto fn = reinterpret_cast<RegisterFn>(dlsym(handle, "parallel_pool_register"));
  if (fn == nullptr) {
    dlclose(handle);
    throw std::invalid_argument("env library " + library_path + " has no parallel_pool_register function");
  }
  // A library built against other core headers shares types with this engine that differ: refuse
  // it before calling into it. A library without the version predates it (version 1).
  using AbiFn = int (*)();
  auto abi = reinterpret_cast<AbiFn>(dlsym(handle, "parallel_pool_abi_version"));
  const int version = abi != nullptr ? abi() : 1;
  if (version != PP_CORE_ABI_VERSION) {
    dlclose(handle);
    throw std::invalid_argument(
        "env library " + library_path + " was built against parallel_pool's core headers of ABI version " +
        std::to_string(version) + ", and this engine's is " + std::to_string(PP_CORE_ABI_VERSION) +
        ": rebuild it against this parallel_pool (parallel_pool.get_include())");
  }
  auto declared = reinterpret_cast<ResourcesFn>(dlsym(handle, "parallel_pool_resources"));
  std::map<std::string, std::string> given;
  for (const ResourceRequest& r : ParseResources(library_path, declared != nullptr ? declared() : nullptr)) {
    auto it = resources.find(r.name);
    if (it == resources.end()) {
      dlclose(handle);
      throw std::invalid_argument("env library " + library_path + " needs resource '" + r.name + "' (directory " +
                                  r.path + " of the Python package " + r.package + ")");
    }
    given[r.name] = it->second;
  }
  const std::vector<std::string> before = registry.TaskIds();
  registry.SetResources(std::move(given));
  try {
    fn(&registry);
  } catch (...) {
    registry.SetResources({});
    throw;
  }
  registry.SetResources({});
  std::vector<std::string> added;
  for (const std::string& id : registry.TaskIds()) {
    if (!std::binary_search(before.begin(), before.end(), id)) added.push_back(id);
  }
  return added;  // TaskIds() is sorted (a std::map), so `added` is too
}

std::vector<std::string> InstalledFamilies(const std::string& package_dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code error;
  const fs::path dir = fs::path(package_dir) / "families";
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".so") out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool ResolveResources(const std::vector<std::string>& site_dirs, const std::vector<ResourceRequest>& requests,
                      std::map<std::string, std::string>* resources) {
  namespace fs = std::filesystem;
  for (const ResourceRequest& r : requests) {
    bool found = false;
    for (const std::string& site : site_dirs) {
      const fs::path dir = fs::path(site) / r.package / r.path;
      std::error_code error;
      if (fs::is_directory(dir, error)) {
        (*resources)[r.name] = dir.string();
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

std::vector<std::string> LoadInstalledFamilies(Registry& registry, const std::string& package_dir,
                                               const std::vector<std::string>& extra_site_dirs) {
  namespace fs = std::filesystem;
  fs::path package = fs::absolute(fs::path(package_dir)).lexically_normal();
  if (!package.has_filename()) package = package.parent_path();  // a trailing separator
  std::vector<std::string> site_dirs{package.parent_path().string()};
  site_dirs.insert(site_dirs.end(), extra_site_dirs.begin(), extra_site_dirs.end());
  std::vector<std::string> added;
  for (const std::string& library : InstalledFamilies(package_dir)) {
    std::map<std::string, std::string> resources;
    if (!ResolveResources(site_dirs, LibraryResources(library), &resources)) continue;
    for (std::string& id : LoadEnvLibrary(registry, library, resources)) added.push_back(std::move(id));
  }
  std::sort(added.begin(), added.end());
  return added;
}

}  // namespace pp
