// Tests of the episode bookkeeping: the autoreset mode's names, when a job resets instead of steps
// in each mode, the send-time checks, info["episode"] and same_step's final copy.
#include "core/episode.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

using pp::AutoresetMode;
using pp::Episode;

TEST(ModeNames) {
  CHECK_EQ(pp::ParseAutoresetMode("next_step"), AutoresetMode::kNextStep);
  CHECK_EQ(pp::ParseAutoresetMode("same_step"), AutoresetMode::kSameStep);
  CHECK_EQ(pp::ParseAutoresetMode("disabled"), AutoresetMode::kDisabled);
  try {
    pp::ParseAutoresetMode("sometimes");
    CHECK(!"parsed");
  } catch (const std::invalid_argument& e) {
    CHECK_EQ(std::string(e.what()),
             std::string("autoreset_mode must be one of ('next_step', 'same_step', 'disabled'), got 'sometimes'"));
  }
  CHECK_THROWS(std::invalid_argument, pp::ParseAutoresetMode("NextStep"));
}

TEST(ANewEnvResetsWhateverItIsAsked) {
  const Episode e;
  for (AutoresetMode m : {AutoresetMode::kNextStep, AutoresetMode::kSameStep, AutoresetMode::kDisabled}) {
    CHECK(e.ResetDue(false, m));
    CHECK(e.ResetDue(true, m));
  }
  CHECK(!e.ever_reset());
}

TEST(WhenAJobResets) {
  for (AutoresetMode m : {AutoresetMode::kNextStep, AutoresetMode::kSameStep, AutoresetMode::kDisabled}) {
    Episode e;
    e.Begin(false);
    CHECK(e.ever_reset());
    CHECK(!e.ResetDue(false, m));  // a running episode steps
    CHECK(e.ResetDue(true, m));    // unless a reset is asked for
    e.SetOver(false);
    CHECK(!e.ResetDue(false, m));
    e.SetOver(true);  // the episode ended: the next step resets, unless autoreset is off
    CHECK_EQ(e.ResetDue(false, m), m != AutoresetMode::kDisabled);
    e.Begin(false);
    CHECK(!e.ResetDue(false, m));
    e.Fail();  // an env that raised is reset by its next job, as an ended episode
    CHECK_EQ(e.ResetDue(false, m), m != AutoresetMode::kDisabled);
  }
  // Only same_step resets inside the step that ended the episode.
  CHECK(Episode::ResetsInStep(true, AutoresetMode::kSameStep));
  CHECK(!Episode::ResetsInStep(false, AutoresetMode::kSameStep));
  CHECK(!Episode::ResetsInStep(true, AutoresetMode::kNextStep));
  CHECK(!Episode::ResetsInStep(true, AutoresetMode::kDisabled));
}

// An env whose first reset raised was asked to reset: its next step resets it again rather than
// being refused as a step before reset (with autoreset off, it must be reset explicitly).
TEST(AFailedFirstResetIsRetriedByTheNextStep) {
  for (AutoresetMode m : {AutoresetMode::kNextStep, AutoresetMode::kSameStep, AutoresetMode::kDisabled}) {
    Episode e;
    e.Fail();
    CHECK(e.ever_reset());
    CHECK(e.ResetDue(true, m));
    CHECK_EQ(e.ResetDue(false, m), m != AutoresetMode::kDisabled);
    if (m == AutoresetMode::kDisabled) {
      CHECK_THROWS_WITH(std::invalid_argument, e.CheckStep(2, m), "env 2: its episode is over");
    } else {
      e.CheckStep(2, m);
    }
  }
}

TEST(SendTimeChecks) {
  Episode e;
  // An env never reset may be stepped in every mode (as EnvPool's): that job resets it.
  for (AutoresetMode m : {AutoresetMode::kNextStep, AutoresetMode::kSameStep, AutoresetMode::kDisabled}) {
    e.CheckStep(3, m);
    CHECK(e.ResetDue(false, m));
  }
  e.Begin(false);
  e.CheckStep(3, AutoresetMode::kDisabled);
  e.SetOver(true);
  e.CheckStep(3, AutoresetMode::kNextStep);
  e.CheckStep(3, AutoresetMode::kSameStep);
  CHECK_THROWS_WITH(std::invalid_argument, e.CheckStep(5, AutoresetMode::kDisabled),
                    "env 5: its episode is over and autoreset_mode='disabled'; reset it first (reset_mask)");
}

