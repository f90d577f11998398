// The CUDA handle helpers report running out of memory as ResourceExhausted (a card that
// another process fills, say) and other failures as Internal.
#include "core/cuda/cuda_handles.h"

#include "gtest/gtest.h"

namespace mt {
namespace {

TEST(CudaHandlesTest, OutOfMemoryIsResourceExhaustedAndOtherFailuresInternal) {
  absl::Status oom = cuda::handle_error("cublasCreate", "the resource allocation failed", true);
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(), "cublasCreate failed: the resource allocation failed");
  EXPECT_EQ(cuda::handle_error("cublasCreate", "not initialized").code(),
            absl::StatusCode::kInternal);
}

TEST(CudaHandlesTest, ADeviceBufferLargerThanTheCardIsResourceExhausted) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();
    GTEST_SKIP() << "needs a GPU: none is visible";
  }
  absl::StatusOr<cuda::DeviceBuffer> buffer = cuda::DeviceBuffer::create(size_t{1} << 50);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(buffer.status().message(), "cudaMalloc failed: out of memory");
  EXPECT_TRUE(cuda::DeviceBuffer::create(256).ok());  // the error did not stick
}

}  // namespace
}  // namespace mt
