#pragma once
// Internal to kernels/cuda/ (.cu files only): how a kernel reports an index outside its
// range (Note [GPU index faults] in kernels/cuda/index_fault.h). The launch passes an
// IndexReport by value; the kernel calls report_bad_index only for a bad index.
//
//   const IndexReport report = index_report(OpId::kGatherV2, state, ctx.inputs[1].shape);
//   if (v < 0 || v >= n) report_bad_index(report, position, v, n);  // in the kernel

#include <cstdint>

#include "core/shape.h"
#include "kernels/cuda/index_fault.h"
#include "kernels/cuda/launch.h"
#include "kernels/op_id.h"

namespace mt::cuda {

// Where a kernel records a bad index, and the shape of its indices (for the position).
struct IndexReport {
  IndexFault* fault;          // null: the state has no record, nothing is reported
  unsigned long long* claim;  // GpuState::index_fault_claim
  int32_t op;
  int32_t rank;  // -1 beyond kIndexFaultDims
  int64_t dims[kIndexFaultDims];
};

// Returns the report of `op` on `state` for indices of shape `indices`, or that names a
// flat offset when `indices` is null.
inline IndexReport index_report(OpId op, const GpuState& state, const Shape* indices) {
  IndexReport r{state.index_fault, state.index_fault_claim, static_cast<int32_t>(op), -1, {}};
  if (indices != nullptr && indices->rank() <= kIndexFaultDims) {
    r.rank = indices->rank();
    for (int d = 0; d < r.rank; ++d) r.dims[d] = indices->dim(d);
  }
  return r;
}

// Records `value`, found at flat offset `position` of the indices and outside [0, bound),
// unless a report already waits (Note [GPU index faults]). Out of line and taking `r` by
// value, so that a kernel copies its report only on a bad index.
__device__ __noinline__ inline void report_bad_index(IndexReport r, int64_t position, int64_t value,
                                                     int64_t bound) {
  if (r.fault == nullptr) return;
  const unsigned long long taken = *reinterpret_cast<volatile unsigned long long*>(&r.fault->taken);
  if (atomicMax(r.claim, taken + 1) > taken) return;  // claimed since the last report
  IndexFault* f = r.fault;
  f->op = r.op;
  f->rank = r.rank;
  for (int d = 0; d < kIndexFaultDims; ++d) f->dims[d] = r.dims[d];
  f->position = position;
  f->value = value;
  f->bound = bound;
  __threadfence_system();  // the fields reach the host before `ready`
  *reinterpret_cast<volatile uint32_t*>(&f->ready) = 1;
}

// Reports the first index of `idx[0, k)` met outside [0, bound) (or at or past `bound` when
// `negatives_ok`): the check of an op that has nothing to write.
template <typename I>
__global__ void check_indices(const I* idx, int64_t k, int64_t bound, bool negatives_ok,
                              IndexReport report) {
  for (int64_t j = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; j < k;
       j += int64_t{gridDim.x} * blockDim.x) {
    const int64_t v = static_cast<int64_t>(idx[j]);
    if (v >= bound || (v < 0 && !negatives_ok)) report_bad_index(report, j, v, bound);
  }
}

// Launches check_indices over the int32 or int64 `indices` of `op`; nothing without a record.
inline absl::Status launch_index_check(OpId op, const GpuState& state, const TensorArg& indices,
                                       int64_t bound, bool negatives_ok,
                                       const IndexReport& report) {
  const int64_t k = indices.shape->num_elements();
  if (k == 0 || report.fault == nullptr) return absl::OkStatus();
  const unsigned grid = std::min<int64_t>(grid_for(k, kThreads), int64_t{sm_count(state)} * 8);
  if (indices.dtype == DType::kInt32) {
    return launch(op, state, grid, kThreads, &check_indices<int32_t>,
                  static_cast<const int32_t*>(indices.data), k, bound, negatives_ok, report);
  }
  return launch(op, state, grid, kThreads, &check_indices<int64_t>,
                static_cast<const int64_t*>(indices.data), k, bound, negatives_ok, report);
}

}  // namespace mt::cuda
