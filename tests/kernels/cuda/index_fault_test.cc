// IndexFault (Note [GPU index faults] in kernels/cuda/index_fault.h): the host's taking of a
// report and its message (no GPU needed), and GatherV2's kernel recording a bad index
// while writing zeros, once per report (skips itself without a GPU).
#include "kernels/cuda/index_fault.h"

#include <vector>

#include "core/cuda/cuda_handles.h"
#include "gtest/gtest.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/kernel_registry.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt::cuda {
namespace {

using testutil::gpu_registry;

constexpr char kWhere[] = " (on GPU:7; reported at the next synchronisation)";

IndexFault waiting(OpId op, int rank, std::vector<int64_t> dims, int64_t position) {
  IndexFault f;
  f.op = static_cast<int32_t>(op);
  f.rank = rank;
  for (size_t d = 0; d < dims.size(); ++d) f.dims[d] = dims[d];
  f.position = position;
  f.value = 5;
  f.bound = 3;
  f.ready = 1;
  return f;
}

TEST(IndexFaultTest, TakesAWaitingReportOnceWithTheCpuWording) {
  IndexFault f = waiting(OpId::kGatherV2, 2, {2, 2}, 2);
  EXPECT_TRUE(fault_pending(f));
  const absl::Status s = take_index_fault(f, "GPU:7");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), std::string("[GatherV2] indices[1,0] = 5 is not in [0, 3)") + kWhere);
  EXPECT_FALSE(fault_pending(f));
  EXPECT_EQ(f.taken, 1u);  // a kernel may claim the record again
  EXPECT_TRUE(take_index_fault(f, "GPU:7").ok());
}

TEST(IndexFaultTest, NamesScalarsAndFlatOffsetsAsTheCpuDoes) {
  IndexFault scalar = waiting(OpId::kGatherV2, 0, {}, 0);
  EXPECT_EQ(take_index_fault(scalar, "GPU:7").message(),
            std::string("[GatherV2] indices[] = 5 is not in [0, 3)") + kWhere);
  IndexFault flat = waiting(OpId::kUnsortedSegmentSum, -1, {}, 4);
  EXPECT_EQ(take_index_fault(flat, "GPU:7").message(),
            std::string("[UnsortedSegmentSum] segment_ids[4] = 5 is out of range [0, 3)") + kWhere);
}

// The kernel writes zeros for the bad index, records the first one met, and records again
// once the report is taken.
TEST(IndexFaultTest, GatherKernelRecordsABadIndexAndWritesZeros) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    GTEST_SKIP() << "needs a GPU: cudaGetDeviceCount reports none or fails";
  }
  absl::StatusOr<Stream> stream = Stream::create();
  absl::StatusOr<MappedHostBuffer> record = MappedHostBuffer::create(sizeof(IndexFault));
  absl::StatusOr<DeviceBuffer> mem = DeviceBuffer::create(256);
  ASSERT_TRUE(stream.ok() && record.ok() && mem.ok());
  ASSERT_EQ(cudaMemset(mem->get(), 0, 256), cudaSuccess);
  auto* params = static_cast<float*>(mem->get());  // 3 floats, then 2 indices, then 2 outputs
  auto* idx = reinterpret_cast<int32_t*>(params + 4);
  float* out = params + 8;
  auto* claim = reinterpret_cast<unsigned long long*>(params + 16);
  const float p[3] = {1, 2, 3};
  ASSERT_EQ(cudaMemcpy(params, p, sizeof(p), cudaMemcpyHostToDevice), cudaSuccess);
  GpuState state;
  state.stream = stream->get();
  state.index_fault = static_cast<IndexFault*>(record->get());
  state.index_fault_claim = claim;
  const Shape ps = Shape::make({3}).value(), is = Shape::make({2}).value();
  const TensorArg args[2] = {{params, &ps, DType::kFloat32}, {idx, &is, DType::kInt32}};
  const OpAttrs attrs;
  const KernelContext ctx{{args, 2}, {out, &is, DType::kFloat32}, &attrs, &state};
  KernelFn gather = gpu_registry().find(OpId::kGatherV2, DeviceType::kGPU, DType::kFloat32);
  for (int32_t bad : {3, -4}) {
    const int32_t i[2] = {1, bad};
    ASSERT_EQ(cudaMemcpy(idx, i, sizeof(i), cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_TRUE(gather(ctx).ok());
    ASSERT_EQ(cudaStreamSynchronize(state.stream), cudaSuccess);
    float o[2] = {-1, -1};
    ASSERT_EQ(cudaMemcpy(o, out, sizeof(o), cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(o[0], 2);
    EXPECT_EQ(o[1], 0);
    const absl::Status s = take_index_fault(*state.index_fault, "GPU:7");
    EXPECT_EQ(s.message(), "[GatherV2] indices[1] = " + std::to_string(bad) +
                               " is not in [0, 3) (on GPU:7; reported at the next "
                               "synchronisation)");
  }
}

}  // namespace
}  // namespace mt::cuda
