// Tests of Config: typed reads, overrides that keep each key's type (an int may stand for a float),
// and the errors that name the key.
#include "core/config.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "tests/test_util.h"

namespace {

pp::Config Defaults() {
  return pp::Config{
      {"frame_skip", int64_t{4}},
      {"gray_scale", true},
      {"reward_scale", 0.5},
      {"rom", std::string("pong")},
      {"range", std::vector<double>{-1.0, 1.0}},
  };
}

TEST(TypedReads) {
  const pp::Config c = Defaults();
  CHECK_EQ(c.GetInt("frame_skip"), 4);
  CHECK_EQ(c.GetBool("gray_scale"), true);
  CHECK_EQ(c.GetFloat("reward_scale"), 0.5);
  CHECK_EQ(c.GetFloat("frame_skip"), 4.0);  // an int reads as a float
  CHECK_EQ(c.GetString("rom"), std::string("pong"));
  CHECK(c.GetFloats("range") == (std::vector<double>{-1.0, 1.0}));
  CHECK(c.Has("rom"));
  CHECK(!c.Has("seed"));
  CHECK_EQ(c.values().size(), 5u);
  CHECK_EQ(c.values().begin()->first, std::string("frame_skip"));  // sorted by key
  CHECK_THROWS_WITH(std::out_of_range, c.GetInt("nope"), "config has no key 'nope'");
  CHECK_THROWS(std::bad_variant_access, c.GetBool("frame_skip"));
}

TEST(OverrideReturnsACopy) {
  const pp::Config defaults = Defaults();
  const pp::Config c = defaults.Override({{"frame_skip", int64_t{2}}, {"rom", std::string("breakout")}});
  CHECK_EQ(c.GetInt("frame_skip"), 2);
  CHECK_EQ(c.GetString("rom"), std::string("breakout"));
  CHECK_EQ(c.GetBool("gray_scale"), true);  // untouched keys keep their default
  CHECK_EQ(defaults.GetInt("frame_skip"), 4);
  pp::Config set = defaults;
  set.Set("frame_skip", int64_t{8});
  CHECK_EQ(set.GetInt("frame_skip"), 8);
}

TEST(AnIntStandsForAFloatButNotTheOtherWay) {
  const pp::Config c = Defaults().Override({{"reward_scale", int64_t{3}}});
  CHECK(std::holds_alternative<double>(c.values().at("reward_scale")));  // stored as the default's type
  CHECK_EQ(c.GetFloat("reward_scale"), 3.0);
  CHECK_THROWS_WITH(std::invalid_argument, Defaults().Override({{"frame_skip", 2.5}}),
                    "config key 'frame_skip' expects int, got float");
}

TEST(OverrideErrorsNameTheKey) {
  const pp::Config c = Defaults();
  CHECK_THROWS_WITH(std::invalid_argument, c.Override({{"frameskip", int64_t{2}}}), "unknown config key 'frameskip'");
  CHECK_THROWS_WITH(std::invalid_argument, c.Override({{"gray_scale", int64_t{1}}}),
                    "config key 'gray_scale' expects bool, got int");
  CHECK_THROWS_WITH(std::invalid_argument, c.Override({{"rom", 1.0}}), "config key 'rom' expects str, got float");
  CHECK_THROWS_WITH(std::invalid_argument, c.Override({{"range", std::string("x")}}),
                    "config key 'range' expects sequence of floats, got str");
}

TEST(TypeNames) {
  CHECK_EQ(std::string(pp::ConfigTypeName(true)), std::string("bool"));
  CHECK_EQ(std::string(pp::ConfigTypeName(int64_t{1})), std::string("int"));
  CHECK_EQ(std::string(pp::ConfigTypeName(1.0)), std::string("float"));
  CHECK_EQ(std::string(pp::ConfigTypeName(std::string("a"))), std::string("str"));
  CHECK_EQ(std::string(pp::ConfigTypeName(std::vector<double>{})), std::string("sequence of floats"));
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
