// Tests of the batch ring: its size, output indices to (block, row) in sync and async mode, the
// hand-off of complete blocks with a fresh one put in their place, the waits, and concurrent claims.
#include "core/batch_ring.h"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace {

using Clock = std::chrono::steady_clock;

pp::BlockLayout OneField(int batch_size) {
  pp::BlockLayout layout;
  layout.Add("info:env_id", pp::Dtype::kInt32, {}, 4, static_cast<std::size_t>(batch_size), false);
  return layout;
}

TEST(EnoughBlocksThatNoClaimOverrunsTheReceiver) {
  // ceil(num_envs / batch_size) blocks can be in flight at once, plus the one being received.
  CHECK_EQ(pp::BatchRing(OneField(4), 4, 4, true).size(), 2u);
  CHECK_EQ(pp::BatchRing(OneField(2), 8, 2, false).size(), 5u);
  CHECK_EQ(pp::BatchRing(OneField(2), 5, 2, false).size(), 4u);
  CHECK_EQ(pp::BatchRing(OneField(1), 3, 1, false).size(), 4u);
  pp::BatchRing ring(OneField(3), 6, 3, false);
  CHECK_EQ(ring.blocks_allocated(), 3);
  CHECK_EQ(ring.batch_size(), 3);
  CHECK(!ring.ordered());
}

TEST(SyncIndicesAreAssignedInSendOrder) {
  pp::BatchRing ring(OneField(4), 4, 4, true);
  std::vector<int64_t> assigned;
  for (int i = 0; i < 8; ++i) assigned.push_back(ring.AssignIndex());
  CHECK(assigned == (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Claims in any order land on the assigned rows: the first batch's block, then the next.
  const pp::RowRef third = ring.Claim(2), first = ring.Claim(0);
  CHECK_EQ(third.block, ring.front());
  CHECK_EQ(first.block, ring.front());
  CHECK_EQ(third.row, 2);
  CHECK_EQ(first.row, 0);
  const pp::RowRef next = ring.Claim(5);
  CHECK(next.block != ring.front());
  CHECK_EQ(next.row, 1);
}

TEST(AsyncIndicesAreTakenInFinishingOrder) {
  pp::BatchRing ring(OneField(2), 4, 2, false);
  std::vector<pp::RowRef> rows;
  for (int i = 0; i < 4; ++i) rows.push_back(ring.Claim(-1));  // the argument is for sync mode only
  CHECK_EQ(rows[0].block, ring.front());
  CHECK_EQ(rows[1].block, ring.front());
  CHECK(rows[2].block != ring.front());
  CHECK_EQ(rows[2].block, rows[3].block);
  for (int i = 0; i < 4; ++i) CHECK_EQ(rows[static_cast<std::size_t>(i)].row, i % 2);
}

TEST(PopFrontHandsOffAndRefills) {
  pp::BatchRing ring(OneField(2), 2, 2, false);
  pp::OutputBlock* first = ring.front();
  CHECK(!ring.FrontComplete());
  CHECK_EQ(ring.RowsLeft(first), 2);
  for (int i = 0; i < 2; ++i) ring.FinishRow(ring.Claim(-1).block);
  CHECK(ring.FrontComplete());
  CHECK_EQ(ring.RowsLeft(first), 0);
  pp::OutputBlock* out = ring.PopFront();
  CHECK_EQ(out, first);
  CHECK(ring.front() != first);  // the next block in the ring
  CHECK(!ring.FrontComplete());
  // The refilled slot is met again after a full lap: a fresh block, not the handed-off one.
  for (std::size_t lap = 1; lap < ring.size(); ++lap) {
    for (int i = 0; i < 2; ++i) ring.FinishRow(ring.Claim(-1).block);
    pp::BlockFreeList::Release(ring.PopFront());
  }
  CHECK(ring.front() != first);  // `first` is still out with the receiver
  CHECK_EQ(ring.front()->rows_done.load(), 0);
  // Handed-off blocks come back through the free list: steady state allocates nothing.
  pp::BlockFreeList::Release(out);
  const int allocated = ring.blocks_allocated();
  for (int k = 0; k < 20; ++k) {
    for (int i = 0; i < 2; ++i) ring.FinishRow(ring.Claim(-1).block);
    pp::BlockFreeList::Release(ring.PopFront());
  }
  CHECK_EQ(ring.blocks_allocated(), allocated);
  pp::OutputBlock* extra = ring.AcquireBlock();  // ResetNow's blocks come from the same list
  CHECK_EQ(extra->rows_done.load(), 0);
  pp::BlockFreeList::Release(extra);
}

TEST(WaitWakesWhenTheLastRowFinishes) {
  pp::BatchRing ring(OneField(4), 4, 4, false);
  std::thread finisher([&] {
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ring.FinishRow(ring.Claim(-1).block);
    }
  });
  ring.Wait([&] { return ring.FrontComplete(); });
  CHECK(ring.FrontComplete());
  finisher.join();
}

TEST(WaitUntilTimesOutAndWakeAllWakes) {
  pp::BatchRing ring(OneField(2), 2, 2, false);
  const auto start = Clock::now();
  CHECK(!ring.WaitUntil(start + std::chrono::milliseconds(20), [&] { return ring.FrontComplete(); }));
  CHECK_GE(Clock::now() - start, std::chrono::milliseconds(20));
  std::atomic<bool> closed{false};
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    closed.store(true);
    ring.WakeAll();
  });
  CHECK(ring.WaitUntil(Clock::now() + std::chrono::seconds(20), [&] { return closed.load(); }));
  closer.join();
  CHECK(pp::BatchRing::SpinUntil([] { return true; }));
  CHECK(!pp::BatchRing::SpinUntil([] { return false; }));
}

// Threads claiming concurrently get every row of a block exactly once, block after block.
TEST(ConcurrentClaimsFillEveryRowOnce) {
  constexpr int kThreads = 4, kBatch = 8, kBlocks = 200;
  pp::BatchRing ring(OneField(kBatch), kThreads * kBatch, kBatch, false);
  std::atomic<int> next{0};
  std::vector<std::vector<std::pair<pp::OutputBlock*, int>>> claimed(kThreads);
  std::atomic<bool> go{false};
  int bad = 0;
  for (int b = 0; b < kBlocks; ++b) {
    // One block's worth of claims spread over the threads, then the receiver takes it.
    next.store(0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load()) std::this_thread::yield();
        while (next.fetch_add(1) < kBatch) {
          const pp::RowRef r = ring.Claim(-1);
          claimed[static_cast<std::size_t>(t)].emplace_back(r.block, r.row);
          ring.FinishRow(r.block);
        }
      });
    }
    go.store(true);
    for (auto& th : threads) th.join();
    go.store(false);
    pp::OutputBlock* front = ring.front();
    if (!CHECK(ring.FrontComplete())) return;
    std::set<int> rows;
    for (auto& per_thread : claimed) {
      for (const auto& [block, row] : per_thread) {
        if (block != front) ++bad;
        rows.insert(row);
      }
      per_thread.clear();
    }
    CHECK_EQ(rows.size(), static_cast<std::size_t>(kBatch));
    pp::BlockFreeList::Release(ring.PopFront());
  }
  CHECK_EQ(bad, 0);
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
