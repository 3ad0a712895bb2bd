// Tests of JobQueue: FIFO order, full and empty, capacity rounding, wrap-around, popping runs
// (TryPopMany), and MPMC stresses in which every value must come out exactly once; of LaneQueues:
// a thread's own lane first, then the oldest job, and a stress across lanes.
#include "core/job_queue.h"

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

TEST(CapacityRoundsUpToPowerOfTwo) {
  CHECK_EQ(pp::JobQueue(0).capacity(), 2u);
  CHECK_EQ(pp::JobQueue(1).capacity(), 2u);
  CHECK_EQ(pp::JobQueue(2).capacity(), 2u);
  CHECK_EQ(pp::JobQueue(3).capacity(), 4u);
  CHECK_EQ(pp::JobQueue(5).capacity(), 8u);
  CHECK_EQ(pp::JobQueue(8).capacity(), 8u);
  CHECK_EQ(pp::JobQueue(9).capacity(), 16u);
  CHECK_EQ(pp::JobQueue(1000).capacity(), 1024u);
  CHECK_EQ(pp::JobQueue(1024).capacity(), 1024u);
  CHECK_EQ(pp::JobQueue(1025).capacity(), 2048u);
}

TEST(SingleThreadFifoFullAndEmpty) {
  pp::JobQueue q(5);  // capacity 8
  int v = -1;
  CHECK(q.EmptyApprox());
  CHECK(!q.TryPop(&v));
  CHECK_EQ(v, -1);  // untouched on failure
  for (int i = 0; i < 8; ++i) CHECK(q.TryPush(100 + i));
  CHECK(!q.EmptyApprox());
  CHECK(!q.TryPush(999));  // full: the ninth push fails
  for (int i = 0; i < 8; ++i) {
    CHECK(q.TryPop(&v));
    CHECK_EQ(v, 100 + i);
  }
  CHECK(!q.TryPop(&v));
  CHECK(q.EmptyApprox());
  // Full again after draining: the failed push above did not consume a cell.
  for (int i = 0; i < 8; ++i) CHECK(q.TryPush(i));
  CHECK(!q.TryPush(8));
  for (int i = 0; i < 8; ++i) {
    CHECK(q.TryPop(&v));
    CHECK_EQ(v, i);
  }
}

TEST(ExtremeValuesRoundTrip) {
  pp::JobQueue q(4);
  const int values[] = {0, -1, INT_MIN, INT_MAX};
  for (int x : values) CHECK(q.TryPush(x));
  for (int x : values) {
    int v = 0;
    CHECK(q.TryPop(&v));
    CHECK_EQ(v, x);
  }
}

// Interleaved pushes and pops with a varying fill level walk the positions many times around the
// ring; the order must stay FIFO throughout.
TEST(WrapAroundKeepsFifoOrder) {
  pp::JobQueue q(4);
  int next_push = 0, next_pop = 0;
  for (int round = 0; round < 10000; ++round) {
    const int pushes = 1 + round % 4;
    for (int i = 0; i < pushes; ++i) {
      if (!q.TryPush(next_push)) break;
      ++next_push;
    }
    const int pops = 1 + (round * 7) % 4;
    for (int i = 0; i < pops; ++i) {
      int v;
      if (!q.TryPop(&v)) break;
      if (!CHECK_EQ(v, next_pop)) return;
      ++next_pop;
    }
    if (!CHECK_LE(next_push - next_pop, 4)) return;
  }
  int v;
  while (q.TryPop(&v)) {
    CHECK_EQ(v, next_pop);
    ++next_pop;
  }
  CHECK_EQ(next_pop, next_push);
  CHECK_GT(next_push, 4 * 1000);  // really went around the ring many times
}

// Spins a little, then yields: yielding at once is slow when the machine is oversubscribed.
void Backoff(int tries) {
  if (tries % 64 == 0) std::this_thread::yield();
}

