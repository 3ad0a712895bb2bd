// Tests of a pool's output layout: which fields a block carries for each set of options, in which
// order, with which dtypes and row counts; and the writes of the core's fields into one row.
#include "core/output_layout.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace {

pp::EnvSpec SinglePlayer() {
  pp::EnvSpec spec;
  spec.state = {pp::Box("obs", pp::Dtype::kFloat32, {4}), pp::Box("info:lives", pp::Dtype::kInt32, {})};
  spec.action = {pp::Discrete("action", 2)};
  return spec;
}

pp::EnvSpec ThreePlayers() {
  pp::EnvSpec spec;
  spec.max_num_players = 3;
  spec.state = {pp::PerPlayer(pp::Box("obs", pp::Dtype::kFloat32, {2})),
                pp::Box("info:num_players", pp::Dtype::kInt32, {})};
  spec.action = {pp::PerPlayer(pp::Discrete("action", 4))};
  return spec;
}

pp::OutputLayout Make(const pp::EnvSpec& spec, int batch_size, bool episode_stats, bool same_step) {
  pp::OutputOptions o;
  o.batch_size = batch_size;
  o.episode_stats = episode_stats;
  o.same_step = same_step;
  return pp::MakeOutputLayout(spec, o);
}

std::vector<std::string> Names(const pp::BlockLayout& layout) {
  std::vector<std::string> names;
  for (const auto& f : layout.fields()) names.push_back(f.name);
  return names;
}

const pp::BlockField& Field(const pp::OutputLayout& l, int index) {
  return l.blocks.fields()[static_cast<std::size_t>(index)];
}

TEST(CoreFieldsThenStateFields) {
  const pp::OutputLayout l = Make(SinglePlayer(), 8, false, false);
  CHECK(Names(l.blocks) == (std::vector<std::string>{"info:env_id", "info:elapsed_step", "reward", "terminated",
                                                     "truncated", "obs", "info:lives"}));
  const pp::OutputFields& f = l.fields;
  CHECK_EQ(Field(l, f.env_id).dtype, pp::Dtype::kInt32);
  CHECK_EQ(Field(l, f.elapsed_step).dtype, pp::Dtype::kInt32);
  CHECK_EQ(Field(l, f.reward).dtype, pp::Dtype::kFloat64);
  CHECK_EQ(Field(l, f.terminated).dtype, pp::Dtype::kBool);
  CHECK_EQ(Field(l, f.truncated).dtype, pp::Dtype::kBool);
  CHECK(f.state == (std::vector<int>{5, 6}));
  CHECK(Field(l, f.state[0]).shape == std::vector<int>{4});
  CHECK_EQ(Field(l, f.state[0]).row_bytes, 16u);
  for (const auto& field : l.blocks.fields()) CHECK_EQ(field.capacity, 8u);
  // Left out by these options.
  CHECK_EQ(f.players_env_id, -1);
  CHECK_EQ(f.episode_r, -1);
  CHECK_EQ(f.episode_mask, -1);
  CHECK_EQ(f.final_mask, -1);
  CHECK(f.final_state.empty());
}

TEST(EpisodeStatsFields) {
  const pp::OutputLayout l = Make(SinglePlayer(), 4, true, false);
  const pp::OutputFields& f = l.fields;
  CHECK_EQ(Field(l, f.episode_r).name, std::string("info:episode.r"));
  CHECK_EQ(Field(l, f.episode_r).dtype, pp::Dtype::kFloat64);
  CHECK_EQ(Field(l, f.episode_l).name, std::string("info:episode.l"));
  CHECK_EQ(Field(l, f.episode_l).dtype, pp::Dtype::kInt64);
  CHECK_EQ(Field(l, f.episode_t).name, std::string("info:episode.t"));
  CHECK_EQ(Field(l, f.episode_t).dtype, pp::Dtype::kFloat64);
  CHECK_EQ(Field(l, f.episode_mask).name, std::string("info:_episode"));
  CHECK_EQ(Field(l, f.episode_mask).dtype, pp::Dtype::kBool);
  CHECK_LT(f.episode_mask, f.state[0]);  // before the env's own fields
}

