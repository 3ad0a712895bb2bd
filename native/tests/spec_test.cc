// Tests of the spec declarations: the field builders, element and byte counts, and field lookup.
#include "core/spec.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace {

TEST(BoxKeepsWhatItIsGiven) {
  const pp::FieldSpec f = pp::Box("obs", pp::Dtype::kUInt8, {4, 84, 84}, {0.0}, {255.0});
  CHECK_EQ(f.name, std::string("obs"));
  CHECK_EQ(f.dtype, pp::Dtype::kUInt8);
  CHECK(f.shape == (std::vector<int>{4, 84, 84}));
  CHECK_EQ(f.space, pp::SpaceKind::kBox);
  CHECK(f.low == std::vector<double>{0.0});
  CHECK(f.high == std::vector<double>{255.0});
  CHECK(!f.per_player);
  CHECK(!f.allow_nan);  // envs forbid NaN actions unless they say otherwise
  CHECK_EQ(f.NumElements(), 4u * 84u * 84u);
  CHECK_EQ(f.RowBytes(), 4u * 84u * 84u);
  const pp::FieldSpec unbounded = pp::Box("info:x", pp::Dtype::kFloat64, {3});
  CHECK(unbounded.low.empty() && unbounded.high.empty());
  CHECK_EQ(unbounded.RowBytes(), 24u);
}

TEST(AScalarHasOneElement) {
  const pp::FieldSpec f = pp::Box("info:lives", pp::Dtype::kInt32, {});
  CHECK_EQ(f.NumElements(), 1u);
  CHECK_EQ(f.RowBytes(), 4u);
}

TEST(DiscreteBoundsAreInclusive) {
  const pp::FieldSpec f = pp::Discrete("action", 6);
  CHECK_EQ(f.space, pp::SpaceKind::kDiscrete);
  CHECK_EQ(f.dtype, pp::Dtype::kInt64);
  CHECK(f.shape.empty());
  CHECK(f.low == std::vector<double>{0.0});
  CHECK(f.high == std::vector<double>{5.0});
  const pp::FieldSpec shifted = pp::Discrete("action", 3, -1, pp::Dtype::kInt32);
  CHECK(shifted.low == std::vector<double>{-1.0});
  CHECK(shifted.high == std::vector<double>{1.0});
  CHECK_EQ(shifted.RowBytes(), 4u);
}

TEST(PerPlayerMarksACopy) {
  const pp::FieldSpec f = pp::Box("obs", pp::Dtype::kFloat32, {2});
  const pp::FieldSpec p = pp::PerPlayer(f);
  CHECK(p.per_player);
  CHECK(!f.per_player);
  CHECK_EQ(p.RowBytes(), f.RowBytes());  // the bytes of one player's row
}

TEST(FieldLookupByName) {
  pp::EnvSpec spec;
  spec.state = {pp::Box("obs", pp::Dtype::kFloat32, {4}), pp::Box("info:x", pp::Dtype::kInt32, {})};
  spec.action = {pp::Discrete("action", 2)};
  CHECK_EQ(spec.StateIndex("obs"), 0);
  CHECK_EQ(spec.StateIndex("info:x"), 1);
  CHECK_EQ(spec.ActionIndex("action"), 0);
  CHECK_THROWS_WITH(std::out_of_range, spec.StateIndex("action"), "spec has no field 'action'");
  CHECK_THROWS_WITH(std::out_of_range, spec.ActionIndex("obs"), "spec has no field 'obs'");
  // What a spec is before a task fills it in.
  CHECK_EQ(spec.max_num_players, 1);
  CHECK_EQ(spec.max_episode_steps, 0);
  CHECK(!spec.reward_threshold.has_value());
  CHECK(spec.render_shape.empty());
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
