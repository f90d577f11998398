#pragma once
// Process-wide switches that change how kernels compute (internal; mt::config sets them).

namespace mt::internal {

// TensorFloat-32 for float32 matmul on GPUs: off by default (exact fp32), on when
// mt::config::enable_tensor_float_32_execution(true) was called.
bool tf32_enabled();
void set_tf32_enabled(bool enable);

}  // namespace mt::internal
