#pragma once
// ConcreteFunction: one traced signature of an mt::Function, ready to replay (internal).
//
// Note [Function replay]: create() plans the recording once.
//   - Memory: every value the function makes lives in one arena per device, drawn from the
//     device's pool; values whose lifetimes (first step to last use) do not overlap share
//     bytes (function_plan.h). A replay allocates nothing but the outputs it returns.
//   - Replay: the host actions first (runtime/function/host_values.h), then the arguments
//     and variables are bound, then the steps run: on a GPU, when every step runs on that
//     one GPU, as one CUDA graph captured at create() and launched with one call, the
//     arguments copied into the graph's own buffers first; otherwise as a flat list of
//     kernel calls and copies, with no placement and no allocation. Outputs the function
//     made are copied out into fresh tensors, so a caller may keep them across calls.
//   - A graph keeps a reference to the tensor each argument buffer was last copied from.
//     Passed again, that tensor is not copied: a tensor's elements never change, and a
//     variable's buffer that the reference shares is not written in place (Note
//     [Variables write in place]) but copied first.
//   - Variables are bound to their buffer of the moment. One the function writes is first
//     made exclusive (Note [Variables write in place]); a graph captured with another
//     buffer is captured again.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/mutex.h"
#include "kernels/kernel.h"
#include "kernels/kernel_registry.h"
#include "runtime/function/function_graph.h"
#include "runtime/tensor.h"

namespace mt::internal {

class ConcreteFunction {
 public:
  // Plans `graph`, allocates its arenas and, where it can, captures its CUDA graph.
  // Errors: ResourceExhausted when an arena does not fit its device's pool.
  static absl::StatusOr<std::unique_ptr<ConcreteFunction>> create(
      std::unique_ptr<FunctionGraph> graph, const KernelRegistry& registry);
  ~ConcreteFunction();
  ConcreteFunction(const ConcreteFunction&) = delete;
  ConcreteFunction& operator=(const ConcreteFunction&) = delete;

  // Replays with `args` (of the traced signature) and returns the outputs. Errors: a kernel's
  // failure, ResourceExhausted for the outputs.
  absl::StatusOr<std::vector<Tensor>> call(absl::Span<const Tensor> args);

  // Whether a replay is one CUDA graph launch.
  bool uses_graph() const { return graph_device_ != nullptr; }
  int num_steps() const { return static_cast<int>(graph_->steps.size()); }
  // The placement of the graph's nodes as TensorFlow logs a function's: "args_0: (_Arg):
  // <device>", "MatMul: (MatMul): <device>" (a repeated op "MatMul_1", ...), then
  // "identity_RetVal: (_Retval): <device>" per output.
  std::vector<std::string> placement_lines() const;
  // The bytes of the arenas, all devices together.
  int64_t arena_bytes() const;

 private:
  explicit ConcreteFunction(std::unique_ptr<FunctionGraph> graph);
  struct Resolved {
    absl::InlinedVector<TensorArg, 4> args;
    absl::InlinedVector<MutableTensorArg, 2> outs;
  };
  absl::Status plan(const KernelRegistry& registry);
  absl::Status run_actions();
  // Points the variables' values at their buffers of the moment.
  void bind_variables();
  absl::Status bind(absl::Span<const Tensor> args);
  absl::Status run_steps(void* graph_state);
  absl::Status capture();
  absl::StatusOr<std::vector<Tensor>> outputs(absl::Span<const Tensor> args);

  std::unique_ptr<FunctionGraph> graph_;
  std::vector<void*> data_;           // per value: its buffer at the last binding
  std::vector<Tensor> arenas_;        // one per device the function makes values on
  std::vector<Resolved> resolved_;    // per step: its kernel's views
  std::vector<bool> written_;         // per variable: whether a step writes it
  std::vector<KernelFn> fills_;       // per host action: the CPU's Fill for its parameter
  std::vector<ValueId> arg_slot_;     // graph replay: per argument, its buffer's value
  std::vector<Tensor> bound_;         // graph replay: per argument, the tensor copied last
  Device* graph_device_ = nullptr;    // set when the replay is one CUDA graph
  void* exec_ = nullptr;              // the captured graph
  std::vector<void*> captured_with_;  // the variables' buffers the graph was captured with
  Mutex mu_;                          // one replay at a time: they share the arenas
};

}  // namespace mt::internal
