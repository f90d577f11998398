#include "runtime/function/host_values.h"

#include <utility>

#include "runtime/constant.h"

namespace mt::internal {

Tensor host_scalar(DType dtype, std::function<double()> value) { return fill({}, value(), dtype); }

void host_step(std::function<void()> step) { step(); }

}  // namespace mt::internal