TEST(SameStepFinalCopiesComeLast) {
  const pp::OutputLayout l = Make(SinglePlayer(), 4, false, true);
  const pp::OutputFields& f = l.fields;
  CHECK(Names(l.blocks) ==
        (std::vector<std::string>{"info:env_id", "info:elapsed_step", "reward", "terminated", "truncated", "obs",
                                  "info:lives", "info:_final", "final:obs", "final:info:lives"}));
  if (!CHECK_EQ(f.final_state.size(), 2u)) return;
  for (std::size_t i = 0; i < 2; ++i) {
    const pp::BlockField& state = Field(l, f.state[i]);
    const pp::BlockField& copy = Field(l, f.final_state[i]);
    CHECK_EQ(copy.dtype, state.dtype);
    CHECK(copy.shape == state.shape);
    CHECK_EQ(copy.row_bytes, state.row_bytes);
    CHECK_EQ(copy.capacity, state.capacity);
  }
}

TEST(PerPlayerRowsAndTheirFinalCopies) {
  const pp::OutputLayout l = Make(ThreePlayers(), 4, false, false);
  const pp::OutputFields& f = l.fields;
  const pp::BlockField& players = Field(l, f.players_env_id);
  CHECK_EQ(players.name, std::string("info:players.env_id"));
  CHECK(players.per_player);
  CHECK_EQ(players.capacity, 12u);  // batch_size * max_num_players
  CHECK(Field(l, f.state[0]).per_player);
  CHECK_EQ(Field(l, f.state[0]).capacity, 12u);
  CHECK(!Field(l, f.state[1]).per_player);
  CHECK_EQ(Field(l, f.state[1]).capacity, 4u);
  // Several players: per-player fields have no final copy (the reset may change the players).
  const pp::OutputLayout same = Make(ThreePlayers(), 4, false, true);
  CHECK(same.fields.final_state == (std::vector<int>{-1, same.fields.final_state[1]}));
  CHECK_GE(same.fields.final_state[1], 0);
  // One player: a per-player row is the env's row, so it has one.
  pp::EnvSpec one = ThreePlayers();
  one.max_num_players = 1;
  const pp::OutputLayout single = Make(one, 4, false, true);
  CHECK_EQ(single.fields.players_env_id, -1);
  CHECK_GE(single.fields.final_state[0], 0);
  CHECK_EQ(Field(single, single.fields.final_state[0]).capacity, 4u);
}

TEST(WriteStepFieldsWritesOneRow) {
  const pp::OutputLayout l = Make(SinglePlayer(), 3, false, true);
  auto blocks = std::make_shared<pp::BlockFreeList>(l.blocks);
  pp::OutputBlock* block = blocks->Acquire();
  const pp::OutputFields& f = l.fields;
  for (int r = 0; r < 3; ++r) pp::At<bool>(*block, f.final_mask, r) = true;
  pp::StepResult result;
  result.reward = -2.5;
  result.truncated = true;
  pp::WriteStepFields(*block, f, 1, 7, 42, result);
  CHECK_EQ(pp::At<int32_t>(*block, f.env_id, 1), 7);
  CHECK_EQ(pp::At<int32_t>(*block, f.elapsed_step, 1), 42);
  CHECK_EQ(pp::At<double>(*block, f.reward, 1), -2.5);
  CHECK_EQ(pp::At<bool>(*block, f.terminated, 1), false);
  CHECK_EQ(pp::At<bool>(*block, f.truncated, 1), true);
  CHECK_EQ(pp::At<bool>(*block, f.final_mask, 1), false);  // no final observation in this row
  CHECK_EQ(pp::At<bool>(*block, f.final_mask, 0), true);   // the other rows are untouched
  CHECK_EQ(pp::At<bool>(*block, f.final_mask, 2), true);
  pp::BlockFreeList::Release(block);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
