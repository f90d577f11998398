#pragma once
// Op definitions: for each op, how many inputs it takes and what its output is. The
// runtime calls infer_output before placing and allocating, so every kernel receives
// validated inputs.
//
// Errors are InvalidArgument and start with the TensorFlow op name:
//   "[MatMul] inner dimensions differ: (2, 3) vs (4, 2)"
//   "[AddV2] dtypes differ: float32 vs int32"
//   "[AddV2] shapes cannot be broadcast: (2, 3) vs (4,)"

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

// Validates the arity, dtypes, shapes and attributes of a call of `op` and returns its
// output's shape and dtype. Thread-safe; allocates nothing for ranks up to 6.
absl::StatusOr<OutputMeta> infer_output(OpId op, absl::Span<const TensorMeta> inputs,
                                        const OpAttrs& attrs);

}  // namespace mt
