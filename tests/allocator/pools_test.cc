// The factories the runtime calls, the host sub-allocator, and the CUDA factories on a
// machine without a GPU (or a build without CUDA).

#include "allocator/pools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>

#include "allocator/sub_allocator.h"

namespace mt {
namespace {

using ::testing::HasSubstr;

constexpr int64_t MiB = 1024 * 1024;

TEST(HostSubAllocatorTest, Returns256ByteAlignedWritableMemory) {
  std::unique_ptr<SubAllocator> host = make_host_sub_allocator();
  for (size_t bytes : {size_t{256}, size_t{1000}, size_t{3} << 20}) {
    void* p = host->alloc(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
    std::memset(p, 0xab, bytes);
    host->free(p, bytes);
  }
}

TEST(HostSubAllocatorTest, ReturnsNullWhenTheSystemRefuses) {
  std::unique_ptr<SubAllocator> host = make_host_sub_allocator();
  EXPECT_EQ(host->alloc(std::numeric_limits<size_t>::max() - 100), nullptr);
}

TEST(PoolsTest, CpuPoolIsNamedUnlimitedAndGrowsFromTwoMiB) {
  std::unique_ptr<Allocator> pool = make_cpu_pool(3, std::nullopt);
  EXPECT_EQ(pool->name(), "CPU_3_bfc");
  EXPECT_EQ(pool->stats().bytes_limit, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(pool->stats().bytes_reserved, 0);
  void* p = pool->allocate(100);
  EXPECT_EQ(pool->stats().bytes_reserved, 2 * MiB);
  pool->deallocate(p);
}

TEST(PoolsTest, CpuPoolHonoursItsLimit) {
  std::unique_ptr<Allocator> pool = make_cpu_pool(0, 8 * MiB);
  EXPECT_EQ(pool->stats().bytes_limit, 8 * MiB);
  void* a = pool->allocate(6 * MiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(pool->allocate(3 * MiB), nullptr);
  pool->deallocate(a);
  void* b = pool->allocate(3 * MiB);
  EXPECT_NE(b, nullptr);
  pool->deallocate(b);
}

TEST(PoolsTest, GpuPoolRejectsANonPositiveLimit) {
  absl::StatusOr<std::unique_ptr<Allocator>> pool =
      make_gpu_pool({.logical_index = 2, .physical_gpu = 0, .limit_bytes = 0});
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pool.status().message(), HasSubstr("[make_gpu_pool] GPU_2_bfc: limit_bytes"));
}

// Without a usable GPU (or without CUDA at all) every CUDA factory fails the same way.
class NoGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (query_gpu_memory(0).ok()) GTEST_SKIP() << "a GPU is present";
  }
};

TEST_F(NoGpuTest, CudaFactoriesFailWithFailedPrecondition) {
  auto expect_fails = [](const absl::Status& status, const char* op) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_THAT(status.message(), HasSubstr(op));
  };
  expect_fails(make_cuda_sub_allocator(0).status(), "[make_cuda_sub_allocator]");
  expect_fails(make_pinned_host_sub_allocator().status(), "[make_pinned_host_sub_allocator]");
  expect_fails(query_gpu_memory(0).status(), "[query_gpu_memory]");
}

TEST(PoolsTest, PinnedPoolRejectsANonPositiveLimit) {
  absl::StatusOr<std::unique_ptr<Allocator>> pool = make_pinned_pool(-1);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(pool.status().message(), HasSubstr("[make_pinned_pool] limit_bytes"));
}

TEST_F(NoGpuTest, PinnedPoolFailsWithFailedPrecondition) {
  absl::StatusOr<std::unique_ptr<Allocator>> pool = make_pinned_pool(MiB);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(pool.status().message(), HasSubstr("[make_pinned_host_sub_allocator]"));
}

TEST_F(NoGpuTest, GpuPoolFailsWithFailedPrecondition) {
  absl::StatusOr<std::unique_ptr<Allocator>> pool =
      make_gpu_pool({.logical_index = 0, .physical_gpu = 0, .limit_bytes = MiB});
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(pool.status().message(), HasSubstr("[make_cuda_sub_allocator]"));
}

}  // namespace
}  // namespace mt
