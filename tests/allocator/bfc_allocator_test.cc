// The best-fit-with-coalescing rules of BFCAllocator, with the fast path off so that every
// block comes straight from the arena (bfc_fast_path_test.cc covers the caches).

#include "allocator/bfc_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "allocator/counting_sub_allocator.h"

namespace mt {
namespace {

using ::testing::ElementsAre;

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * 1024;

BFCAllocator::Options arena_only(int64_t limit, bool growth) {
  return {.name = "CPU_0_bfc",
          .limit_bytes = limit,
          .allow_growth = growth,
          .max_cached_block_bytes = 0};
}

std::unique_ptr<BFCAllocator> make_pool(BFCAllocator::Options options,
                                        CountingSubAllocator::Log* log) {
  return std::make_unique<BFCAllocator>(std::move(options),
                                        CountingSubAllocator::wrap(make_host_sub_allocator(), log));
}

char* at(void* p, int64_t offset) { return static_cast<char*>(p) + offset; }

TEST(BFCAllocatorTest, RoundsRequestsUpTo256ByteAlignedBlocks) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(MiB, false), &log);
  void* a = pool->allocate(1);
  void* b = pool->allocate(1000);
  void* c = pool->allocate(0);
  for (void* p : {a, b, c}) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  EXPECT_EQ(pool->allocated_size(a), 256);
  EXPECT_EQ(pool->allocated_size(b), 1024);
  EXPECT_EQ(pool->allocated_size(c), 256);
  EXPECT_EQ(b, at(a, 256));  // carved one after the other from the single region
  EXPECT_EQ(pool->stats().bytes_in_use, 256 + 1024 + 256);
  for (void* p : {a, b, c}) pool->deallocate(p);
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
  EXPECT_EQ(pool->name(), "CPU_0_bfc");
}

TEST(BFCAllocatorTest, BestFitPicksTheSmallestFreeChunkThatHoldsTheRequest) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(MiB, false), &log);
  // [a 4K][guard][b 2K][guard][c 8K][guard][d 2K][guard][rest of the region]
  std::vector<void*> blocks;
  for (int64_t size : {4 * KiB, 256L, 2 * KiB, 256L, 8 * KiB, 256L, 2 * KiB, 256L}) {
    blocks.push_back(pool->allocate(size));
  }
  void* a = blocks[0];
  void* b = blocks[2];
  void* c = blocks[4];
  void* d = blocks[6];
  for (void* p : {a, b, c, d}) pool->deallocate(p);
  EXPECT_EQ(pool->allocate(2 * KiB), b);  // two 2K holes: the lower address wins
  EXPECT_EQ(pool->allocate(2 * KiB), d);
  EXPECT_EQ(pool->allocate(6 * KiB), c);  // the 8K hole, not the big rest
  EXPECT_EQ(pool->allocate(3 * KiB), a);  // the 4K hole
}

TEST(BFCAllocatorTest, SplitsOnlyWhenTheRemainderIsWorthKeeping) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(64 * MiB, false), &log);
  void* hole = pool->allocate(4 * KiB);
  void* guard = pool->allocate(256);
  pool->deallocate(hole);

  // 4096 - 3840 = 256 < max(256, 3840 / 8): the caller gets the whole chunk.
  void* whole = pool->allocate(3840);
  EXPECT_EQ(whole, hole);
  EXPECT_EQ(pool->allocated_size(whole), 4 * KiB);
  EXPECT_EQ(pool->stats().bytes_in_use, 4 * KiB + 256);
  pool->deallocate(whole);

  // 4096 - 3584 = 512 >= 448: split, and the 512-byte rest serves the next request.
  void* split = pool->allocate(3584);
  EXPECT_EQ(pool->allocated_size(split), 3584);
  EXPECT_EQ(pool->allocate(512), at(hole, 3584));

  // Large requests keep up to 1 MiB of slack rather than leave a sliver between blocks.
  void* big = pool->allocate(16 * MiB + 512 * KiB);
  void* guard2 = pool->allocate(256);
  pool->deallocate(big);
  void* unsplit = pool->allocate(16 * MiB);
  EXPECT_EQ(unsplit, big);
  EXPECT_EQ(pool->allocated_size(unsplit), 16 * MiB + 512 * KiB);
  pool->deallocate(unsplit);
  void* guard3 = pool->allocate(256);  // takes the front of the rest of the region
  EXPECT_EQ(guard3, big);
  void* after_guard3 = at(big, 256);
  void* split_big = pool->allocate(15 * MiB);  // rest 16.5M - 256 - 15M >= 1 MiB: split
  EXPECT_EQ(split_big, after_guard3);
  EXPECT_EQ(pool->allocated_size(split_big), 15 * MiB);
  for (void* p : {guard, guard2, guard3, split_big}) pool->deallocate(p);
}

