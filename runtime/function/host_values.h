#pragma once
// Host values inside a function (internal): what library code computed on the host (an
// optimizer's step count, its learning rate at that step, Adam's bias correction) must be
// computed again at each replay of an mt::Function, which does not run the library code
// again. Eagerly both calls below just run; while a function traces (runtime/function/
// function_recorder.h) they also register themselves with the function, which repeats them
// in order before each replay.
//
//   host_step([this] { ++iterations_; });                         // runs now and per replay
//   Tensor lr = host_scalar(DType::kFloat32, [this] { return rate(iterations_); });

#include <functional>

#include "core/dtype.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

// Returns a 0-d tensor of `dtype` holding value() (a Fill on the device the current scope
// places it on). A function that traces this call writes value() into the same tensor again
// before each replay.
Tensor host_scalar(DType dtype, std::function<double()> value);

// Runs `step` now; a function that traces this call runs it again before each replay, in
// the order of the trace.
void host_step(std::function<void()> step);

}  // namespace mt::internal
