#pragma once
// The kernel calling convention. The runtime has already placed the op, copied every
// input to the op's device, inferred the output's shape and dtype and allocated it; a
// kernel only computes. CPU kernels run on the calling thread; GPU kernels enqueue on the
// stream in `device_state` and return at once.
//
// _EagerConst is the one op whose input is not a tensor: inputs[0].data points to host
// memory holding the constant's elements, which the kernel copies to the output.

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/op_attrs.h"

namespace mt {

// A read-only view of one input tensor's buffer on the op's device.
struct TensorArg {
  const void* data;
  const Shape* shape;
  DType dtype;
};

// A view of the output buffer (already allocated; size = shape elements x dtype size).
struct MutableTensorArg {
  void* data;
  const Shape* shape;
  DType dtype;
};

struct KernelContext {
  absl::Span<const TensorArg> inputs;
  MutableTensorArg output;  // the first output (the only one of most ops)
  const OpAttrs* attrs;
  // Backend state of the op's logical device: null on the CPU; on a GPU the backend's own
  // per-device object (stream, cuBLAS handle), opaque outside */cuda/.
  void* device_state;
  // Every output in order, `output` first; the runtime always sets it.
  absl::Span<const MutableTensorArg> outputs = {};
};

// Computes (or enqueues) one op. Returns a non-OK status for failures a caller can handle
// (a CUDA error, say); shapes and dtypes were validated before the call.
using KernelFn = absl::Status (*)(const KernelContext& ctx);

}  // namespace mt
