#pragma once
// mt::Function: trace a body once per signature, then replay it (tf.function's C++ form).
// The first call with a new signature runs the body eagerly, placing, logging and running
// each op as usual, while a recorder writes down every kernel and copy; later calls with
// that signature replay the recording: on a GPU as one CUDA graph launch, elsewhere as a
// flat list of kernel calls, with no placement and no allocation but the outputs
// (docs/function.md; Note [Function replay] in runtime/function/concrete_function.h).
//
//   mt::Variable w(mt::ones({4, 4}));
//   mt::optimizers::Adam adam(1e-3);
//   mt::Function step([&](absl::Span<const mt::Tensor> args) -> std::vector<mt::Tensor> {
//     mt::GradientTape tape;
//     mt::Tensor loss = mt::reduce_sum(mt::square(mt::matmul(args[0], w)));
//     adam.apply_gradients({{tape.gradient(loss, w), w}});
//     return {loss};
//   });
//   for (...) step({x});    // traces at the first call, replays after
//
// A signature is each argument's dtype, shape and device (and which arguments are the same
// tensor), the innermost device scope and the runtime's configuration epoch. As in
// TensorFlow, what the body does on the host (its C++ side effects, reading a tensor's
// value) happens at the trace only; variables it reads and writes are read and written at
// every replay, and so are optimizers' step counts and learning rates. A body that uses a
// random op's result, or runs an op on a remote device, cannot replay: it runs eagerly at
// every call, after a warning. Errors throw mt::Error: what the body throws at the trace,
// a kernel's failure or ResourceExhausted at a replay.
//
// A Function holds the variables its body used, but not the optimizers: an optimizer
// whose step it traced must outlive it (its replays advance that optimizer's step count).
//
// Thread safety: a Function may be called from several threads; replays of one signature
// run one at a time.

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "runtime/eager/tensor.h"

namespace mt {
namespace internal {
class FunctionCache;
}  // namespace internal

class Function {
 public:
  using Body = std::function<std::vector<Tensor>(absl::Span<const Tensor> args)>;

  explicit Function(Body body, std::string name = "function");
  ~Function();
  Function(Function&&) noexcept;
  Function& operator=(Function&&) noexcept;

  std::vector<Tensor> operator()(absl::Span<const Tensor> args);
  std::vector<Tensor> operator()(std::initializer_list<Tensor> args) {
    return (*this)(absl::MakeConstSpan(args.begin(), args.size()));
  }

  // How many times the body was traced (TensorFlow's experimental_get_tracing_count).
  int tracing_count() const;
  // How the last signature called replays: "graph" (every kernel inside CUDA graphs),
  // "steps" (a flat list), "eager" (it cannot replay), or "" before the first call.
  std::string replay_kind() const;
  // How many CUDA graphs a replay of the last signature called launches: one for a
  // function on one GPU or on several GPUs that can share a graph (copies and events
  // inside), one per run of kernels between merges inside MirroredStrategy::run.
  int graphs_per_replay() const;
  // The bytes of the arenas of every traced signature.
  int64_t arena_bytes() const;

 private:
  std::unique_ptr<internal::FunctionCache> cache_;
  Body body_;
};

namespace config {
// Makes every mt::Function (and mt.function) run its body eagerly at each call, tracing
// nothing: for debugging (tf.config.run_functions_eagerly).
void run_functions_eagerly(bool run_eagerly);
bool functions_run_eagerly();
}  // namespace config

}  // namespace mt