// [a][b][c][guard][rest]: frees that must merge with the next, the previous, and both.
class CoalescingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_ = make_pool(arena_only(MiB, false), &log_);
    a_ = pool_->allocate(4 * KiB);
    b_ = pool_->allocate(4 * KiB);
    c_ = pool_->allocate(4 * KiB);
    guard_ = pool_->allocate(256);
  }
  CountingSubAllocator::Log log_;
  std::unique_ptr<BFCAllocator> pool_;
  void *a_, *b_, *c_, *guard_;
};

TEST_F(CoalescingTest, MergesWithTheNextChunk) {
  pool_->deallocate(b_);
  pool_->deallocate(a_);  // a + b
  EXPECT_EQ(pool_->allocate(8 * KiB), a_);
}

TEST_F(CoalescingTest, MergesWithThePreviousChunk) {
  pool_->deallocate(b_);
  pool_->deallocate(c_);  // b + c
  EXPECT_EQ(pool_->allocate(8 * KiB), b_);
}

TEST_F(CoalescingTest, MergesWithBothNeighboursAtOnce) {
  pool_->deallocate(a_);
  pool_->deallocate(c_);
  pool_->deallocate(b_);  // a + b + c
  EXPECT_EQ(pool_->allocate(12 * KiB), a_);
}

TEST_F(CoalescingTest, FreeingEverythingLeavesOneChunk) {
  for (void* p : {c_, a_, guard_, b_}) pool_->deallocate(p);
  MemoryStats s = pool_->stats();
  EXPECT_EQ(s.largest_free_block, MiB);
  EXPECT_EQ(s.fragmentation, 0);
}

TEST(BFCAllocatorTest, GrowthModeDoublesEachNewRegion) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(BFCAllocator::kUnlimited, true), &log);
  EXPECT_EQ(pool->stats().bytes_reserved, 0);  // nothing before the first allocation
  std::vector<void*> blocks;
  for (int64_t size : {3 * MiB / 2, 3 * MiB / 2, 3 * MiB, 7 * MiB}) {
    blocks.push_back(pool->allocate(size));
  }
  EXPECT_THAT(log.alloc_sizes(), ElementsAre(2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB));
  // Bigger than the next region (32 MiB): a region of its own size, rounded to 2 MiB.
  blocks.push_back(pool->allocate(33 * MiB + 1));
  blocks.push_back(pool->allocate(10 * MiB));  // fits nowhere: the doubling goes on
  EXPECT_THAT(log.alloc_sizes(),
              ElementsAre(2 * MiB, 4 * MiB, 8 * MiB, 16 * MiB, 34 * MiB, 64 * MiB));
  EXPECT_EQ(pool->stats().bytes_reserved, 128 * MiB);
  for (void* p : blocks) pool->deallocate(p);
}

TEST(BFCAllocatorTest, GrowthStopsAtTheLimit) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(5 * MiB, true), &log);
  void* a = pool->allocate(3 * MiB / 2);
  void* b = pool->allocate(3 * MiB / 2);
  EXPECT_THAT(log.alloc_sizes(), ElementsAre(2 * MiB, 3 * MiB));  // 4 MiB capped to 3
  void* c = pool->allocate(MiB);                                  // fits in region two
  EXPECT_NE(c, nullptr);
  EXPECT_EQ(pool->allocate(MiB), nullptr);  // 2 x 0.5 MiB free, no headroom left
  EXPECT_EQ(log.allocs(), 2);
  EXPECT_EQ(log.refused(), 0);
  for (void* p : {a, b, c}) pool->deallocate(p);
}

TEST(BFCAllocatorTest, WithoutGrowthTheFirstAllocationReservesTheWholeLimit) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(8 * MiB, false), &log);
  void* p = pool->allocate(256);
  EXPECT_THAT(log.alloc_sizes(), ElementsAre(8 * MiB));
  EXPECT_EQ(pool->stats().bytes_reserved, 8 * MiB);
  EXPECT_EQ(pool->stats().largest_free_block, 8 * MiB - 256);
  pool->deallocate(p);
}