TEST(PopManyTakesRunsInOrder) {
  pp::JobQueue q(8);
  int out[16];
  // CHECK_EQ evaluates its arguments again to print them: pop first, then check.
  auto pop = [&](int max) { return q.TryPopMany(out, max); };
  int got = pop(4);
  CHECK_EQ(got, 0);  // empty
  CHECK_EQ(q.SizeApprox(), 0u);
  for (int i = 0; i < 6; ++i) CHECK(q.TryPush(i));
  CHECK_EQ(q.SizeApprox(), 6u);
  got = pop(4);
  CHECK_EQ(got, 4);
  for (int i = 0; i < 4; ++i) CHECK_EQ(out[i], i);
  CHECK_EQ(q.SizeApprox(), 2u);
  got = pop(16);  // fewer queued than asked for
  CHECK_EQ(got, 2);
  CHECK_EQ(out[0], 4);
  CHECK_EQ(out[1], 5);
  got = pop(16);
  CHECK_EQ(got, 0);
  CHECK(q.EmptyApprox());
  // Across the end of the ring, and a full queue popped whole (max beyond the capacity).
  for (int i = 0; i < 8; ++i) CHECK(q.TryPush(100 + i));
  CHECK(!q.TryPush(999));
  got = pop(16);
  CHECK_EQ(got, 8);
  for (int i = 0; i < 8; ++i) CHECK_EQ(out[i], 100 + i);
  // Runs and single pops mixed keep FIFO order, and freed cells take pushes again.
  for (int i = 0; i < 5; ++i) CHECK(q.TryPush(200 + i));
  int v = -1;
  CHECK(q.TryPop(&v));
  CHECK_EQ(v, 200);
  got = pop(3);
  CHECK_EQ(got, 3);
  CHECK_EQ(out[0], 201);
  CHECK_EQ(out[2], 203);
  for (int i = 0; i < 7; ++i) CHECK(q.TryPush(300 + i));
  got = pop(1);
  CHECK_EQ(got, 1);
  CHECK_EQ(out[0], 204);
  got = pop(16);
  CHECK_EQ(got, 7);
  CHECK_EQ(out[6], 306);
}

// Every value came out of the queue exactly once (seen[v]: how many times v did).
template <typename Count>
void CheckEachSeenOnce(const std::vector<std::atomic<Count>>& seen) {
  int missing = 0, duplicated = 0;
  for (const auto& s : seen) {
    const int n = s.load();
    if (n == 0) ++missing;
    if (n > 1) ++duplicated;
  }
  CHECK_EQ(missing, 0);
  CHECK_EQ(duplicated, 0);
}

// 4 producers and 4 consumers through a small queue (so it is often full and often empty).
// Every value must be popped exactly once, and one consumer must see each producer's values in
// the order they were pushed (positions are handed out in increasing order on both sides). With
// max_run > 1 the consumers pop runs of 1 to max_run values (TryPopMany) as well as single ones.
void Stress(int max_run) {
  constexpr int kProducers = 4, kConsumers = 4;
  constexpr int kPerProducer = 250000;  // 10^6 values in all
  constexpr int kTotal = kProducers * kPerProducer;
  pp::JobQueue q(256);
  std::vector<std::atomic<uint8_t>> seen(kTotal);
  for (auto& s : seen) s.store(0, std::memory_order_relaxed);
  std::atomic<int> popped{0};
  std::atomic<int> order_violations{0};
  std::atomic<bool> go{false};
  std::atomic<int> producers_done{0};

  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kPerProducer; ++i) {
        const int value = p * kPerProducer + i;
        for (int tries = 1; !q.TryPush(value); ++tries) Backoff(tries);
      }
      producers_done.fetch_add(1);
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      while (!go.load()) std::this_thread::yield();
      std::vector<int> last(kProducers, -1);
      std::vector<int> run(static_cast<std::size_t>(max_run));
      int tries = 0, turn = c;
      auto pop = [&] {
        ++turn;
        if (max_run == 1 || turn % 3 == 0) return q.TryPop(run.data()) ? 1 : 0;
        return q.TryPopMany(run.data(), 1 + turn % max_run);
      };
      // Stops when every value is out, or when the producers are done and the queue is empty (a
      // lost value then shows up as missing below instead of a hang).
      while (popped.load(std::memory_order_relaxed) < kTotal) {
        int count = pop();
        if (count == 0) {
          const bool producers_finished = producers_done.load() == kProducers;
          count = pop();
          if (count == 0) {
            if (producers_finished) break;
            Backoff(++tries);
            continue;
          }
        }
        tries = 0;
        popped.fetch_add(count, std::memory_order_relaxed);
        for (int i = 0; i < count; ++i) {
          const int v = run[static_cast<std::size_t>(i)];
          if (v < 0 || v >= kTotal) {
            order_violations.fetch_add(1000000);  // garbage value
            continue;
          }
          seen[static_cast<std::size_t>(v)].fetch_add(1, std::memory_order_relaxed);
          const int producer = v / kPerProducer, index = v % kPerProducer;
          if (index <= last[static_cast<std::size_t>(producer)]) order_violations.fetch_add(1);
          last[static_cast<std::size_t>(producer)] = index;
        }
      }
    });
  }
  go.store(true);
  for (auto& t : threads) t.join();

  CHECK_EQ(popped.load(), kTotal);
  CHECK_EQ(order_violations.load(), 0);
  CheckEachSeenOnce(seen);
  CHECK(q.EmptyApprox());
  int v;
  CHECK(!q.TryPop(&v));
}

