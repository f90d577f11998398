#pragma once
// Op definitions: for each op, how many inputs it takes and what its outputs are. The
// runtime calls infer_outputs before placing and allocating ("validate, then place"), so
// the placer only sees valid calls and every kernel receives validated inputs. Each op's
// arity, dtypes and shape function are columns of its row in kernels/op_table.h.
//
// Errors are InvalidArgument and start with the TensorFlow op name:
//   "[MatMul] inner dimensions differ: (2, 3) vs (4, 2)"
//   "[AddV2] dtypes differ: float32 vs int32"
//   "[AddV2] shapes cannot be broadcast: (2, 3) vs (4,)"
//
// Note [Dtype support]: each op accepts the dtypes of its row's dtypes column (op_dtypes);
// any other dtype is an InvalidArgument here, before placement ("[Exp] dtype int32 is not
// supported; expected one of float32, float64, bfloat16, float16"). The CPU has a kernel
// for every accepted dtype (register_cpu_kernels checks it), so the KernelRegistry only
// tells the placer which devices besides the CPU can run a call.
//
// Inputs of each op, as passed to infer_output and to the kernel:
//   _EagerConst, Identity, Cast, unary ops, reductions: one tensor.
//   Fill: one TensorMeta that is the output itself: its shape and dtype are the output's
//     (the kernel gets it as a TensorArg with data == nullptr). The value is attrs.value:
//     `f` for floating dtypes, `i` for integers (int32 checks its range), `b` for bool.
//   MatMul, AddV2, Sub, Mul, RealDiv: two tensors. AddN: one or more of one shape.
//   ResourceApplyAdam: var, m, v, grad and the step's learning rate lr_t, a 0-d tensor of
//     apply_adam_lr_dtype(var's dtype) (Note [Fused Adam] in kernels/optimizer_shape.cc).
//
// Cast converts as static_cast, except that a float out of an integer's range saturates
// and NaN becomes 0 (static_cast is undefined there); to bool is x != 0.
//
// Note [Reductions]: Sum, Mean, Max, Min, Prod, Any and All reduce attrs.axes (each in
// [-rank, rank), none twice; empty reduces nothing) or, with attrs.reduce_all, every
// dimension; keep_dims leaves reduced dimensions as 1. Over zero elements, Sum gives 0, Max
// the type's lowest value (-inf for floats), Min its highest (+inf), Prod 1, Any false, All
// true, and Mean 0/0: NaN for floats and, by our choice, 0 for integers (where TensorFlow
// divides by zero). Integer Mean truncates toward zero, as TensorFlow; integer Prod wraps.
// A NaN wins in Max and Min, as in TensorFlow.

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"

namespace mt {

// The shape and dtype of one input, as seen by shape inference.
struct TensorMeta {
  const Shape* shape;
  DType dtype;
};

struct OutputMeta {
  Shape shape;
  DType dtype;
};

// The outputs of one call, in order: one for most ops.
using OutputMetas = absl::InlinedVector<OutputMeta, 1>;

// Returns the dtype of ResourceApplyAdam's lr_t for a variable of `var_dtype`: its own, and
// float32 for bfloat16 and float16, which would round the learning rate.
constexpr DType apply_adam_lr_dtype(DType var_dtype) {
  return dtype_kind(var_dtype) == DTypeKind::kHalf ? DType::kFloat32 : var_dtype;
}

// Validates the arity, dtypes, shapes and attributes of a call of `op` and appends its
// outputs' shapes and dtypes to `*out` (left unchanged on error). Thread-safe; allocates
// nothing for one output of rank up to 6.
absl::Status infer_outputs(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                           OutputMetas* out);

// infer_outputs for an op's first output (the only one of most ops).
absl::StatusOr<OutputMeta> infer_output(OpId op, absl::Span<const TensorMeta> inputs,
                                        const OpAttrs& attrs);

}  // namespace mt
