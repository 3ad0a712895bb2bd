// Tests of the action checks: the count of arrays, discrete ranges for every integer dtype and
// every row (per-player rows included), NaN refused unless the field allows it, and the messages.
#include "core/action_check.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace {

template <typename T>
std::vector<const std::byte*> Arrays(const std::vector<T>& values) {
  return {reinterpret_cast<const std::byte*>(values.data())};
}

pp::EnvSpec DiscreteSpec(pp::Dtype dtype, int64_t n, int64_t start = 0) {
  pp::EnvSpec spec;
  spec.action = {pp::Discrete("action", n, start, dtype)};
  return spec;
}

template <typename T>
void CheckDiscreteDtype(pp::Dtype dtype) {
  const pp::ActionCheck check(DiscreteSpec(dtype, 3));
  check.CheckValues(Arrays(std::vector<T>{0, 1, 2, 1}), 4);
  CHECK_THROWS_WITH(std::invalid_argument, check.CheckValues(Arrays(std::vector<T>{0, 3, 1, 1}), 4),
                    "action 'action' must be in [0, 2], got 3");
  if constexpr (std::numeric_limits<T>::is_signed) {
    CHECK_THROWS_WITH(std::invalid_argument, check.CheckValues(Arrays(std::vector<T>{0, 1, 1, -1}), 4), "got -1");
  }
}

TEST(DiscreteRangeForEveryIntegerDtype) {
  CheckDiscreteDtype<int8_t>(pp::Dtype::kInt8);
  CheckDiscreteDtype<uint8_t>(pp::Dtype::kUInt8);
  CheckDiscreteDtype<int16_t>(pp::Dtype::kInt16);
  CheckDiscreteDtype<int32_t>(pp::Dtype::kInt32);
  CheckDiscreteDtype<int64_t>(pp::Dtype::kInt64);
}

TEST(DiscreteWithAStart) {
  const pp::ActionCheck check(DiscreteSpec(pp::Dtype::kInt64, 3, -1));
  check.CheckValues(Arrays(std::vector<int64_t>{-1, 0, 1}), 3);
  CHECK_THROWS_WITH(std::invalid_argument, check.CheckValues(Arrays(std::vector<int64_t>{-2}), 1),
                    "must be in [-1, 1], got -2");
}

TEST(OnlyTheGivenRowsAreRead) {
  const pp::ActionCheck check(DiscreteSpec(pp::Dtype::kInt64, 2));
  const std::vector<int64_t> values = {1, 0, 9};  // the third row is not part of this send
  check.CheckValues(Arrays(values), 2);
  CHECK_THROWS(std::invalid_argument, check.CheckValues(Arrays(values), 3));
}

TEST(PerPlayerFieldsHaveMaxNumPlayersRowsPerEnv) {
  pp::EnvSpec spec;
  spec.max_num_players = 4;
  spec.action = {pp::PerPlayer(pp::Discrete("action", 4)), pp::Box("action:aim", pp::Dtype::kFloat32, {2})};
  const pp::ActionCheck check(spec);
  CHECK(check.row_bytes() == (std::vector<std::size_t>{4 * 8, 2 * 4}));
  std::vector<int64_t> guesses(2 * 4, 0);
  const std::vector<float> aim(2 * 2, 0.0f);
  std::vector<const std::byte*> arrays = {reinterpret_cast<const std::byte*>(guesses.data()),
                                          reinterpret_cast<const std::byte*>(aim.data())};
  check.CheckValues(arrays, 2);
  guesses[1 * 4 + 3] = 4;  // env 1's last player row, unused by an env with fewer players
  CHECK_THROWS_WITH(std::invalid_argument, check.CheckValues(arrays, 2), "got 4");
}

TEST(NaNIsRefusedUnlessAllowed) {
  pp::EnvSpec spec;
  spec.action = {pp::Box("action", pp::Dtype::kFloat32, {2}, {-1.0}, {1.0})};
  const pp::ActionCheck check(spec);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Out of the box's bounds is the env's to handle (Gymnasium's envs clip); infinities are not NaN.
  check.CheckValues(Arrays(std::vector<float>{5.0f, -std::numeric_limits<float>::infinity()}), 1);
  CHECK_THROWS_WITH(std::invalid_argument, check.CheckValues(Arrays(std::vector<float>{0.0f, 0.0f, 0.0f, nan}), 2),
                    "action 'action' contains NaN, which this env does not accept");
  spec.action[0].dtype = pp::Dtype::kFloat64;
  const pp::ActionCheck wide(spec);
  CHECK_THROWS(std::invalid_argument, wide.CheckValues(Arrays(std::vector<double>{std::nan("")}), 1));
  spec.action[0].allow_nan = true;
  const pp::ActionCheck allowed(spec);
  allowed.CheckValues(Arrays(std::vector<double>{std::nan(""), 0.0}), 1);
}

TEST(OneArrayPerField) {
  pp::EnvSpec spec;
  spec.action = {pp::Discrete("action:move", 3), pp::Discrete("action:fire", 2)};
  const pp::ActionCheck check(spec);
  const std::vector<int64_t> a = {0};
  CHECK_THROWS_WITH(std::invalid_argument, check.CheckCount(Arrays(a)), "expected 2 action arrays, got 1");
  CHECK_THROWS_WITH(std::invalid_argument, check.CheckCount({}), "expected 2 action arrays, got 0");
  check.CheckCount({reinterpret_cast<const std::byte*>(a.data()), reinterpret_cast<const std::byte*>(a.data())});
  // Each field is checked against its own range and named.
  const std::vector<int64_t> move = {2}, fire = {2};
  CHECK_THROWS_WITH(
      std::invalid_argument,
      check.CheckValues(
          {reinterpret_cast<const std::byte*>(move.data()), reinterpret_cast<const std::byte*>(fire.data())}, 1),
      "action 'action:fire' must be in [0, 1], got 2");
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
