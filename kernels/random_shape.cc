// Shape function of the random ops: RandomUniform, RandomUniformInt, RandomStandardNormal,
// TruncatedNormal and their stateless V2 forms.
//
// Note [Random ops]
// A random op is a source op: its shape and dtype come with the call and its attrs say where
// its Philox stream starts (attrs.philox), fixed on the host before the op is placed or run:
//   - stateless ops: stateless_philox_seed of the call's two seeds;
//   - stateful ops: RandomSeedState::reserve (kernels/random_seed.h) of the runtime, at the
//     call (runtime/ops/random_ops.cc), for the stream (op, dtype, device), so that the same calls
//     give the same numbers on every device and a remote device gets the stream in the attrs.
// The kernels fill the standard form (cpu::random_fill, cuda::launch_random_fill), then
// scale and shift float outputs in place as TensorFlow's Python does after its op: a
// multiply, then an add, each rounded to the output dtype, never fused (random_fill.cc and
// random_op_kernels.cc build with -ffp-contract=off; CUDA uses __fmul_rn and __fadd_rn).
// One op rather than TensorFlow's three keeps its bits and saves two passes over memory;
// kernels/random_ops.h says which steps are skipped, and why that changes no bit.
// Integer ops draw minval + bits % (maxval - minval) in the fill itself.
#include <limits>

#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// Returns an error unless the integer bounds fit `dtype` and minval < maxval.
absl::Status check_int_bounds(OpId op, DType dtype, const OpAttrs& attrs) {
  const int64_t lo = attrs.minval.i, hi = attrs.maxval.i;
  if (dtype == DType::kInt32) {
    for (int64_t v : {lo, hi}) {
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
        return op_error(op, "bound ", v, " is out of range for int32");
      }
    }
  }
  if (lo >= hi) return op_error(op, "Need minval < maxval, got ", lo, " >= ", hi);
  return absl::OkStatus();
}

}  // namespace

absl::Status infer_random(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                          OutputMetas* out) {
  const TensorMeta& meta = inputs[0];
  MT_RETURN_IF_ERROR(check_dtype(op, meta.dtype));
  if (op == OpId::kRandomUniformInt || op == OpId::kStatelessRandomUniformIntV2) {
    MT_RETURN_IF_ERROR(check_int_bounds(op, meta.dtype, attrs));
  }
  out->push_back(OutputMeta{*meta.shape, meta.dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
