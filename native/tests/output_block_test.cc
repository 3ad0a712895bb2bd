// Tests of BlockLayout, OutputBlock and BlockFreeList: field offsets and 64-byte alignment, block
// reuse (no allocation in steady state), Clear, and release after the free list's owner is gone.
#include "core/output_block.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace {

using pp::BlockFreeList;
using pp::BlockLayout;
using pp::Dtype;
using pp::OutputBlock;

std::size_t RoundUp64(std::size_t n) { return (n + 63) / 64 * 64; }

BlockLayout MakeLayout() {
  BlockLayout layout;
  layout.Add("info:env_id", Dtype::kInt32, {}, 4, 5, false);         // 20 bytes
  layout.Add("reward", Dtype::kFloat64, {}, 8, 8, false);            // 64 bytes exactly
  layout.Add("obs", Dtype::kFloat32, {3, 7}, 3 * 7 * 4, 5, false);   // 420 bytes
  layout.Add("terminated", Dtype::kBool, {}, 1, 5, false);           // 5 bytes
  layout.Add("info:players.x", Dtype::kUInt8, {2}, 2, 5 * 3, true);  // 30 bytes
  layout.Add("empty", Dtype::kInt64, {0}, 0, 5, false);              // 0 bytes
  layout.Add("last", Dtype::kInt16, {}, 2, 1, false);                // 2 bytes
  return layout;
}

TEST(LayoutOffsetsAreCacheLineAligned) {
  CHECK_EQ(BlockLayout::kAlignment, 64u);
  const BlockLayout layout = MakeLayout();
  const auto& f = layout.fields();
  if (!CHECK_EQ(f.size(), 7u)) return;
  std::size_t expected = 0;
  for (const pp::BlockField& field : f) {
    CHECK_EQ(field.offset, expected);
    CHECK_EQ(field.offset % 64, 0u);
    expected += RoundUp64(field.row_bytes * field.capacity);
  }
  CHECK_EQ(layout.total_bytes(), expected);
  CHECK_EQ(f[1].offset, 64u);   // 20 bytes round up to one line
  CHECK_EQ(f[2].offset, 128u);  // exactly 64 bytes take exactly one line
  CHECK_EQ(f[3].offset, 128u + 448u);
  CHECK_EQ(f[5].offset, f[6].offset);  // an empty field takes no space
  CHECK_EQ(layout.total_bytes(), 128u + 448u + 64u + 64u + 64u);
  // What Add() was told is kept.
  CHECK_EQ(f[2].name, std::string("obs"));
  CHECK(f[2].dtype == Dtype::kFloat32);
  CHECK(f[2].shape == (std::vector<int>{3, 7}));
  CHECK_EQ(f[2].row_bytes, 84u);
  CHECK_EQ(f[2].capacity, 5u);
  CHECK(!f[2].per_player);
  CHECK(f[4].per_player);
  CHECK_EQ(f[4].capacity, 15u);
}

TEST(BlockFieldsPointIntoOneAlignedAllocation) {
  const BlockLayout layout = MakeLayout();
  OutputBlock block(layout);
  const auto& f = layout.fields();
  std::byte* base = block.field(0);
  CHECK_EQ(reinterpret_cast<std::uintptr_t>(base) % 64, 0u);
  for (std::size_t i = 0; i < f.size(); ++i) {
    std::byte* p = block.field(static_cast<int>(i));
    CHECK_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    CHECK(p == base + f[i].offset);
  }
  // Every field's full extent is writable and fields do not overlap (ASan checks the bounds).
  for (std::size_t i = 0; i < f.size(); ++i) {
    std::memset(block.field(static_cast<int>(i)), static_cast<int>(i + 1), f[i].row_bytes * f[i].capacity);
  }
  for (std::size_t i = 0; i < f.size(); ++i) {
    const std::byte* p = block.field(static_cast<int>(i));
    for (std::size_t b = 0; b < f[i].row_bytes * f[i].capacity; ++b) {
      if (!CHECK_EQ(static_cast<int>(p[b]), static_cast<int>(i + 1))) break;
    }
  }
  CHECK_EQ(block.rows_done.load(), 0);
  CHECK_EQ(block.player_rows.load(), 0);
  CHECK(block.errors().empty());
}

TEST(EmptyLayoutStillAllocates) {
  BlockLayout layout;
  CHECK_EQ(layout.total_bytes(), 0u);
  auto list = std::make_shared<BlockFreeList>(layout);
  OutputBlock* b = list->Acquire();
  CHECK(b != nullptr);
  BlockFreeList::Release(b);
}

TEST(ErrorsAreInRowOrderWhateverOrderTheyCame) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  OutputBlock* b = list->Acquire();
  b->AddError(2, 7, "third row");
  b->AddError(0, 5, "first row");
  b->AddError(1, 9, "second row");
  if (CHECK_EQ(b->errors().size(), 3u)) {
    CHECK_EQ(b->errors()[0].first, 5);
    CHECK_EQ(b->errors()[1].first, 9);
    CHECK_EQ(b->errors()[2].first, 7);
    CHECK_EQ(b->errors()[2].second, std::string("third row"));
  }
  BlockFreeList::Release(b);
}

