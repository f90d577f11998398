#pragma once
// Inline only.
// Internal to runtime/autodiff/: small helpers the gradient functions share.

#include "core/dtype.h"
#include "runtime/eager/tensor.h"
#include "runtime/ops/constant.h"

namespace mt::internal {

// Returns a scalar of `like`'s dtype holding `value`, on the current scope's device.
inline Tensor scalar_like(const Tensor& like, double value) {
  return fill({}, value, like.dtype());
}

}  // namespace mt::internal
