// The CUDA kernels besides their conformance with the CPU (conformance_test.cc): which
// (op, dtype) pairs the GPU registers, the messages of failed CUDA and cuBLAS calls and the
// reduction the GPU refuses (these need no GPU), and _EagerConst's pageable source (which
// skips itself without a GPU).
#include "kernels/cuda/cuda_kernels.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/cuda/cuda_handles.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt::cuda {
namespace {

using testutil::gpu_registry;

bool is_integer(DType dtype) { return dtype == DType::kInt32 || dtype == DType::kInt64; }

// What the GPU registers is what each op accepts (op_dtypes, which the CPU registers in
// full), bfloat16 and float16 included, less integer MatMul.
TEST(CudaRegistryTest, MatchesOpDtypesExceptIntegerMatMul) {
  for (int o = 0; o < kNumOps; ++o) {
    const OpId op = static_cast<OpId>(o);
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dtype = static_cast<DType>(d);
      const bool accepted = (op_dtypes(op) & dtype_bit(dtype)) != 0;
      const bool matmul = op == OpId::kMatMul || op == OpId::kBatchMatMulV2;
      const bool expected = accepted && !(matmul && is_integer(dtype));
      EXPECT_EQ(gpu_registry().find(op, DeviceType::kGPU, dtype) != nullptr, expected)
          << op_name(op) << " " << dtype_name(dtype);
      EXPECT_EQ(gpu_registry().find(op, DeviceType::kCPU, dtype), nullptr)
          << "register_cuda_kernels registered a CPU kernel for " << op_name(op);
    }
  }
}

TEST(CudaRegistryTest, RejectsRegisteringTwice) {
  KernelRegistry registry;
  ASSERT_TRUE(register_cuda_kernels(registry).ok());
  const absl::Status again = register_cuda_kernels(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(), "[_EagerConst] a GPU kernel for float32 is already registered");
}

TEST(CudaStatusTest, NamesTheOpAndTheFailedCall) {
  EXPECT_TRUE(cuda_status(OpId::kAddV2, "cudaLaunchKernel", cudaSuccess).ok());
  const absl::Status launch =
      cuda_status(OpId::kAddV2, "cudaLaunchKernel", cudaErrorInvalidConfiguration);
  EXPECT_EQ(launch.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(launch.message(), std::string("[AddV2] cudaLaunchKernel failed: ") +
                                  cudaGetErrorString(cudaErrorInvalidConfiguration));
  const absl::Status oom = cuda_status(OpId::kSum, "cudaMemsetAsync", cudaErrorMemoryAllocation);
  EXPECT_EQ(oom.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(oom.message(), std::string("[Sum] cudaMemsetAsync failed: ") +
                               cudaGetErrorString(cudaErrorMemoryAllocation));
}

TEST(CudaStatusTest, NamesTheFailedCublasCall) {
  EXPECT_TRUE(cublas_status(OpId::kMatMul, "cublasSgemm", CUBLAS_STATUS_SUCCESS).ok());
  const absl::Status s = cublas_status(OpId::kMatMul, "cublasSgemm", CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.message(), std::string("[MatMul] cublasSgemm failed: ") +
                             cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE));
}

// A reduction whose dimensions alternate between reduced and kept in more than 16 runs is
// refused before any CUDA call, so no GPU is needed to see the error.
TEST(CudaReductionTest, RejectsMoreThanEightReducedRuns) {
  const Shape in = Shape::make(std::vector<int64_t>(17, 2)).value();
  OpAttrs attrs;
  for (int64_t axis = 0; axis < 17; axis += 2) attrs.axes.push_back(axis);
  const TensorMeta meta{&in, DType::kFloat32};
  absl::StatusOr<OutputMeta> out = infer_output(OpId::kSum, {&meta, 1}, attrs);
  ASSERT_TRUE(out.ok()) << out.status();
  const TensorArg arg{nullptr, &in, DType::kFloat32};
  GpuState state;
  KernelContext ctx{{&arg, 1}, {nullptr, &out->shape, out->dtype}, &attrs, &state};
  KernelFn sum = gpu_registry().find(OpId::kSum, DeviceType::kGPU, DType::kFloat32);
  ASSERT_NE(sum, nullptr);
  const absl::Status status = sum(ctx);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(status.message(),
            "[Sum] shape (2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2) has more than 8 "
            "separate runs of reduced or of kept dimensions, which the GPU kernel does not "
            "support");
}

// _EagerConst reads pageable host memory, which the caller may free once the kernel returns.
TEST(CudaEagerConstTest, MayFreeItsHostSourceAtOnce) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    GTEST_SKIP() << "needs a GPU: cudaGetDeviceCount reports none or fails";
  }
  constexpr size_t kN = 4099;
  absl::StatusOr<Stream> stream = Stream::create();
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::create(kN * sizeof(float));
  ASSERT_TRUE(stream.ok() && out.ok()) << stream.status() << out.status();
  GpuState state;
  state.stream = stream->get();
  const Shape shape = Shape::make({kN}).value();
  auto host = std::make_unique<std::vector<float>>(kN);
  for (size_t i = 0; i < kN; ++i) (*host)[i] = 0.5f * i;
  const TensorArg arg{host->data(), &shape, DType::kFloat32};
  const OpAttrs attrs;
  const KernelContext ctx{{&arg, 1}, {out->get(), &shape, DType::kFloat32}, &attrs, &state};
  KernelFn fn = gpu_registry().find(OpId::kEagerConst, DeviceType::kGPU, DType::kFloat32);
  ASSERT_TRUE(fn(ctx).ok());
  std::fill(host->begin(), host->end(), -1.0f);  // overwrite, then free, before any sync
  host.reset();
  std::vector<float> back(kN);
  ASSERT_EQ(cudaMemcpyAsync(back.data(), out->get(), kN * sizeof(float), cudaMemcpyDeviceToHost,
                            state.stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(state.stream), cudaSuccess);
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(back[i], 0.5f * i) << "element " << i;
}

}  // namespace
}  // namespace mt::cuda
