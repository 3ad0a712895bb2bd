// Tests of the env-library loader (core/family_loader.h) and of Batch (core/batch.h), with a
// test library (test_family_library.cc) built as an env library next to this test.
#include "core/family_loader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/pool.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace {

// A scratch directory tree: <root>/site-a/some_package/data/models, <root>/site-b/other_package/roms.
struct Sites {
  fs::path root = fs::temp_directory_path() / ("pp_family_loader_test_" + std::to_string(::getpid()));
  Sites() {
    fs::create_directories(root / "site-a" / "some_package" / "data" / "models");
    fs::create_directories(root / "site-b" / "other_package" / "roms");
    fs::create_directories(root / "site-a" / "parallel_pool" / "families");
    fs::copy_file(PP_TEST_FAMILY_LIBRARY, root / "site-a" / "parallel_pool" / "families" / "test_family.so",
                  fs::copy_options::overwrite_existing);
    std::ofstream(root / "site-a" / "parallel_pool" / "families" / "README.txt") << "not a library\n";
  }
  ~Sites() {
    std::error_code error;
    fs::remove_all(root, error);
  }
  std::string package() const { return (root / "site-a" / "parallel_pool").string(); }
  std::string site_b() const { return (root / "site-b").string(); }
};

}  // namespace

TEST(LibraryResourcesParsesTheDeclaration) {
  const std::vector<pp::ResourceRequest> r = pp::LibraryResources(PP_TEST_FAMILY_LIBRARY);
  CHECK_EQ(r.size(), std::size_t{2});  // the blank line is skipped
  CHECK_EQ(r[0].name, std::string("models"));
  CHECK_EQ(r[0].package, std::string("some_package"));
  CHECK_EQ(r[0].path, std::string("data/models"));
  CHECK_EQ(r[1].name, std::string("roms"));
  CHECK_EQ(r[1].package, std::string("other_package"));
}

TEST(LoadingWithoutADeclaredResourceThrowsAndRegistersNothing) {
  pp::Registry registry;
  CHECK_THROWS_WITH(std::invalid_argument, pp::LoadEnvLibrary(registry, PP_TEST_FAMILY_LIBRARY, {{"models", "/m"}}),
                    "needs resource 'roms' (directory roms of the Python package other_package)");
  CHECK(registry.TaskIds().empty());
  CHECK_THROWS_WITH(std::invalid_argument, registry.Resource("models"), "no resource 'models'");
}

TEST(LoadingRegistersTheTasksWithTheirResources) {
  pp::Registry registry;
  const auto added = pp::LoadEnvLibrary(registry, PP_TEST_FAMILY_LIBRARY, {{"models", "/m"}, {"roms", "/r"}});
  CHECK_EQ(added, std::vector<std::string>{"Constant-v0"});
  auto task = registry.Find("Constant-v0");
  CHECK(task != nullptr);
  CHECK_EQ(task->family, std::string("test_family"));
  CHECK_EQ(task->defaults.GetString("models"), std::string("/m"));
  CHECK_EQ(task->defaults.GetString("roms"), std::string("/r"));
  CHECK(task->reward_threshold.has_value() && *task->reward_threshold == 7.5);
  // The resources were the library's only while it registered.
  CHECK_THROWS(std::invalid_argument, registry.Resource("models"));
  // Loading again adds nothing new.
  CHECK(pp::LoadEnvLibrary(registry, PP_TEST_FAMILY_LIBRARY, {{"models", "/m"}, {"roms", "/r"}}).empty());
}

TEST(BadLibrariesAreClearErrors) {
  pp::Registry registry;
  CHECK_THROWS_WITH(std::invalid_argument, pp::LoadEnvLibrary(registry, "/no/such/library.so", {}),
                    "cannot load env library /no/such/library.so");
  CHECK_THROWS_WITH(std::invalid_argument, pp::LibraryResources("/no/such/library.so"), "cannot load env library");
}

