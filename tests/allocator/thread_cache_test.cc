// One thread's cache of free blocks, on its own (fake block addresses, never dereferenced).

#include "allocator/thread_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace mt::internal {
namespace {

void* fake(uintptr_t i) { return reinterpret_cast<void*>((i + 1) << 8); }

TEST(ThreadCacheTest, PopsTheMostRecentlyPushedBlockFirst) {
  ThreadCache cache(0, nullptr);
  CachedBlock spill[ThreadCache::kMaxSpill];
  bool over_budget = true;
  EXPECT_EQ(cache.pop(3), nullptr);
  EXPECT_EQ(cache.push(3, fake(1), spill, &over_budget), 0);
  EXPECT_FALSE(over_budget);
  EXPECT_EQ(cache.push(3, fake(2), spill, &over_budget), 0);
  EXPECT_EQ(cache.pop(4), nullptr);  // classes are separate
  EXPECT_EQ(cache.pop(3), fake(2));
  EXPECT_EQ(cache.pop(3), fake(1));
  EXPECT_EQ(cache.pop(3), nullptr);
}

TEST(ThreadCacheTest, SpillsTheOlderHalfOfAFullClass) {
  ThreadCache cache(0, nullptr);
  CachedBlock spill[ThreadCache::kMaxSpill];
  bool over_budget = false;
  const int capacity = class_capacity(0);
  for (int i = 0; i < capacity; ++i) ASSERT_EQ(cache.push(0, fake(i), spill, &over_budget), 0);
  ASSERT_EQ(cache.push(0, fake(capacity), spill, &over_budget), capacity / 2);
  for (int i = 0; i < capacity / 2; ++i) EXPECT_EQ(spill[i].ptr, fake(i));
  EXPECT_EQ(cache.pop(0), fake(capacity));
  EXPECT_EQ(cache.pop(0), fake(capacity - 1));
}

TEST(ThreadCacheTest, TrimsTheOlderHalfOfEveryClassWhenOverBudget) {
  ThreadCache cache(0, nullptr);
  CachedBlock spill[ThreadCache::kMaxSpill];
  bool over_budget = false;
  cache.push(0, fake(100), spill, &over_budget);  // class 0: two blocks
  cache.push(0, fake(101), spill, &over_budget);
  for (int i = 0; i < 3; ++i) cache.push(1, fake(200 + i), spill, &over_budget);  // three
  // One block of each class from the largest down, until the budget is passed.
  int singles = 0;
  for (int c = kNumSizeClasses - 1; !over_budget; --c) {
    ASSERT_GT(c, 1) << "the budget holds every class";
    cache.push(c, fake(c), spill, &over_budget);
    ++singles;
  }
  std::vector<CachedBlock> trimmed;
  cache.trim(&trimmed);
  ASSERT_EQ(trimmed.size(), static_cast<size_t>(1 + 2 + singles));  // halves, rounded up
  EXPECT_EQ(trimmed[0].ptr, fake(100));
  EXPECT_EQ(cache.pop(0), fake(101));
  EXPECT_EQ(cache.pop(0), nullptr);
  EXPECT_EQ(cache.pop(1), fake(202));
  EXPECT_EQ(cache.pop(1), nullptr);
  EXPECT_EQ(cache.pop(kNumSizeClasses - 1), nullptr);
  cache.push(kNumSizeClasses - 1, fake(1), spill, &over_budget);
  EXPECT_FALSE(over_budget);
}

TEST(ThreadCacheTest, DrainEmptiesEveryClass) {
  ThreadCache cache(0, nullptr);
  CachedBlock spill[ThreadCache::kMaxSpill];
  bool over_budget = false;
  for (int c = 0; c < kNumSizeClasses; c += 7) cache.push(c, fake(c), spill, &over_budget);
  std::vector<CachedBlock> drained;
  cache.drain(&drained);
  EXPECT_EQ(drained.size(), static_cast<size_t>((kNumSizeClasses + 6) / 7));
  for (int c = 0; c < kNumSizeClasses; ++c) EXPECT_EQ(cache.pop(c), nullptr);
}

}  // namespace
}  // namespace mt::internal
