#pragma once
// ConcreteFunction: one traced signature of an mt::Function, ready to replay (internal).
//
// Note [Function replay]: create() plans the recording once.
//   - Memory: every value the function makes lives in one arena per device, drawn from the
//     device's pool; values whose lifetimes (first step to last use) do not overlap share
//     bytes (function_plan.h). A replay allocates nothing but the outputs it returns.
//   - Replay: the host actions first (runtime/function/host_values.h), then the arguments
//     and variables are bound, then the steps run in segments: each longest run of kernels
//     on one GPU is one CUDA graph, captured at create() and launched with one call (a
//     function on one GPU is one graph); copies between devices, other devices' kernels and
//     the merges of a replica (Note [Replicas in a function] in function_recorder.h) run
//     between them as a flat list, with no placement and no allocation. The arguments a
//     graph reads are copied into the graph's own buffers first.
//   - Outputs: a caller may keep them across calls, so each is a fresh tensor. An output a
//     flat step makes (and no graph reads) is written there directly: the replay points the
//     step at the fresh tensor instead of the arena. An output a graph makes is copied out
//     of the arena, since a captured graph writes where it was captured.
//   - A graph keeps a reference to the tensor each argument buffer was last copied from.
//     Passed again, that tensor is not copied: a tensor's elements never change, and a
//     variable's buffer that the reference shares is not written in place (Note
//     [Variables write in place]) but copied first.
//   - Variables are bound to their buffer of the moment. One the function writes is first
//     made exclusive (Note [Variables write in place]); a graph captured with another
//     buffer is captured again. A merge may update variables (an optimizer step): they are
//     bound again after it.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/mutex.h"
#include "kernels/kernel.h"
#include "kernels/kernel_registry.h"
#include "runtime/eager/device.h"
#include "runtime/eager/tensor.h"
#include "runtime/function/function_graph.h"

namespace mt::internal {

class ConcreteFunction {
 public:
  // Plans `graph`, allocates its arenas and, where it can, captures its CUDA graph.
  // Errors: ResourceExhausted when an arena does not fit its device's pool.
  // Its arenas are labelled "function '<name>'" in memory snapshots.
  static absl::StatusOr<std::unique_ptr<ConcreteFunction>> create(
      std::unique_ptr<FunctionGraph> graph, const KernelRegistry& registry,
      const std::string& name = "function");
  ~ConcreteFunction();
  ConcreteFunction(const ConcreteFunction&) = delete;
  ConcreteFunction& operator=(const ConcreteFunction&) = delete;

  // Replays with `args` (of the traced signature) and returns the outputs. Errors: a kernel's
  // failure, ResourceExhausted for the outputs.
  absl::StatusOr<std::vector<Tensor>> call(absl::Span<const Tensor> args);

  // Whether every kernel of a replay runs inside CUDA graphs.
  bool uses_graph() const;
  // The number of CUDA graphs a replay launches.
  int num_graphs() const;
  int num_steps() const { return static_cast<int>(graph_->steps.size()); }
  // The placement of the graph's nodes as TensorFlow logs a function's: "args_0: (_Arg):
  // <device>", "MatMul: (MatMul): <device>" (a repeated op "MatMul_1", ...), then
  // "identity_RetVal: (_Retval): <device>" per output.
  std::vector<std::string> placement_lines() const;
  // The bytes of the arenas, all devices together.
  int64_t arena_bytes() const;

 private:
  explicit ConcreteFunction(std::unique_ptr<FunctionGraph> graph);
  // Steps [begin, end): one CUDA graph launched on `gpu` (its nodes on `gpu` and on
  // `others`), or a flat list when `gpu` is null.
  struct Segment {
    size_t begin = 0;
    size_t end = 0;
    Device* gpu = nullptr;
    std::vector<Device*> others;
    void* exec = nullptr;              // the captured graph
    std::vector<void*> captured_with;  // the variables' buffers the graph was captured with
  };
  struct Resolved {
    absl::InlinedVector<TensorArg, 4> args;
    absl::InlinedVector<MutableTensorArg, 2> outs;
  };
  absl::Status plan(const KernelRegistry& registry, const std::string& name);
  absl::Status run_actions();
  // Points the variables' values at their buffers of the moment.
  void bind_variables();
  absl::Status bind(absl::Span<const Tensor> args);
  // Splits steps [begin, end) into segments: runs of kernels on one GPU, or with
  // `across_gpus`, runs of kernels and copies on any GPUs of this process.
  std::vector<Segment> split(size_t begin, size_t end, bool across_gpus) const;
  // Runs steps [begin, end) of a replay with `args`, into `capture` when one is given (a
  // graph segment holds no merge, which alone reads `args`).
  absl::Status run_steps(size_t begin, size_t end, GraphCapture* capture,
                         absl::Span<const Tensor> args);
  absl::Status run_merge(const FunctionStep& step, absl::Span<const Tensor> args);
  absl::Status run_segment(Segment& seg, absl::Span<const Tensor> args);
  absl::Status capture(Segment& seg);
  // Finds the outputs a flat step writes straight into the returned tensor (direct_).
  void plan_direct_outputs();
  // Returns value `id` of a replay with `args` as a tensor the caller may keep: a value of
  // the function's own is copied out, since the next replay overwrites it.
  absl::StatusOr<Tensor> take(ValueId id, absl::Span<const Tensor> args);

  std::unique_ptr<FunctionGraph> graph_;
  std::vector<void*> data_;         // per value: its buffer at the last binding
  std::vector<Tensor> arenas_;      // one per device the function makes values on
  std::vector<Resolved> resolved_;  // per step: its kernel's views
  std::vector<bool> written_;       // per variable: whether a step writes it
  std::vector<KernelFn> fills_;     // per host action: the CPU's Fill for its parameter
  std::vector<ValueId> arg_slot_;   // per argument a graph reads, its buffer's value
  std::vector<Tensor> bound_;       // per argument slot, the tensor copied last
  std::vector<Segment> segments_;
  // Outputs written straight into the tensor returned: the output's position, its value and
  // the value's buffer in the arena (unused while the replay points the step elsewhere).
  struct DirectOutput {
    size_t position;
    ValueId id;
    void* arena;
  };
  std::vector<DirectOutput> direct_;
  Mutex mu_;  // one replay at a time: they share the arenas
};

}  // namespace mt::internal
