#pragma once
// The eager engine (internal): one op, end to end, in one body (execute.cc). Public ops
// (runtime/ops/ops.h) build an OpId, inputs and OpAttrs and call execute(); it validates the
// call against the op's row (kernels/op_table.h), places it, logs it, copies inputs that
// live on other devices, allocates the outputs and runs the kernel. It knows no feature:
// tapes, function recorders and the trace watch it through op observers
// (runtime/eager/op_observer.h).

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/op_attrs.h"
#include "kernels/op_def.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/eager/context.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

// Returns where (op, dtype) runs under the calling thread's device scopes, from the cache
// when it can (Note [Placement cache] in execute.cc).
absl::StatusOr<Placement> place(Context& ctx, const Runtime& rt, OpId op, DType dtype);

// Returns whether the cost policy places `op` now: it is on, no scope is active and `op`
// is not pinned to a variable's device.
bool cost_places(const Context& ctx, OpId op);

// Returns where `op` on `inputs` (keyed by `dtype`, with `outputs` inferred, or null) runs:
// a variable's device for a resource op; the cost policy for an unscoped op while it is on
// (runtime/cost/cost_policy.h; `cost_why`, when given, receives its words); else place(), then
// TensorFlow's small-op rule (placement/small_op_rule.h).
absl::StatusOr<Placement> place_op(Context& ctx, const Runtime& rt, OpId op, DType dtype,
                                   absl::Span<const Tensor* const> inputs,
                                   const OutputMetas* outputs, std::string* cost_why = nullptr);

// Returns the bytes of `outputs`, or when null the largest input's (an estimate).
int64_t output_bytes(const OutputMetas* outputs, absl::Span<const Tensor* const> inputs);

// Runs `op` on `inputs` and returns its first output (the only one of most ops). Errors:
// InvalidArgument (bad inputs, shapes, dtypes, attributes), NotFound (unknown device),
// ResourceExhausted (OOM), or the kernel's failure.
absl::StatusOr<Tensor> execute(OpId op, absl::Span<const Tensor* const> inputs,
                               const OpAttrs& attrs);

// The outputs of an op with several (Split, SparseSoftmaxCrossEntropyWithLogits).
using Tensors = absl::InlinedVector<Tensor, 2>;

// Runs `op` on `inputs` and returns every output, in order. Errors as execute().
absl::StatusOr<Tensors> execute_all(OpId op, absl::Span<const Tensor* const> inputs,
                                    const OpAttrs& attrs);

// Runs a source op, one with no tensor input: _EagerConst copies `host_data` (elements of
// `dtype` in row-major order) to its device; Fill ignores `host_data` and uses attrs.value.
absl::StatusOr<Tensor> execute_source(OpId op, DType dtype, const Shape& shape,
                                      const void* host_data, const OpAttrs& attrs);

}  // namespace mt::internal
