#pragma once
// Declarations only: function_recorder.cc writes it, concrete_function.cc reads it.
// FunctionGraph: one traced signature of an mt::Function as the recorder leaves it
// (internal): the buffers the body's kernels touched (values), the kernels and copies in
// the order they ran (steps), and the host work to repeat before each replay (actions).
// function_plan.h decides where each value lives; concrete_function.h replays.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/kernel.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

class Device;
struct VariableState;

using ValueId = int32_t;

// Note [Values in a recording] in function_recorder.h.
enum class ValueKind : uint8_t {
  kArg,       // index: the argument
  kVariable,  // index: FunctionGraph::variables
  kMade,      // a kernel's output or a copy; lives in its device's arena
  kConstant,  // index: FunctionGraph::constants
  kParam,     // a constant rewritten before each replay; index: FunctionGraph::constants
};

struct FunctionValue {
  ValueKind kind;
  int index = -1;
  DType dtype;
  Shape shape;
  Device* device = nullptr;
  size_t bytes = 0;
};

// A replica's meeting with the other replicas of a MirroredStrategy::run (an all_reduce,
// an optimizer step), which a replay does again with the values it made: it hands over
// `exports` and returns the values it got back, or the merge's error. The merge itself runs
// eagerly (Note [Replicas in a function] in function_recorder.h).
using MergeFn = std::function<absl::StatusOr<std::vector<Tensor>>(absl::Span<const Tensor>)>;

struct FunctionStep {
  enum class Kind : uint8_t { kKernel, kCopy, kMerge };
  Kind kind = Kind::kKernel;
  OpId op{};
  KernelFn kernel = nullptr;
  Device* device = nullptr;  // where the kernel runs; a copy's destination; none for a merge
  OpAttrs attrs;
  absl::InlinedVector<ValueId, 4> inputs;   // a copy's source
  absl::InlinedVector<ValueId, 2> outputs;  // a copy's destination
  bool writes_inputs = false;               // a kResource op that writes its variables
  MergeFn merge;                            // kMerge: inputs exported, outputs imported
};

// Host work repeated before each replay, in trace order: a parameter to compute again
// (constant index `param`) or a step to run.
struct HostAction {
  int param = -1;
  std::function<double()> compute;
  std::function<void()> step;
};

struct FunctionGraph {
  int num_args = 0;
  std::vector<std::string> arg_names;  // for the placement log; empty: args_0, args_1, ...
  std::vector<FunctionValue> values;
  std::vector<FunctionStep> steps;
  std::vector<Tensor> constants;
  std::vector<std::shared_ptr<VariableState>> variables;
  std::vector<HostAction> actions;
  std::vector<ValueId> outputs;
};

}  // namespace mt::internal
