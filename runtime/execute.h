#pragma once
// The eager engine (internal): one op, end to end. Public ops (runtime/ops.h) build an
// OpId, inputs and OpAttrs and call execute(); it places the op, logs it, copies inputs
// that live on other devices, infers and allocates the output and runs the kernel.

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/op_attrs.h"
#include "kernels/op_def.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/context.h"
#include "runtime/tensor.h"

namespace mt::internal {

// Returns where (op, dtype) runs under the calling thread's device scopes, from the cache
// when it can (Note [Placement cache] in execute.cc).
absl::StatusOr<Placement> place(Context& ctx, const Runtime& rt, OpId op, DType dtype);

// Runs `op` on `inputs`. Errors: InvalidArgument (bad inputs, shapes, dtypes), NotFound
// (unknown device), ResourceExhausted (OOM), or the kernel's failure.
absl::StatusOr<Tensor> execute(OpId op, absl::Span<const Tensor* const> inputs,
                               const OpAttrs& attrs);

// Runs a source op, one with no tensor input: _EagerConst copies `host_data` (elements of
// `dtype` in row-major order) to its device; Fill ignores `host_data` and uses attrs.value.
absl::StatusOr<Tensor> execute_source(OpId op, DType dtype, const Shape& shape,
                                      const void* host_data, const OpAttrs& attrs);

// The steps of execute(), shared with the traced path (runtime/trace_execute.cc).
// Returns a copy of `t` on `device` (another device than its own).
absl::StatusOr<Tensor> copy_to(const Tensor& t, Device& device);
// Allocates the output on `device` and runs `kernel` there on `args`.
absl::StatusOr<Tensor> run_kernel(Device& device, KernelFn kernel, OutputMeta out,
                                  absl::Span<const TensorArg> args, const OpAttrs& attrs);

// execute() and execute_source() while a trace records: the same steps, each timed and
// recorded (Note [Recording off costs one load] in runtime/trace_recorder.h).
absl::StatusOr<Tensor> execute_traced(OpId op, absl::Span<const Tensor* const> inputs,
                                      const OpAttrs& attrs);
absl::StatusOr<Tensor> execute_source_traced(OpId op, DType dtype, const Shape& shape,
                                             const void* host_data, const OpAttrs& attrs);

}  // namespace mt::internal