TEST(LanesOwnFirstThenTheOldest) {
  pp::LaneQueues q(4, 3, std::chrono::seconds(10), 1);  // a lag no test job reaches
  CHECK_EQ(q.lanes(), 3);
  CHECK(q.EmptyApprox());
  int v = -1;
  bool own = true;
  CHECK(!q.TryPop(1, &v, &own));
  CHECK_EQ(v, -1);
  CHECK(q.TryPush(2, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));  // distinct stamps
  CHECK(q.TryPush(0, 10));
  CHECK(q.TryPush(0, 11));
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  CHECK(q.TryPush(4, 21));  // lanes are taken modulo lanes(): lane 1
  CHECK_EQ(q.SizeApprox(), 4u);
  // Lane 1's own job first, though the others are older.
  CHECK(q.TryPop(1, &v, &own));
  CHECK_EQ(v, 21);
  CHECK(own);
  // Its lane empty: the oldest other lane's (lane 2's 20, queued first), then lane 0's.
  CHECK(q.TryPop(1, &v, &own));
  CHECK_EQ(v, 20);
  CHECK(!own);
  CHECK(q.TryPop(1, &v, &own));
  CHECK_EQ(v, 10);
  CHECK(!own);
  // A run comes from one lane, in its order.
  CHECK(q.TryPush(2, 30));
  int run[4] = {-1, -1, -1, -1};
  int got = q.TryPopMany(2, run, 4, &own);  // (CHECK_EQ evaluates its operands twice)
  CHECK_EQ(got, 1);
  CHECK_EQ(run[0], 30);
  CHECK(own);
  got = q.TryPopMany(2, run, 4, &own);
  CHECK_EQ(got, 1);
  CHECK_EQ(run[0], 11);
  CHECK(!own);
  CHECK(q.EmptyApprox());
  CHECK_EQ(q.SizeApprox(), 0u);
  CHECK(!q.TryPop(0, &v));
}

// A job that has waited max_lag longer than the taker's own oldest is taken first. The lag is long
// next to a preemption on a busy machine (the pushes 1 ms apart must stay within it).
TEST(LanesTakeAJobThatWaitedTooLong) {
  pp::LaneQueues q(4, 2, std::chrono::milliseconds(100), 1);  // the lag looked at on every pop
  CHECK(q.TryPush(0, 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(q.TryPush(1, 2));
  int v = -1;
  bool own = false;
  CHECK(q.TryPop(1, &v, &own));  // ~1 ms older: within the lag, its own first
  CHECK_EQ(v, 2);
  CHECK(own);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  CHECK(q.TryPush(1, 3));
  CHECK(q.TryPop(1, &v, &own));  // lane 0's has waited over 150 ms longer: taken first
  CHECK_EQ(v, 1);
  CHECK(!own);
  CHECK(q.TryPop(1, &v, &own));
  CHECK_EQ(v, 3);
  CHECK(own);
}

TEST(OneLaneIsAPlainQueue) {
  pp::LaneQueues q(8, 0);  // at least one lane
  CHECK_EQ(q.lanes(), 1);
  for (int i = 0; i < 5; ++i) CHECK(q.TryPush(i, 100 + i));
  int v = -1;
  for (int i = 0; i < 5; ++i) {
    bool own = false;
    CHECK(q.TryPop(3, &v, &own));
    CHECK_EQ(v, 100 + i);
    CHECK(own);
  }
}

// Producers push each value to a lane of their choice, consumers pop from their own lane first:
// every value comes out exactly once.
TEST(LanesStress) {
  constexpr int kLanes = 3, kProducers = 3, kConsumers = 3, kPerProducer = 20000;
  constexpr int kTotal = kProducers * kPerProducer;
  pp::LaneQueues q(kTotal, kLanes);
  std::vector<std::atomic<int>> seen(kTotal);
  std::atomic<int> popped{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (int i = 0; i < kPerProducer; ++i) {
        const int value = p * kPerProducer + i;
        while (!q.TryPush(value % 5, value)) std::this_thread::yield();
      }
    });
  }
  for (int c = 0; c < kConsumers; ++c) {
    threads.emplace_back([&, c] {
      int run[4];
      while (popped.load() < kTotal) {
        const int n = q.TryPopMany(c, run, 1 + c);
        for (int k = 0; k < n; ++k) seen[static_cast<std::size_t>(run[k])].fetch_add(1);
        popped.fetch_add(n);
        if (n == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& t : threads) t.join();
  CheckEachSeenOnce(seen);
  CHECK(q.EmptyApprox());
}

TEST(MultiProducerMultiConsumerStress) { Stress(1); }

TEST(MultiProducerMultiConsumerStressWithRuns) { Stress(7); }

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
