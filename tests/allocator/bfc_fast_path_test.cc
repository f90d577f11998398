// The per-thread size-class caches in front of BFCAllocator (Note [Fast path]).

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "allocator/bfc_allocator.h"
#include "allocator/counting_sub_allocator.h"

namespace mt {
namespace {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * 1024;

std::unique_ptr<BFCAllocator> make_pool(CountingSubAllocator::Log* log,
                                        int64_t limit = BFCAllocator::kUnlimited,
                                        bool growth = true) {
  return std::make_unique<BFCAllocator>(
      BFCAllocator::Options{.name = "CPU_0_bfc", .limit_bytes = limit, .allow_growth = growth},
      CountingSubAllocator::wrap(make_host_sub_allocator(), log));
}

// Blocks until open() is called; for ordering two threads in a test.
class Gate {
 public:
  void open() { open_.store(true); }
  void wait() const {
    while (!open_.load()) std::this_thread::yield();
  }

 private:
  std::atomic<bool> open_{false};
};

TEST(BFCFastPathTest, SteadyStatePairsNeverCallTheDriverOrTouchTheArena) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  for (int64_t size : {int64_t{256}, 4 * KiB, 64 * KiB, MiB}) {
    pool->deallocate(pool->allocate(size));  // the first pair fills the cache
    const int64_t driver_calls = log.allocs();
    const MemoryStats before = pool->stats();
    void* first = pool->allocate(size);
    pool->deallocate(first);
    for (int i = 0; i < 10000; ++i) {
      void* p = pool->allocate(size);
      ASSERT_EQ(p, first);  // the same cached block every time
      pool->deallocate(p);
    }
    const MemoryStats after = pool->stats();
    EXPECT_EQ(log.allocs(), driver_calls);
    // The arena's free chunks did not move: the pairs never reached it.
    EXPECT_EQ(after.largest_free_block, before.largest_free_block);
    EXPECT_EQ(after.bytes_in_use, 0);
    EXPECT_EQ(after.num_allocs, before.num_allocs + 10001);
  }
}

TEST(BFCFastPathTest, PeakCountsBlocksServedFromTheCache) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  void* blocks[4];
  for (void*& p : blocks) p = pool->allocate(KiB);
  for (void* p : blocks) pool->deallocate(p);
  pool->reset_peak();
  EXPECT_EQ(pool->stats().peak_bytes_in_use, 0);
  for (void*& p : blocks) p = pool->allocate(KiB);  // all four from the cache
  for (void* p : blocks) pool->deallocate(p);
  EXPECT_EQ(pool->stats().peak_bytes_in_use, 4 * KiB);
}

TEST(BFCFastPathTest, LargeBlocksBypassTheCache) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  void* p = pool->allocate(2 * MiB);
  pool->deallocate(p);
  const MemoryStats s = pool->stats();
  EXPECT_EQ(s.largest_free_block, s.bytes_reserved);  // back in the arena at once
}

TEST(BFCFastPathTest, FreesOnAnotherThreadKeepAccountingExact) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  std::vector<void*> blocks;
  std::thread producer([&] {
    for (int i = 0; i < 1000; ++i) blocks.push_back(pool->allocate(256 * (1 + i % 40)));
  });
  producer.join();
  EXPECT_GT(pool->stats().bytes_in_use, 0);
  std::thread consumer([&] {
    for (void* p : blocks) pool->deallocate(p);
  });
  consumer.join();
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
  EXPECT_EQ(pool->stats().num_allocs, 1000);
  // Both threads have exited, so nothing is cached: every region can go.
  pool->release_unused();
  EXPECT_EQ(pool->stats().bytes_reserved, 0);
  EXPECT_EQ(log.bytes_held(), 0);
}

TEST(BFCFastPathTest, ExitingThreadsHandTheirCachesBack) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  Gate cached, exit;
  std::thread worker([&] {
    std::vector<void*> blocks;
    for (int i = 0; i < 20; ++i) blocks.push_back(pool->allocate(4 * KiB));
    for (void* p : blocks) pool->deallocate(p);
    cached.open();
    exit.wait();
  });
  cached.wait();
  MemoryStats s = pool->stats();
  EXPECT_EQ(s.bytes_in_use, 0);
  EXPECT_EQ(s.largest_free_block, s.bytes_reserved - 20 * 4 * KiB);  // held by the cache
  exit.open();
  worker.join();
  s = pool->stats();
  EXPECT_EQ(s.largest_free_block, s.bytes_reserved);  // coalesced back into one chunk
}

