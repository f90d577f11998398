#pragma once
// GradientTape: reverse-mode automatic differentiation of eager ops, as tf.GradientTape.
// While a tape is alive on a thread it records every differentiable op (a row of
// kernels/op_table.h flagged kGrad) that reads a tensor it watches, directly or through
// earlier recorded ops; gradient() then runs each recorded op's gradient (its row's
// GradFn, runtime/autodiff/grad_fns.h) in reverse order.
//
//   mt::Tensor x = mt::constant(3.f);
//   mt::GradientTape tape;
//   tape.watch(x);
//   mt::Tensor y = x * x;
//   std::vector<mt::Tensor> g = tape.gradient(y, {x});   // {6}
//
// Trainable variables read while a tape records are watched automatically. A source that
// the target does not depend on gets an empty (undefined) Tensor, TensorFlow's None.
// Gradient ops run on the device of the forward op they differentiate. Tapes nest: a tape
// alive while another computes a gradient records the gradient's ops (higher order).
// A tape is used on the thread that created it. Errors throw mt::Error.

#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/variable.h"

namespace mt {

namespace internal {
class Tape;
}

class GradientTape {
 public:
  // Starts recording on the calling thread. A non-persistent tape computes one gradient.
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  // Stops recording and releases everything the tape holds.
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Watches `t` (a floating-point tensor; others are ignored, as in TensorFlow).
  void watch(const Tensor& t);
  void watch(const Variable& v);

  // Returns d(target)/d(source) for each source: summed over target's elements, weighted by
  // `output_gradient` when given (target's shape and dtype). FailedPrecondition for a second
  // call on a non-persistent tape.
  std::vector<Tensor> gradient(const Tensor& target, absl::Span<const Tensor> sources,
                               const Tensor& output_gradient = Tensor());
  std::vector<Tensor> gradient(const Tensor& target, absl::Span<const Variable* const> sources,
                               const Tensor& output_gradient = Tensor());
  // Both kinds of sources at once: the tensors' gradients, then the variables'.
  std::vector<Tensor> gradient(const Tensor& target, absl::Span<const Tensor> tensors,
                               absl::Span<const Variable* const> variables,
                               const Tensor& output_gradient);

  // Stops recording for good (the end of Python's `with` block); gradient() still works.
  void stop();

  // Pauses recording on this tape while the returned guard lives (tape.stop_recording()).
  class Pause {
   public:
    explicit Pause(internal::Tape* tape);
    Pause(Pause&& other) noexcept : tape_(other.tape_) { other.tape_ = nullptr; }
    ~Pause() { end(); }
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;
    // Resumes recording now (idempotent).
    void end();

   private:
    internal::Tape* tape_;
  };
  Pause stop_recording() { return Pause(tape_.get()); }

  // Returns the variables this tape watches, in the order they were first watched.
  std::vector<Variable> watched_variables() const;

 private:
  std::unique_ptr<internal::Tape> tape_;
};

// Returns `t` unchanged, as a tensor no tape differentiates through (StopGradient).
Tensor stop_gradient(const Tensor& t);

}  // namespace mt