TEST(BFCAllocatorTest, RefusesRequestsOverTheLimitWithoutCallingTheDriver) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(4 * MiB, true), &log);
  EXPECT_EQ(pool->allocate(4 * MiB + 1), nullptr);
  EXPECT_EQ(pool->allocate(SIZE_MAX), nullptr);
  EXPECT_EQ(log.allocs() + log.refused(), 0);
  MemoryStats s = pool->stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.num_allocs, 0);
  EXPECT_EQ(s.bytes_limit, 4 * MiB);
}

TEST(BFCAllocatorTest, AsksForSmallerRegionsWhenTheDriverRefuses) {
  CountingSubAllocator::Log log;
  log.refuse_above(3 * MiB);
  auto pool = make_pool(arena_only(16 * MiB, false), &log);
  void* p = pool->allocate(MiB);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(log.allocs(), 1);
  const int64_t region = log.alloc_sizes()[0];
  EXPECT_LE(region, 3 * MiB);
  EXPECT_GT(region, 3 * MiB * 9 / 10);  // backs off by 10%, not by halves
  EXPECT_GT(log.refused(), 0);
  EXPECT_EQ(pool->stats().bytes_reserved, region);
  // A request the driver cannot hold fails after backing off down to the request itself.
  const MemoryStats before = pool->stats();
  EXPECT_EQ(pool->allocate(4 * MiB), nullptr);
  EXPECT_EQ(pool->stats().bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(pool->stats().bytes_reserved, before.bytes_reserved);
  pool->deallocate(p);
}

TEST(BFCAllocatorTest, ReleaseUnusedReturnsOnlyFullyFreeRegions) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(BFCAllocator::kUnlimited, true), &log);
  void* a = pool->allocate(3 * MiB / 2);  // region 1: 2 MiB
  void* b = pool->allocate(3 * MiB);      // region 2: 4 MiB
  EXPECT_EQ(pool->release_unused(), 0);
  pool->deallocate(a);
  EXPECT_EQ(pool->release_unused(), 2 * MiB);
  EXPECT_EQ(pool->stats().bytes_reserved, 4 * MiB);
  EXPECT_EQ(log.frees(), 1);
  pool->deallocate(b);
  EXPECT_EQ(pool->release_unused(), 4 * MiB);
  EXPECT_EQ(pool->stats().bytes_reserved, 0);
  EXPECT_EQ(pool->stats().largest_free_block, 0);
  EXPECT_EQ(log.bytes_held(), 0);
  void* c = pool->allocate(MiB);  // usable again
  EXPECT_NE(c, nullptr);
  pool->deallocate(c);
}

// A service that frees everything between bursts: each burst's region is as small as the
// first. (Doubling on would ask the driver for 2 MiB x 2^40 by the 40th burst.)
TEST(BFCAllocatorTest, ReleaseUnusedRestartsTheDoublingFromTheInitialRegion) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(BFCAllocator::kUnlimited, true), &log);
  for (int burst = 0; burst < 40; ++burst) {
    void* p = pool->allocate(MiB);
    ASSERT_NE(p, nullptr) << "burst " << burst;
    pool->deallocate(p);
    ASSERT_EQ(pool->release_unused(), 2 * MiB) << "burst " << burst;
  }
  EXPECT_EQ(log.allocs(), 40);
  EXPECT_EQ(log.alloc_sizes().back(), 2 * MiB);
  // With a region still held the next one doubles once; with both held, twice.
  void* a = pool->allocate(3 * MiB / 2);
  void* b = pool->allocate(3 * MiB / 2);
  void* c = pool->allocate(7 * MiB / 2);
  const std::vector<int64_t> sizes = log.alloc_sizes();
  EXPECT_THAT(std::vector<int64_t>(sizes.end() - 3, sizes.end()),
              ElementsAre(2 * MiB, 4 * MiB, 8 * MiB));
  pool->deallocate(b);
  EXPECT_EQ(pool->release_unused(), 4 * MiB);  // two regions held: the next is 8 MiB
  void* d = pool->allocate(7 * MiB);
  EXPECT_EQ(log.alloc_sizes().back(), 8 * MiB);
  for (void* p : {a, c, d}) pool->deallocate(p);
  EXPECT_EQ(pool->release_unused(), 18 * MiB);
  EXPECT_EQ(log.bytes_held(), 0);
}

