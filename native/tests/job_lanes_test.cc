// Tests of JobLanes: a thread's own lane first, then the others in wrapping order, FIFO within a
// lane, emptiness over all lanes, and a multi-threaded stress in which every job comes out once.
#include "core/job_lanes.h"

#include <atomic>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

TEST(OwnLaneFirstThenTheNextNonEmptyOne) {
  pp::JobLanes lanes(3, 8);
  CHECK_EQ(lanes.num_lanes(), 3);
  int v = -1;
  CHECK(lanes.EmptyApprox());
  for (int lane = 0; lane < 3; ++lane) CHECK(!lanes.TryPop(lane, &v));
  CHECK_EQ(v, -1);  // untouched on failure

  CHECK(lanes.TryPush(0, 10));
  CHECK(lanes.TryPush(0, 11));
  CHECK(lanes.TryPush(1, 20));
  CHECK(lanes.TryPush(2, 30));
  CHECK(!lanes.EmptyApprox());
  // Each lane's owner gets its own job, even though lane 0 was filled first.
  CHECK(lanes.TryPop(2, &v));
  CHECK_EQ(v, 30);
  CHECK(lanes.TryPop(1, &v));
  CHECK_EQ(v, 20);
  // Lane 2 is empty now: its owner takes from lane 0 (the next after 2, wrapping), in FIFO order.
  CHECK(lanes.TryPop(2, &v));
  CHECK_EQ(v, 10);
  // Lane 1 is empty: its owner looks at lane 2 (empty), then lane 0.
  CHECK(lanes.TryPop(1, &v));
  CHECK_EQ(v, 11);
  CHECK(lanes.EmptyApprox());
  CHECK(!lanes.TryPop(0, &v));

  // The next non-empty lane after the owner's is preferred over one further away.
  CHECK(lanes.TryPush(0, 1));
  CHECK(lanes.TryPush(2, 3));
  CHECK(lanes.TryPop(1, &v));
  CHECK_EQ(v, 3);
  CHECK(lanes.TryPop(1, &v));
  CHECK_EQ(v, 1);
}

TEST(LanesHaveTheirOwnCapacity) {
  pp::JobLanes lanes(2, 4);  // 4 per lane
  for (int i = 0; i < 4; ++i) CHECK(lanes.TryPush(0, i));
  CHECK(!lanes.TryPush(0, 99));  // lane 0 is full
  for (int i = 0; i < 4; ++i) CHECK(lanes.TryPush(1, 100 + i));  // lane 1 is not
  int v;
  for (int i = 0; i < 4; ++i) {
    CHECK(lanes.TryPop(0, &v));
    CHECK_EQ(v, i);
  }
}

TEST(AtLeastOneLane) {
  pp::JobLanes lanes(0, 2);
  CHECK_EQ(lanes.num_lanes(), 1);
  CHECK(lanes.TryPush(0, 7));
  int v;
  CHECK(lanes.TryPop(0, &v));
  CHECK_EQ(v, 7);
}

// Producers push to every lane while consumers, one per lane, pop (their own lane first, then the
// others'): every value comes out exactly once.
TEST(StressEveryJobOnce) {
  constexpr int kLanes = 3, kPerProducer = 20000, kProducers = 2;
  constexpr int kTotal = kPerProducer * kProducers;
  pp::JobLanes lanes(kLanes, 1024);
  std::vector<std::atomic<int>> seen(kTotal);
  for (auto& s : seen) s.store(0);
  std::atomic<int> popped{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        const int value = p * kPerProducer + i;
        while (!lanes.TryPush(value % kLanes, value)) std::this_thread::yield();
      }
    });
  }
  for (int c = 0; c < kLanes; ++c) {
    threads.emplace_back([&, c] {
      int v;
      while (popped.load() < kTotal) {
        if (lanes.TryPop(c, &v)) {
          seen[static_cast<std::size_t>(v)].fetch_add(1);
          popped.fetch_add(1);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(popped.load(), kTotal);
  int wrong = 0;
  for (auto& s : seen) wrong += s.load() != 1;
  CHECK_EQ(wrong, 0);
  CHECK(lanes.EmptyApprox());
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
