// The size classes of the fast path and the tags that map blocks to them.

#include "allocator/size_classes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "allocator/block_tags.h"

namespace mt::internal {
namespace {

TEST(SizeClassesTest, EveryRequestGetsTheSmallestClassThatHoldsIt) {
  for (size_t bytes = 1; bytes <= kMaxClassBytes; bytes += (bytes < 8192 ? 1 : 97)) {
    const int c = size_class(bytes);
    ASSERT_GE(c, 0);
    ASSERT_LT(c, kNumSizeClasses);
    ASSERT_GE(class_bytes(c), static_cast<int64_t>(bytes)) << bytes;
    if (c > 0) {
      ASSERT_LT(class_bytes(c - 1), static_cast<int64_t>(bytes)) << bytes;
    }
  }
  EXPECT_EQ(size_class(kMaxClassBytes), kNumSizeClasses - 1);
}

TEST(SizeClassesTest, ClassesAre256ByteMultiplesWastingUnderAnEighth) {
  for (int c = 0; c < kNumSizeClasses; ++c) {
    EXPECT_EQ(class_bytes(c) % 256, 0);
    EXPECT_EQ(size_class(class_bytes(c)), c);
    if (c > 0) {
      const int64_t smallest_request = class_bytes(c - 1) + 256;
      EXPECT_LT(class_bytes(c) - smallest_request, std::max<int64_t>(256, smallest_request / 8));
    }
    EXPECT_GE(class_capacity(c), 2);
    EXPECT_LE(class_capacity(c), 64);
  }
  EXPECT_EQ(class_bytes(kNumSizeClasses - 1), int64_t{1} << 20);
}

TEST(BlockTagsTest, StoresOneTagPerBlockAddress) {
  BlockTags tags;
  std::vector<char> memory(1 << 20);
  char* base =
      reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(memory.data()) + 255) & ~uintptr_t{255});
  EXPECT_EQ(tags.get(base), 0);
  ASSERT_TRUE(tags.set(base, 7));
  ASSERT_TRUE(tags.set(base + 256, 9));
  EXPECT_EQ(tags.get(base), 7);
  EXPECT_EQ(tags.get(base + 256), 9);
  EXPECT_EQ(tags.get(base + 512), 0);
  tags.clear(base);
  EXPECT_EQ(tags.get(base), 0);
  EXPECT_EQ(tags.get(base + 256), 9);
}

TEST(BlockTagsTest, RefusesAddressesBeyond48Bits) {
  BlockTags tags;
  const void* high = reinterpret_cast<const void*>(uintptr_t{1} << 50);
  EXPECT_FALSE(tags.set(high, 1));
  EXPECT_EQ(tags.get(high), 0);
}

}  // namespace
}  // namespace mt::internal