TEST(InstalledFamiliesAreTheSharedLibrariesOfFamiliesDir) {
  Sites sites;
  const auto found = pp::InstalledFamilies(sites.package());
  CHECK_EQ(found.size(), std::size_t{1});
  CHECK(found[0].find("test_family.so") != std::string::npos);
  CHECK(pp::InstalledFamilies((sites.root / "nowhere").string()).empty());
}

TEST(ResourcesResolveInEachSiteDirInTurn) {
  Sites sites;
  const auto requests = pp::LibraryResources(PP_TEST_FAMILY_LIBRARY);
  std::map<std::string, std::string> resources;
  CHECK(!pp::ResolveResources({(sites.root / "site-a").string()}, requests, &resources));
  resources.clear();
  CHECK(pp::ResolveResources({(sites.root / "site-a").string(), sites.site_b()}, requests, &resources));
  CHECK_EQ(resources["models"], (sites.root / "site-a" / "some_package" / "data" / "models").string());
  CHECK_EQ(resources["roms"], (sites.root / "site-b" / "other_package" / "roms").string());
}

TEST(LoadInstalledFamiliesSkipsAFamilyWhoseResourcesAreMissing) {
  Sites sites;
  pp::Registry registry;
  CHECK(pp::LoadInstalledFamilies(registry, sites.package()).empty());  // other_package is not in site-a
  const auto added = pp::LoadInstalledFamilies(registry, sites.package() + "/", {sites.site_b()});
  CHECK_EQ(added.size(), std::size_t{1});
  if (!added.empty()) CHECK_EQ(added[0], std::string("Constant-v0"));
}

TEST(BatchReadsFieldsByNameAndGivesTheBlockBack) {
  pp::Registry registry;
  pp::LoadEnvLibrary(registry, PP_TEST_FAMILY_LIBRARY, {{"models", "/m"}, {"roms", "/r"}});
  auto task = registry.Find("Constant-v0");
  pp::PoolOptions options;
  options.num_envs = 3;
  options.batch_size = 3;
  options.num_threads = 1;
  options.seeds = {0, 1, 2};
  pp::Pool pool(task, pp::MakeSpec(*task, {}), options);
  std::vector<int32_t> ids(3);
  std::iota(ids.begin(), ids.end(), 0);
  pool.Reset(ids.data(), 3, {}, true);
  {
    pp::Batch batch(pool.layout(), pool.Recv(-1.0), 3);
    CHECK_EQ(batch.rows(), 3);
    CHECK_EQ(batch.RowSize("obs"), std::size_t{1});
    CHECK_EQ(batch.Get<float>("obs")[2], 1.0f);
    CHECK_EQ(batch.Get<int32_t>("info:env_id")[1], 1);
    CHECK_THROWS_WITH(std::invalid_argument, batch.Get<double>("obs"), "has dtype float32");
    CHECK_THROWS_WITH(std::invalid_argument, batch.Get<int32_t>("obs"), "has dtype float32");
    CHECK_THROWS_WITH(std::invalid_argument, batch.Get<int8_t>("terminated"), "has dtype bool");
    CHECK_THROWS_WITH(std::out_of_range, batch.Get<float>("nope"), "no field 'nope'");
  }
  std::vector<int64_t> actions{0, 1, 0};
  std::vector<const std::byte*> rows{reinterpret_cast<const std::byte*>(actions.data())};
  pp::Batch batch(pool.layout(), pool.Step(ids.data(), 3, rows), 3);
  CHECK_EQ(batch.Get<double>("reward")[0], 0.5);
  pp::Batch moved = std::move(batch);
  CHECK_EQ(moved.Get<bool>("truncated")[0], false);
  moved = pp::Batch(pool.layout(), pool.Step(ids.data(), 3, rows), 3);  // the old block comes back after the new one
  const int allocated = pool.blocks_allocated();
  for (int t = 0; t < 10; ++t) {  // blocks come back: steady state allocates none
    moved = pp::Batch(pool.layout(), pool.Step(ids.data(), 3, rows), 3);
  }
  CHECK_EQ(pool.blocks_allocated(), allocated);
}

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