struct Block {
  explicit Block(const pp::OutputLayout& l) : list(std::make_shared<pp::BlockFreeList>(l.blocks)), b(list->Acquire()) {}
  ~Block() { pp::BlockFreeList::Release(b); }
  std::shared_ptr<pp::BlockFreeList> list;
  pp::OutputBlock* b;
};

pp::EnvSpec Spec() {
  pp::EnvSpec spec;
  spec.state = {pp::Box("obs", pp::Dtype::kFloat32, {3}), pp::Box("info:lives", pp::Dtype::kInt32, {})};
  return spec;
}

// The layout of Spec() in blocks of `batch_size` rows, with one output option on.
pp::OutputLayout LayoutWith(int batch_size, bool pp::OutputOptions::* option) {
  pp::OutputOptions o;
  o.batch_size = batch_size;
  o.*option = true;
  return pp::MakeOutputLayout(Spec(), o);
}

TEST(EpisodeStatsOfTheStepThatEndsIt) {
  const pp::OutputLayout l = LayoutWith(2, &pp::OutputOptions::episode_stats);
  const pp::OutputFields& f = l.fields;
  Block block(l);
  Episode e;
  e.Begin(true);
  e.Count(1.5);
  e.Count(-0.25);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  e.WriteStats(*block.b, f, 1, false);  // not done: zeros
  CHECK_EQ(pp::At<double>(*block.b, f.episode_r, 1), 0.0);
  CHECK_EQ(pp::At<int64_t>(*block.b, f.episode_l, 1), 0);
  CHECK_EQ(pp::At<double>(*block.b, f.episode_t, 1), 0.0);
  CHECK_EQ(pp::At<bool>(*block.b, f.episode_mask, 1), false);
  e.WriteStats(*block.b, f, 1, true);
  CHECK_EQ(pp::At<double>(*block.b, f.episode_r, 1), 1.25);
  CHECK_EQ(pp::At<int64_t>(*block.b, f.episode_l, 1), 2);
  const double t = pp::At<double>(*block.b, f.episode_t, 1);
  CHECK_GE(t, 0.002);
  CHECK_LT(t, 60.0);
  CHECK_EQ(t, std::round(t * 1e6) / 1e6);  // microseconds, as Gymnasium rounds
  CHECK_EQ(pp::At<bool>(*block.b, f.episode_mask, 1), true);
  e.Begin(true);  // a new episode starts from zero
  e.Count(4.0);
  e.WriteStats(*block.b, f, 0, true);
  CHECK_EQ(pp::At<double>(*block.b, f.episode_r, 0), 4.0);
  CHECK_EQ(pp::At<int64_t>(*block.b, f.episode_l, 0), 1);
}

TEST(FinalCopyOfOneRow) {
  const pp::OutputLayout l = LayoutWith(3, &pp::OutputOptions::same_step);
  const pp::OutputFields& f = l.fields;
  Block block(l);
  float* obs = &pp::At<float>(*block.b, f.state[0], 0);
  for (int i = 0; i < 9; ++i) obs[i] = static_cast<float>(i);
  for (int r = 0; r < 3; ++r) pp::At<int32_t>(*block.b, f.state[1], r) = 10 + r;
  float* final_obs = &pp::At<float>(*block.b, f.final_state[0], 0);
  for (int i = 0; i < 9; ++i) final_obs[i] = -1.0f;
  for (int r = 0; r < 3; ++r) pp::At<bool>(*block.b, f.final_mask, r) = false;
  pp::CopyFinalRow(*block.b, f, l.blocks, 1);
  CHECK_EQ(final_obs[3], 3.0f);
  CHECK_EQ(final_obs[4], 4.0f);
  CHECK_EQ(final_obs[5], 5.0f);
  CHECK_EQ(final_obs[0], -1.0f);  // other rows untouched
  CHECK_EQ(final_obs[6], -1.0f);
  CHECK_EQ(pp::At<int32_t>(*block.b, f.final_state[1], 1), 11);
  CHECK_EQ(pp::At<bool>(*block.b, f.final_mask, 1), true);
  CHECK_EQ(pp::At<bool>(*block.b, f.final_mask, 0), false);
  CHECK_EQ(pp::At<bool>(*block.b, f.final_mask, 2), false);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
