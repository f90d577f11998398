// The GPU pool over cudaMalloc. Every test skips itself when the driver lists no device.

#include <cuda_runtime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "allocator/bfc_allocator.h"
#include "allocator/counting_sub_allocator.h"
#include "allocator/pools.h"
#include "allocator/sub_allocator.h"

namespace mt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t MiB = 1024 * 1024;
constexpr int64_t GiB = 1024 * MiB;

class GpuPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      GTEST_SKIP() << "no CUDA device";
    }
    device_count_ = count;
  }
  int device_count_ = 0;
};

std::unique_ptr<Allocator> gpu_pool(int64_t limit, bool growth) {
  absl::StatusOr<std::unique_ptr<Allocator>> pool = make_gpu_pool(
      {.logical_index = 0, .physical_gpu = 0, .limit_bytes = limit, .allow_growth = growth});
  EXPECT_TRUE(pool.ok()) << pool.status();
  return pool.ok() ? std::move(pool).value() : nullptr;
}

int64_t device_free_bytes() {
  size_t free_bytes = 0, total_bytes = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  return static_cast<int64_t>(free_bytes);
}

TEST_F(GpuPoolTest, AllocatesDeviceMemoryThatKernelsCanWrite) {
  std::unique_ptr<Allocator> pool = gpu_pool(GiB, true);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->name(), "GPU_0_bfc");
  for (int64_t size : {int64_t{256}, int64_t{64} * 1024, MiB, 8 * MiB}) {
    char* p = static_cast<char*>(pool->allocate(size));
    ASSERT_NE(p, nullptr);
    cudaPointerAttributes attributes;
    ASSERT_EQ(cudaPointerGetAttributes(&attributes, p), cudaSuccess);
    EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
    ASSERT_EQ(cudaMemset(p, 0x5a, size), cudaSuccess);
    unsigned char first = 0, last = 0;
    ASSERT_EQ(cudaMemcpy(&first, p, 1, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(&last, p + size - 1, 1, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(first, 0x5a);
    EXPECT_EQ(last, 0x5a);
    pool->deallocate(p);
  }
  EXPECT_EQ(pool->stats().bytes_in_use, 0);
}

TEST_F(GpuPoolTest, GrowsByDoublingRegions) {
  CountingSubAllocator::Log log;
  absl::StatusOr<std::unique_ptr<SubAllocator>> cuda = make_cuda_sub_allocator(0);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  BFCAllocator pool({.name = "GPU_0_bfc", .limit_bytes = GiB, .allow_growth = true},
                    CountingSubAllocator::wrap(std::move(cuda).value(), &log));
  void* a = pool.allocate(3 * MiB / 2);
  void* b = pool.allocate(3 * MiB / 2);
  void* c = pool.allocate(3 * MiB);
  EXPECT_THAT(log.alloc_sizes(), ElementsAre(2 * MiB, 4 * MiB, 8 * MiB));
  EXPECT_EQ(pool.stats().bytes_reserved, 14 * MiB);
  for (void* p : {a, b, c}) pool.deallocate(p);
}

TEST_F(GpuPoolTest, ReservesItsWholeLimitAndNeverMore) {
  std::unique_ptr<Allocator> pool = gpu_pool(64 * MiB, false);
  ASSERT_NE(pool, nullptr);
  void* a = pool->allocate(48 * MiB);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(pool->stats().bytes_reserved, 64 * MiB);
  const MemoryStats before = pool->stats();
  EXPECT_EQ(pool->allocate(32 * MiB), nullptr);
  EXPECT_EQ(pool->stats().bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(pool->stats().bytes_reserved, 64 * MiB);
  pool->deallocate(a);
  void* b = pool->allocate(32 * MiB);
  EXPECT_NE(b, nullptr);
  pool->deallocate(b);
}

TEST_F(GpuPoolTest, ReleaseUnusedGivesMemoryBackToTheDriver) {
  std::unique_ptr<Allocator> pool = gpu_pool(8 * GiB, true);
  ASSERT_NE(pool, nullptr);
  void* p = pool->allocate(GiB);
  ASSERT_NE(p, nullptr);
  pool->deallocate(p);
  const int64_t free_before = device_free_bytes();
  EXPECT_EQ(pool->release_unused(), GiB);
  EXPECT_EQ(pool->stats().bytes_reserved, 0);
  EXPECT_GE(device_free_bytes() - free_before, GiB - 64 * MiB);
  absl::StatusOr<GpuMemoryInfo> info = query_gpu_memory(0);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_GT(info->total_bytes, info->free_bytes);
}

TEST_F(GpuPoolTest, FreesABlockOnlyAfterItsEventCompletes) {
  std::unique_ptr<Allocator> pool = gpu_pool(GiB, true);
  ASSERT_NE(pool, nullptr);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  void* p = pool->allocate(32 * MiB);
  ASSERT_EQ(cudaMemsetAsync(p, 1, 32 * MiB, stream), cudaSuccess);
  cudaEvent_t event;
  ASSERT_EQ(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(event, stream), cudaSuccess);
  pool->deallocate_after(
      p, {event, [](void* e) { return cudaEventQuery(static_cast<cudaEvent_t>(e)) == cudaSuccess; },
          [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }});
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  void* q = pool->allocate(256);  // polls: the event has completed
  EXPECT_EQ(pool->stats().bytes_in_use, 256);
  pool->deallocate(q);
  cudaStreamDestroy(stream);
}

TEST_F(GpuPoolTest, UnknownGpuIsNotFound) {
  absl::StatusOr<std::unique_ptr<SubAllocator>> sub = make_cuda_sub_allocator(device_count_);
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(sub.status().message(), HasSubstr("[make_cuda_sub_allocator] no GPU"));
}

TEST_F(GpuPoolTest, PinnedPoolServesStagingBlocks) {
  absl::StatusOr<std::unique_ptr<Allocator>> pool = make_pinned_pool(64 * MiB);
  ASSERT_TRUE(pool.ok()) << pool.status();
  EXPECT_EQ((*pool)->name(), "cuda_host_bfc");
  void* p = (*pool)->allocate(MiB);
  ASSERT_NE(p, nullptr);
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, p), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ((*pool)->allocate(65 * MiB), nullptr);
  (*pool)->deallocate(p);
}

TEST_F(GpuPoolTest, PinnedHostSubAllocatorReturnsPageLockedMemory) {
  absl::StatusOr<std::unique_ptr<SubAllocator>> pinned = make_pinned_host_sub_allocator();
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  void* p = (*pinned)->alloc(MiB);
  ASSERT_NE(p, nullptr);
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, p), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  (*pinned)->free(p, MiB);
}

}  // namespace
}  // namespace mt