TEST(BFCAllocatorTest, ReportsFragmentationAndTheLargestFreeBlock) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(MiB, false), &log);
  std::vector<void*> blocks;
  for (int i = 0; i < 16; ++i) blocks.push_back(pool->allocate(64 * KiB));  // fills 1 MiB
  for (int i = 0; i < 16; i += 2) pool->deallocate(blocks[i]);              // 8 holes
  MemoryStats s = pool->stats();
  EXPECT_EQ(s.bytes_in_use, 512 * KiB);
  EXPECT_EQ(s.largest_free_block, 64 * KiB);
  EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - 64.0 / 512.0);
  // Half the pool is free, yet no 128 KiB block exists: fails, and changes nothing.
  EXPECT_EQ(pool->allocate(128 * KiB), nullptr);
  MemoryStats after = pool->stats();
  EXPECT_EQ(after.bytes_in_use, s.bytes_in_use);
  EXPECT_EQ(after.num_allocs, s.num_allocs);
  EXPECT_EQ(after.peak_bytes_in_use, s.peak_bytes_in_use);
  pool->deallocate(blocks[5]);  // joins holes 4 and 6
  s = pool->stats();
  EXPECT_EQ(s.largest_free_block, 192 * KiB);
  EXPECT_DOUBLE_EQ(s.fragmentation, 1.0 - 192.0 / 576.0);
  EXPECT_EQ(pool->allocate(128 * KiB), blocks[4]);
}

TEST(BFCAllocatorTest, OutOfMemoryReturnsNullChangesNothingAndRecovers) {
  CountingSubAllocator::Log log;
  auto pool = make_pool({.name = "CPU_1_bfc", .limit_bytes = 4 * MiB, .allow_growth = false}, &log);
  void* a = pool->allocate(3 * MiB);
  ASSERT_NE(a, nullptr);
  const MemoryStats before = pool->stats();
  EXPECT_EQ(pool->allocate(2 * MiB), nullptr);
  const MemoryStats after = pool->stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.peak_bytes_in_use, before.peak_bytes_in_use);
  EXPECT_EQ(after.bytes_reserved, before.bytes_reserved);
  EXPECT_EQ(after.num_allocs, before.num_allocs);
  EXPECT_EQ(after.largest_free_block, before.largest_free_block);
  pool->deallocate(a);
  void* b = pool->allocate(2 * MiB);
  EXPECT_NE(b, nullptr);
  pool->deallocate(b);
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
}

TEST(BFCAllocatorTest, TracksPeakAndAllocationCountExactly) {
  for (int64_t cached : {int64_t{0}, MiB}) {
    SCOPED_TRACE(cached ? "fast path on" : "fast path off");
    CountingSubAllocator::Log log;
    auto pool = make_pool({.name = "CPU_0_bfc", .max_cached_block_bytes = cached}, &log);
    void* a = pool->allocate(KiB);
    void* b = pool->allocate(2 * KiB);
    pool->deallocate(a);
    MemoryStats s = pool->stats();
    EXPECT_EQ(s.bytes_in_use, 2 * KiB);
    EXPECT_EQ(s.peak_bytes_in_use, 3 * KiB);
    pool->reset_peak();
    EXPECT_EQ(pool->stats().peak_bytes_in_use, 2 * KiB);
    void* c = pool->allocate(KiB);  // from the cache when the fast path is on
    void* d = pool->allocate(4 * KiB);
    pool->deallocate(c);
    pool->deallocate(d);
    s = pool->stats();
    EXPECT_EQ(s.peak_bytes_in_use, 7 * KiB);
    EXPECT_EQ(s.num_allocs, 4);
    pool->deallocate(b);
    EXPECT_EQ(pool->stats().bytes_in_use, 0);
  }
}

TEST(BFCAllocatorRegionsTest, ListsEveryChunkInAddressOrder) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(arena_only(MiB, false), &log);
  EXPECT_TRUE(pool->regions().empty());
  void* a = pool->allocate(1000);
  void* b = pool->allocate(3000);
  pool->deallocate(a);
  std::vector<RegionInfo> regions = pool->regions();
  ASSERT_EQ(regions.size(), 1u);
  EXPECT_EQ(regions[0].size, MiB);
  ASSERT_EQ(regions[0].chunks.size(), 3u);
  const std::vector<ChunkInfo>& c = regions[0].chunks;
  EXPECT_EQ(c[0].address, reinterpret_cast<uintptr_t>(a));
  EXPECT_EQ(c[0].size, 1024);
  EXPECT_EQ(c[0].state, ChunkInfo::State::kFree);
  EXPECT_EQ(c[1].address, reinterpret_cast<uintptr_t>(b));
  EXPECT_EQ(c[1].state, ChunkInfo::State::kInUse);
  EXPECT_EQ(c[2].size, MiB - 1024 - 3072);
  EXPECT_EQ(c[2].state, ChunkInfo::State::kFree);
  pool->deallocate(b);
}

}  // namespace
}  // namespace mt
