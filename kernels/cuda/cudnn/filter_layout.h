#pragma once
// The filter layouts cuDNN takes (internal to kernels/cuda/cudnn/). minitensor's filters are
// HWIO, [R, S, C, K] as TensorFlow's; cuDNN's are KRSC (with NHWC data) or KCRS (NCHW).
// Both are the same array with its axes reversed when HWIO is viewed as three axes
// ([R S C, 1, K] and [R S, C, K]), and the filter gradient goes back the same way.

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/op_id.h"

namespace mt::cuda {

struct GpuState;

// Enqueues out[k][j][i] = in[i][j][k] for `in` of shape [a, b, c] with elements of
// `element_bytes` (2, 4 or 8) on `state`'s stream; `op` names a launch failure.
absl::Status reverse_axes(OpId op, const GpuState& state, int element_bytes, const void* in,
                          void* out, int64_t a, int64_t b, int64_t c);

}  // namespace mt::cuda
