// Stream-ordered reuse: deallocate_after keeps a block in use until its PendingUse completes.
// A fake PendingUse stands in for a CUDA event.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "allocator/bfc_allocator.h"

namespace mt {
namespace {

constexpr int64_t MiB = 1024 * 1024;

// A fake event: completes once `done` is set, or after `polls_until_done` queries.
struct FakeEvent {
  bool done = false;
  int polls_until_done = -1;
  int queries = 0;
  int releases = 0;

  PendingUse use() {
    return {this,
            [](void* h) {
              auto* e = static_cast<FakeEvent*>(h);
              ++e->queries;
              return e->done || (e->polls_until_done >= 0 && e->queries >= e->polls_until_done);
            },
            [](void* h) { ++static_cast<FakeEvent*>(h)->releases; }};
  }
};

std::unique_ptr<BFCAllocator> make_pool(int64_t limit = BFCAllocator::kUnlimited,
                                        bool growth = true) {
  return std::make_unique<BFCAllocator>(
      BFCAllocator::Options{.name = "GPU_0_bfc", .limit_bytes = limit, .allow_growth = growth},
      make_host_sub_allocator());
}

TEST(BFCDeallocateAfterTest, KeepsTheBlockInUseUntilTheUseCompletes) {
  auto pool = make_pool();
  FakeEvent event;
  void* p = pool->allocate(4096);
  pool->deallocate_after(p, event.use());
  EXPECT_EQ(pool->stats().bytes_in_use, 4096);
  for (int i = 0; i < 10; ++i) {
    void* q = pool->allocate(4096);  // polls; must never hand out `p` meanwhile
    EXPECT_NE(q, p);
    pool->deallocate(q);
  }
  EXPECT_EQ(pool->stats().bytes_in_use, 4096);
  EXPECT_GT(event.queries, 0);
  EXPECT_EQ(event.releases, 0);
  event.done = true;
  void* r = pool->allocate(256);  // polls: frees `p`, then releases the event
  EXPECT_EQ(event.releases, 1);
  EXPECT_EQ(pool->stats().bytes_in_use, 256);
  EXPECT_EQ(pool->allocate(4096), p);  // now reusable
  pool->deallocate(p);
  pool->deallocate(r);
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
}

TEST(BFCDeallocateAfterTest, RunningOutOfMemoryPollsPendingFrees) {
  auto pool = make_pool(4 * MiB, false);
  FakeEvent event;
  event.polls_until_done = 2;  // not done at the first (opportunistic) poll
  void* p = pool->allocate(3 * MiB);
  pool->deallocate_after(p, event.use());
  void* q = pool->allocate(2 * MiB);  // fails, polls again, succeeds
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(event.releases, 1);
  EXPECT_EQ(pool->stats().bytes_in_use, 2 * MiB);
  pool->deallocate(q);
}

TEST(BFCDeallocateAfterTest, StaysOutOfMemoryWhileTheUseIsPending) {
  auto pool = make_pool(4 * MiB, false);
  FakeEvent event;
  void* p = pool->allocate(3 * MiB);
  pool->deallocate_after(p, event.use());
  EXPECT_EQ(pool->allocate(2 * MiB), nullptr);
  EXPECT_EQ(pool->stats().bytes_in_use, 3 * MiB);
  event.done = true;
  EXPECT_NE(pool->allocate(2 * MiB), nullptr);
}

TEST(BFCDeallocateAfterTest, ReleasesTheUseAtOnceForNull) {
  auto pool = make_pool();
  FakeEvent event;
  pool->deallocate_after(nullptr, event.use());
  EXPECT_EQ(event.releases, 1);
  EXPECT_EQ(event.queries, 0);
}

TEST(BFCDeallocateAfterTest, DestroyingThePoolReleasesPendingUses) {
  FakeEvent event;
  {
    auto pool = make_pool();
    pool->deallocate_after(pool->allocate(1000), event.use());
  }
  EXPECT_EQ(event.releases, 1);
}

TEST(BFCDeallocateAfterTest, ReleaseUnusedFreesCompletedBlocksFirst) {
  auto pool = make_pool();
  FakeEvent event;
  pool->deallocate_after(pool->allocate(3 * MiB), event.use());
  EXPECT_EQ(pool->release_unused(), 0);
  event.done = true;
  EXPECT_GT(pool->release_unused(), 0);
  EXPECT_EQ(pool->stats().bytes_reserved, 0);
  EXPECT_EQ(event.releases, 1);
}

TEST(BFCDeallocateAfterTest, StatsCountACompletedPendingFreeAsFreed) {
  auto pool = make_pool();
  FakeEvent event;
  pool->deallocate_after(pool->allocate(256), event.use());
  EXPECT_EQ(pool->stats().bytes_in_use, 256);
  event.done = true;
  EXPECT_EQ(pool->stats().bytes_in_use, 0);  // at once, not at the next allocation
  EXPECT_EQ(event.releases, 1);
}

TEST(BFCDeallocateAfterTest, ResetPeakFreesCompletedBlocksFirst) {
  auto pool = make_pool();
  FakeEvent event;
  pool->deallocate_after(pool->allocate(4096), event.use());
  event.done = true;
  pool->reset_peak();
  EXPECT_EQ(event.releases, 1);
  EXPECT_EQ(pool->stats().peak_bytes_in_use, 0);
}

TEST(BFCDeallocateAfterTest, RegionsShowACompletedPendingFreeAsNotInUse) {
  auto pool = make_pool();
  FakeEvent event;
  pool->deallocate_after(pool->allocate(4 * MiB), event.use());
  event.done = true;
  for (const RegionInfo& region : pool->regions()) {
    for (const ChunkInfo& chunk : region.chunks) EXPECT_NE(chunk.state, ChunkInfo::State::kInUse);
  }
  EXPECT_EQ(event.releases, 1);
}

}  // namespace
}  // namespace mt
