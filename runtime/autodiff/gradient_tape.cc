// GradientTape (gradient_tape.h) over the recording tape of tape.h.
//
// Note [Gradients on the forward device]: each recorded op's gradient runs under a device
// scope naming the device of the op's first output, so gradient ops run where the forward
// op ran (as PyTorch's autograd and TensorFlow 1's colocate_gradients_with_ops do; TF 2's
// eager tape places them by the usual rules), with the usual copies when an input
// gradient lives elsewhere.
#include "runtime/autodiff/gradient_tape.h"

#include "runtime/autodiff/tape.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/train/variable.h"

namespace mt {

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : tape_(std::make_unique<internal::Tape>(persistent, watch_accessed_variables)) {}

GradientTape::~GradientTape() = default;

void GradientTape::watch(const Tensor& t) { tape_->watch(t); }

void GradientTape::watch(const Variable& v) {
  if (!v.defined())
    internal::throw_if_error(
        absl::FailedPreconditionError("[GradientTape] watch: the variable is empty"));
  tape_->watch_variable(v.state(), v.state()->value);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, absl::Span<const Tensor> sources,
                                           const Tensor& output_gradient) {
  return tape_->gradient(target, sources, {}, output_gradient);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target,
                                           absl::Span<const Variable* const> sources,
                                           const Tensor& output_gradient) {
  return gradient(target, {}, sources, output_gradient);
}

void GradientTape::stop() { tape_->detach(); }

std::vector<Tensor> GradientTape::gradient(const Tensor& target, absl::Span<const Tensor> tensors,
                                           absl::Span<const Variable* const> sources,
                                           const Tensor& output_gradient) {
  std::vector<const internal::VariableState*> states;
  for (const Variable* v : sources) {
    if (v == nullptr || !v->defined()) {
      internal::throw_if_error(
          absl::InvalidArgumentError("[GradientTape] gradient: a source variable is empty"));
    }
    states.push_back(v->state().get());
  }
  return tape_->gradient(target, tensors, states, output_gradient);
}

GradientTape::Pause::Pause(internal::Tape* tape) : tape_(tape) { tape_->pause(); }
void GradientTape::Pause::end() {
  if (tape_ != nullptr) tape_->resume();
  tape_ = nullptr;
}

std::vector<Variable> GradientTape::watched_variables() const {
  std::vector<Variable> out;
  for (const auto& state : tape_->watched_variables()) out.push_back(Variable::from_state(state));
  return out;
}

Tensor stop_gradient(const Tensor& t) {
  const Tensor* input = &t;
  return internal::value_or_throw(
      internal::execute(OpId::kStopGradient, absl::MakeConstSpan(&input, 1), {}));
}

}  // namespace mt
