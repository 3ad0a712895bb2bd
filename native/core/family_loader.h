// The one loader of env libraries: the families installed with the package and env libraries
// built elsewhere are opened, given their resources and registered the same way (family.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "registry.h"

namespace pp {

// One data directory an env library asks for (PP_FAMILY_RESOURCES): `path` inside Python package
// `package`.
struct ResourceRequest {
  std::string name;
  std::string package;
  std::string path;
};

// The resources the library at `library_path` declares (none if it declares none). Throws
// std::invalid_argument if it cannot be opened or its declaration is malformed.
std::vector<ResourceRequest> LibraryResources(const std::string& library_path);

// Opens the library, hands it `resources` (every declared one must be there) and calls its
// parallel_pool_register with `registry`. Returns the task ids it added, sorted. The library stays
// loaded: its envs' code lives in it.
std::vector<std::string> LoadEnvLibrary(Registry& registry, const std::string& library_path,
                                        const std::map<std::string, std::string>& resources);

// The family libraries installed with the Python package: `<package_dir>/families/*.so`, in name
// order. For a C++ program using the engine without Python.
std::vector<std::string> InstalledFamilies(const std::string& package_dir);

// Resolves a library's resources as `<site>/<package>/<path>`, trying each directory of `site_dirs`
// in turn (a plain pip install puts every package in one site-packages directory: the parent of
// parallel_pool's package dir). Returns false (leaving `resources` incomplete) if one is missing.
bool ResolveResources(const std::vector<std::string>& site_dirs, const std::vector<ResourceRequest>& requests,
                      std::map<std::string, std::string>* resources);

// Loads every installed family whose resources resolve in the parent directory of `package_dir`
// or in `extra_site_dirs` (a family whose Python package is not installed is skipped, as the Python
// package does). Returns the task ids added.
std::vector<std::string> LoadInstalledFamilies(Registry& registry, const std::string& package_dir,
                                               const std::vector<std::string>& extra_site_dirs = {});

}  // namespace pp
