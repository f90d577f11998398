// The CUDA random fill (kernels/cuda/random_kernels.h) gives the CPU fill's bits for every
// distribution and dtype, for aligned and unaligned buffers and lengths with a partial last
// group, and the message of a failed launch. Skips itself without a GPU, but for the failed
// launch, which is injected.
#include "kernels/cuda/random_kernels.h"

#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/fault_injection.h"
#include "gtest/gtest.h"
#include "kernels/cpu/random_fill.h"

namespace mt::cuda {
namespace {

class RandomKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "needs a GPU";
  }
};

const char* name(RandomDistribution dist) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return "uniform";
    case RandomDistribution::kNormal:
      return "normal";
    default:
      return "truncated_normal";
  }
}

// Returns the bytes of n values from the GPU fill, written `offset` elements into a buffer.
std::vector<unsigned char> gpu_fill(RandomDistribution dist, DType dtype, const PhiloxSeed& seed,
                                    int64_t n, int64_t offset) {
  const size_t size = dtype_size(dtype);
  void* buffer = nullptr;
  EXPECT_EQ(cudaMalloc(&buffer, (n + offset) * size), cudaSuccess);
  unsigned char* out = static_cast<unsigned char*>(buffer) + offset * size;
  EXPECT_TRUE(launch_random_fill(dist, dtype, seed, out, n, /*stream=*/nullptr).ok());
  std::vector<unsigned char> bytes(n * size);
  EXPECT_EQ(cudaMemcpy(bytes.data(), out, bytes.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(buffer);
  return bytes;
}

TEST_F(RandomKernelsTest, GivesTheCpuFillsBits) {
  const PhiloxSeed seed = stateless_philox_seed(12345, -7);
  for (RandomDistribution dist : {RandomDistribution::kUniform, RandomDistribution::kNormal,
                                  RandomDistribution::kTruncatedNormal}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
      for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000003}}) {
        for (int64_t offset : {0, 1}) {  // a vector store needs an aligned buffer
          std::vector<unsigned char> cpu(n * dtype_size(dtype));
          cpu::random_fill(dist, dtype, seed, cpu.data(), n);
          const std::vector<unsigned char> gpu = gpu_fill(dist, dtype, seed, n, offset);
          EXPECT_TRUE(gpu == cpu) << name(dist) << " " << dtype_name(dtype) << " n=" << n
                                  << " offset=" << offset;
        }
      }
    }
  }
}

TEST_F(RandomKernelsTest, GivesTheCpuFillsUniformIntegers) {
  const PhiloxSeed seed = stateless_philox_seed(12345, -7);
  const struct {
    DType dtype;
    int64_t minval;
    uint64_t range;
  } cases[] = {{DType::kInt32, -5, 22},
               {DType::kInt32, 0, 0},
               {DType::kInt64, -(int64_t{1} << 40), (uint64_t{1} << 41) + 3},
               {DType::kInt64, 0, 0}};
  for (const auto& c : cases) {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000003}}) {
      for (int64_t offset : {0, 1}) {
        const size_t size = dtype_size(c.dtype);
        std::vector<unsigned char> cpu(n * size), gpu(n * size);
        cpu::random_fill_uniform_int(c.dtype, seed, c.minval, c.range, cpu.data(), n);
        void* buffer = nullptr;
        ASSERT_EQ(cudaMalloc(&buffer, (n + offset) * size), cudaSuccess);
        unsigned char* out = static_cast<unsigned char*>(buffer) + offset * size;
        EXPECT_TRUE(
            launch_random_fill_uniform_int(c.dtype, seed, c.minval, c.range, out, n, nullptr).ok());
        EXPECT_EQ(cudaMemcpy(gpu.data(), out, gpu.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        cudaFree(buffer);
        EXPECT_TRUE(gpu == cpu) << dtype_name(c.dtype) << " range " << c.range << " n=" << n
                                << " offset=" << offset;
      }
    }
  }
}

TEST_F(RandomKernelsTest, LaunchesNothingForZeroElements) {
  EXPECT_TRUE(launch_random_fill(RandomDistribution::kUniform, DType::kFloat32,
                                 stateless_philox_seed(1, 2), nullptr, 0, nullptr)
                  .ok());
}

// Needs no GPU: the injected fault stops the launch before it reaches the driver.
TEST(RandomKernelsErrorTest, ReportsAFailedLaunch) {
  internal::inject_fault(internal::FaultSite::kKernelLaunch, 1);
  const absl::Status status = launch_random_fill(RandomDistribution::kNormal, DType::kFloat32,
                                                 stateless_philox_seed(1, 2), nullptr, 4, nullptr);
  internal::clear_faults();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), std::string("[random_fill] cudaLaunchKernel failed: ") +
                                  cudaGetErrorString(cudaErrorLaunchOutOfResources));
}

}  // namespace
}  // namespace mt::cuda