TEST(AcquireReusesReleasedBlocks) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  CHECK_EQ(list->allocated(), 0);
  CHECK_EQ(list->free_count(), 0);
  OutputBlock* a = list->Acquire();
  CHECK_EQ(list->allocated(), 1);
  BlockFreeList::Release(a);
  CHECK_EQ(list->free_count(), 1);
  OutputBlock* b = list->Acquire();
  CHECK(b == a);  // the released block, not a new one
  CHECK_EQ(list->allocated(), 1);
  CHECK_EQ(list->free_count(), 0);
  BlockFreeList::Release(b);

  // Three out at a time for many cycles: never more than three allocated.
  for (int cycle = 0; cycle < 10000; ++cycle) {
    OutputBlock* x = list->Acquire();
    OutputBlock* y = list->Acquire();
    OutputBlock* z = list->Acquire();
    CHECK(x != y && y != z && x != z);
    BlockFreeList::Release(y);
    BlockFreeList::Release(x);
    BlockFreeList::Release(z);
  }
  CHECK_EQ(list->allocated(), 3);
  CHECK_EQ(list->free_count(), 3);
}

TEST(AcquireAndClearResetCountersAndErrors) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  OutputBlock* b = list->Acquire();
  b->rows_done.store(5);
  b->player_rows.store(7);
  b->AddError(0, 3, "boom");
  b->AddError(1, 1, "bang");
  if (CHECK_EQ(b->errors().size(), 2u)) {
    CHECK_EQ(b->errors()[0].first, 3);
    CHECK_EQ(b->errors()[0].second, std::string("boom"));
    CHECK_EQ(b->errors()[1].first, 1);
    CHECK_EQ(b->errors()[1].second, std::string("bang"));
  }
  b->Clear();
  CHECK_EQ(b->rows_done.load(), 0);
  CHECK_EQ(b->player_rows.load(), 0);
  CHECK(b->errors().empty());

  // A block coming back from the free list is cleared too.
  b->rows_done.store(4);
  b->player_rows.store(2);
  b->AddError(0, 0, "stale");
  BlockFreeList::Release(b);
  OutputBlock* again = list->Acquire();
  CHECK(again == b);
  CHECK_EQ(again->rows_done.load(), 0);
  CHECK_EQ(again->player_rows.load(), 0);
  CHECK(again->errors().empty());
  BlockFreeList::Release(again);
}

TEST(AddErrorFromManyThreads) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  OutputBlock* b = list->Acquire();
  constexpr int kThreads = 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([b, t] {
      for (int i = 0; i < kEach; ++i) b->AddError(t * kEach + i, t, "error " + std::to_string(i));
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(b->errors().size(), static_cast<std::size_t>(kThreads * kEach));
  std::vector<int> per_thread(kThreads, 0);
  for (const auto& [id, msg] : b->errors()) {
    if (CHECK(id >= 0 && id < kThreads)) ++per_thread[static_cast<std::size_t>(id)];
  }
  for (int n : per_thread) CHECK_EQ(n, kEach);
  BlockFreeList::Release(b);
}

// Blocks keep their free list alive while they are out (Python may hold arrays after close()); the
// last release then frees the list and every block in it.
TEST(ReleaseAfterOwnerIsGone) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  std::weak_ptr<BlockFreeList> weak = list;
  OutputBlock* idle = list->Acquire();
  BlockFreeList::Release(idle);  // one block sits in the free list
  OutputBlock* a = list->Acquire();
  OutputBlock* b = list->Acquire();
  std::memset(a->field(0), 1, 64);
  list.reset();
  CHECK(!weak.expired());  // the two blocks out hold it
  BlockFreeList::Release(a);
  CHECK(!weak.expired());  // b still holds it
  if (auto alive = weak.lock()) CHECK_EQ(alive->free_count(), 1);
  BlockFreeList::Release(b);
  CHECK(weak.expired());  // freed with its blocks (ASan reports a leak otherwise)
}

// Blocks idle in the free list do not keep it alive (no reference cycle).
TEST(IdleBlocksDoNotKeepTheListAlive) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  std::weak_ptr<BlockFreeList> weak = list;
  for (int i = 0; i < 3; ++i) BlockFreeList::Release(list->Acquire());
  list.reset();
  CHECK(weak.expired());
}

// Threads acquire and release concurrently: a block is never handed to two owners at once, and
// allocation stays bounded by the number of blocks out at the same time.
TEST(ConcurrentAcquireRelease) {
  auto list = std::make_shared<BlockFreeList>(MakeLayout());
  constexpr int kThreads = 4, kCycles = 20000;
  std::atomic<int> clobbered{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCycles; ++i) {
        OutputBlock* b = list->Acquire();
        // Fill the first field with this owner's value, then read it all back: a block handed to
        // two owners at once shows the other's values (or a rows_done of 2).
        auto* marker = reinterpret_cast<int32_t*>(b->field(0));
        const int32_t value = t * kCycles + i;
        for (int k = 0; k < 5; ++k) marker[k] = value;
        b->rows_done.fetch_add(1);
        for (int k = 0; k < 5; ++k) {
          if (marker[k] != value) clobbered.fetch_add(1);
        }
        if (b->rows_done.load() != 1) clobbered.fetch_add(1);
        BlockFreeList::Release(b);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK_EQ(clobbered.load(), 0);
  CHECK_LE(list->allocated(), kThreads);
  CHECK_EQ(list->free_count(), list->allocated());
}

}  // namespace

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
