// Tests of the default scheduler's policies, each alone: the quick streak, the step gauge and the
// lanes' affinity it decides, the long-reset hand-off rule, guided runs' share, and the stand-in.
#include "core/scheduling_policies.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "tests/test_util.h"

namespace {

using pp::GuidedRun;
using pp::LongResetRule;
using pp::QuickStreak;
using pp::StepGauge;

TEST(QuickAfterAStreakOfQuickSteps) {
  QuickStreak q;
  CHECK(!q.quick());
  CHECK_EQ(q.target(), QuickStreak::kFirstTarget);
  for (int i = 0; i < QuickStreak::kFirstTarget - 1; ++i) q.WorkerRan(false, 1);
  CHECK(!q.quick());
  q.WorkerRan(false, 1);
  CHECK(q.quick());
}

TEST(ResetsDoNotCountAndASlowJobBreaksTheStreak) {
  QuickStreak q;
  for (int i = 0; i < 100; ++i) q.WorkerRan(false, 0);  // resets only
  CHECK(!q.quick());
  q.WorkerRan(false, QuickStreak::kFirstTarget - 1);
  q.WorkerRan(true, 1);  // slow: the streak starts over
  q.WorkerRan(false, QuickStreak::kFirstTarget - 1);
  CHECK(!q.quick());
  q.WorkerRan(false, 1);
  CHECK(q.quick());
  // A run of several steps counts as many.
  QuickStreak r;
  r.WorkerRan(false, QuickStreak::kFirstTarget);
  CHECK(r.quick());
}

TEST(ACallersSlowJobDoublesTheTargetUpToTheMost) {
  QuickStreak q;
  q.WorkerRan(false, QuickStreak::kFirstTarget);
  CHECK(q.quick());
  q.CallerRanSlow();
  CHECK(!q.quick());
  CHECK_EQ(q.target(), 2 * QuickStreak::kFirstTarget);
  q.WorkerRan(false, 2 * QuickStreak::kFirstTarget - 1);
  CHECK(!q.quick());
  q.WorkerRan(false, 1);
  CHECK(q.quick());
  for (int i = 0; i < 40; ++i) q.CallerRanSlow();
  CHECK_EQ(q.target(), QuickStreak::kMaxTarget);
}

TEST(StepGaugeTakesTheFirstSampleAndAveragesOverAboutEight) {
  StepGauge g;
  CHECK_EQ(g.mean_nanos(), 0);
  const int64_t min = StepGauge::kAffinityMinStep.count();
  CHECK(g.Sample(2 * min));  // taken as it is: affinity on
  CHECK_EQ(g.mean_nanos(), 2 * min);
  // Cheap steps pull the mean down by an eighth of the gap each: affinity goes off only once the
  // mean is under the threshold, after about 8 samples.
  int samples = 0;
  while (g.Sample(0)) ++samples;
  CHECK_GE(samples, 4);
  CHECK_LE(samples, 8);
  CHECK_LT(g.mean_nanos(), min);
  // A zero first sample still counts as sampled.
  StepGauge z;
  CHECK(!z.Sample(0));
  CHECK_EQ(z.mean_nanos(), 1);
}

TEST(LongResetHandOffRule) {
  const int64_t longer = std::chrono::nanoseconds(LongResetRule::kLongReset).count();
  CHECK(LongResetRule::HandOff(true, longer, 0, 1));
  CHECK(LongResetRule::HandOff(true, longer, 2, 3));
  CHECK(!LongResetRule::HandOff(false, longer, 0, 1));     // affinity off: resets not timed
  CHECK(!LongResetRule::HandOff(true, longer - 1, 0, 1));  // a short reset stays with the caller
  CHECK(!LongResetRule::HandOff(true, 0, 0, 1));           // its length not known yet
  CHECK(!LongResetRule::HandOff(true, longer, 3, 3));      // every worker in a reset
}

TEST(GuidedRunShare) {
  CHECK_EQ(GuidedRun::Share(false, 1000, 2), 0);  // async: one job at a time
  CHECK_EQ(GuidedRun::Share(true, 3, 2), 0);      // fewer than 2 per thread: no run
  CHECK_EQ(GuidedRun::Share(true, 4, 2), 1);
  CHECK_EQ(GuidedRun::Share(true, 40, 2), 10);
  CHECK_EQ(GuidedRun::Share(true, 100000, 2), GuidedRun::kMaxRun - 1);
  CHECK_EQ(GuidedRun::Share(true, 10, 0), 5);  // num_threads 0 taken as 1
}

TEST(StandInIsMadeOnFirstWakeAndRunsItsLane) {
  pp::LaneQueues queue(16, 2);
  std::atomic<int> ran{0};
  std::atomic<int> lane_seen{-1};
  pp::StandIn stand_in(&queue, 0, [&](int, int lane) {
    lane_seen.store(lane);
    ran.fetch_add(1);
  });
  CHECK(!stand_in.made());
  CHECK(queue.TryPush(0, 7, queue.Now()));
  stand_in.Wake();
  CHECK(stand_in.made());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ran.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  CHECK_EQ(ran.load(), 1);
  CHECK_EQ(lane_seen.load(), 0);
  stand_in.Stop();
  stand_in.Stop();  // idempotent
}

TEST(StandInStoppedBeforeUseIsNeverMade) {
  pp::LaneQueues queue(16, 1);
  pp::StandIn stand_in(&queue, 0, [](int, int) {});
  stand_in.Stop();
  stand_in.Wake();
  CHECK(!stand_in.made());
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