TEST(BFCFastPathTest, PoolsMayDieBeforeTheThreadsThatUsedThem) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  Gate used, destroyed;
  std::thread worker([&] {
    for (int i = 0; i < 3; ++i) pool->deallocate(pool->allocate(KiB << i));
    used.open();
    destroyed.wait();
    // Its caches of the dead pool are orphaned; a new pool works on this thread.
    CountingSubAllocator::Log log2;
    auto pool2 = make_pool(&log2);
    for (int i = 0; i < 100; ++i) pool2->deallocate(pool2->allocate(KiB << (i % 3)));
    EXPECT_EQ(pool2->stats().bytes_in_use, 0);
  });
  used.wait();
  pool.reset();
  EXPECT_EQ(log.bytes_held(), 0);
  destroyed.open();
  worker.join();
}

TEST(BFCFastPathTest, OneThreadMayUseSeveralPools) {
  CountingSubAllocator::Log log1, log2;
  auto pool1 = make_pool(&log1);
  auto pool2 = make_pool(&log2);
  std::vector<void*> from1, from2;
  for (int i = 0; i < 200; ++i) {
    from1.push_back(pool1->allocate(KiB));
    from2.push_back(pool2->allocate(2 * KiB));
    if (i % 3 == 0) {
      pool1->deallocate(from1.back());
      from1.pop_back();
      pool2->deallocate(from2.back());
      from2.pop_back();
    }
  }
  EXPECT_EQ(pool1->stats().bytes_in_use, static_cast<int64_t>(from1.size()) * KiB);
  EXPECT_EQ(pool2->stats().bytes_in_use, static_cast<int64_t>(from2.size()) * 2 * KiB);
  for (void* p : from1) pool1->deallocate(p);
  for (void* p : from2) pool2->deallocate(p);
  EXPECT_EQ(pool1->stats().bytes_in_use, 0);
  EXPECT_EQ(pool2->stats().bytes_in_use, 0);
}

TEST(BFCFastPathTest, OutOfMemoryEmptiesTheCachesBeforeFailing) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log, 4 * MiB, false);
  std::vector<void*> blocks;
  while (void* p = pool->allocate(64 * KiB)) blocks.push_back(p);
  EXPECT_EQ(static_cast<int64_t>(blocks.size()), 64);
  for (void* p : blocks) pool->deallocate(p);  // into the cache and the central list
  void* big = pool->allocate(4 * MiB);         // needs every one of them back
  EXPECT_NE(big, nullptr);
  pool->deallocate(big);
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
}

TEST(BFCFastPathTest, OutOfMemoryEmptiesOtherThreadsCaches) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log, 4 * MiB, false);
  Gate cached, done;
  std::thread worker([&] {
    std::vector<void*> blocks;
    for (int i = 0; i < 40; ++i) blocks.push_back(pool->allocate(64 * KiB));
    for (void* p : blocks) pool->deallocate(p);
    cached.open();
    done.wait();  // keeps its cache alive while the main thread runs out of memory
  });
  cached.wait();
  void* big = pool->allocate(4 * MiB);
  EXPECT_NE(big, nullptr);
  pool->deallocate(big);
  done.open();
  worker.join();
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
}

TEST(BFCFastPathTest, ReleaseUnusedEmptiesTheCachesFirst) {
  CountingSubAllocator::Log log;
  auto pool = make_pool(&log);
  std::vector<void*> blocks;
  for (int i = 0; i < 1000; ++i) blocks.push_back(pool->allocate(KiB * (1 + i % 7)));
  for (void* p : blocks) pool->deallocate(p);
  const int64_t reserved = pool->stats().bytes_reserved;
  EXPECT_GT(reserved, 0);
  EXPECT_EQ(pool->release_unused(), reserved);
  EXPECT_EQ(pool->stats().bytes_reserved, 0);
  EXPECT_EQ(log.bytes_held(), 0);
}

TEST(BFCFastPathTest, HonoursMaxCachedBlockBytes) {
  CountingSubAllocator::Log log;
  BFCAllocator pool({.name = "CPU_0_bfc", .max_cached_block_bytes = 64 * KiB},
                    CountingSubAllocator::wrap(make_host_sub_allocator(), &log));
  void* small = pool.allocate(64 * KiB);
  void* large = pool.allocate(64 * KiB + 1);
  EXPECT_EQ(pool.allocated_size(large), 64 * KiB + 256);  // 256-rounded, not a class size
  pool.deallocate(large);
  pool.deallocate(small);
  const MemoryStats s = pool.stats();
  EXPECT_EQ(s.largest_free_block, s.bytes_reserved - 64 * KiB);  // only `small` is cached
}

TEST(BFCFastPathTest, KeepsClassBlocksWithinATinyLimit) {
  CountingSubAllocator::Log log;
  BFCAllocator pool({.name = "CPU_0_bfc", .limit_bytes = 17 * 256, .allow_growth = false},
                    CountingSubAllocator::wrap(make_host_sub_allocator(), &log));
  void* p = pool.allocate(4300);  // its class (4608 bytes) would not fit under the limit
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(pool.allocated_size(p), 17 * 256);
  pool.deallocate(p);
}

}  // namespace
}  // namespace mt
