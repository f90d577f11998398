#include "runtime/function/host_values.h"

#include <utility>

#include "runtime/function/function_recorder.h"
#include "runtime/ops/constant.h"

namespace mt::internal {

Tensor host_scalar(DType dtype, std::function<double()> value) {
  Tensor t = fill({}, value(), dtype);
  if (FunctionRecorder* recorder = active_recorder())
    recorder->add_host_scalar(t, std::move(value));
  return t;
}

void host_step(std::function<void()> step) {
  step();
  if (FunctionRecorder* recorder = active_recorder()) recorder->add_host_step(std::move(step));
}

}  // namespace mt::internal
