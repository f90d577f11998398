// The optimizers (optimizers.h): Keras 3's update_step of each, written with the eager ops.
#include "runtime/optimizers.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/op_def.h"
#include "runtime/autodiff/gradient_tape.h"
#include "runtime/constant.h"
#include "runtime/device_scope.h"
#include "runtime/distribute/replica_hooks.h"
#include "runtime/error.h"
#include "runtime/execute.h"
#include "runtime/ops.h"

namespace mt::optimizers {

void Optimizer::apply_gradients(absl::Span<const GradAndVar> grads_and_vars) {
  if (internal::current_replica_id() >= 0) {
    // Inside MirroredStrategy::run (Note [Mirrored variables]): one step for all replicas.
    internal::merge_apply_gradients(grads_and_vars,
                                    [this](const internal::PerReplicaGradients& replicas) {
                                      for (const auto& pairs : replicas) check(pairs);
                                      for (const auto& pairs : replicas) apply(pairs);
                                      ++iterations_;
                                    });
    return;
  }
  check(grads_and_vars);
  apply(grads_and_vars);
  ++iterations_;
}

void Optimizer::check(absl::Span<const GradAndVar> grads_and_vars) {
  for (const auto& [grad, var] : grads_and_vars) {
    if (!grad.defined()) continue;
    if (!var.defined()) {
      internal::throw_if_error(absl::InvalidArgumentError("[apply_gradients] a variable is empty"));
    }
    if (grad.shape() != var.shape() || grad.dtype() != var.dtype()) {
      internal::throw_if_error(absl::InvalidArgumentError(absl::StrCat(
          "[apply_gradients] the gradient of variable '", var.name(), "' has shape ",
          grad.shape().to_string(), " and dtype ", dtype_name(grad.dtype()), ", the variable ",
          var.shape().to_string(), " and ", dtype_name(var.dtype()))));
    }
  }
}

void Optimizer::apply(absl::Span<const GradAndVar> grads_and_vars) {
  const double lr = learning_rate_.at(iterations_);
  for (const auto& [grad, var] : grads_and_vars) {
    if (!grad.defined()) continue;
    DeviceScope scope(var.device());
    Variable target = var;
    update(grad, target, lr, iterations_);
  }
}

Variable& Optimizer::slot(const Variable& var, int index) {
  Slots& entry = slots_[var.state().get()];
  entry.owner = var.state();
  std::deque<Variable>& slots = entry.variables;
  while (static_cast<int>(slots.size()) <= index) {
    DeviceScope scope(var.device());
    Tensor zeros_value = fill(var.shape().dims(), 0, var.dtype());
    slots.emplace_back(zeros_value, /*trainable=*/false,
                       absl::StrCat(var.name(), "/slot", slots.size()));
  }
  return slots[index];
}

Tensor Optimizer::scalar(const Variable& var, double value) {
  return fill({}, value, var.dtype());  // under the device scope of apply_gradients
}

SGD::SGD(LearningRate learning_rate, double momentum, bool nesterov)
    : Optimizer(std::move(learning_rate)), momentum_(momentum), nesterov_(nesterov) {}

void SGD::update(const Tensor& grad, Variable& var, double lr, int64_t) {
  const Tensor step = mul(grad, scalar(var, lr));
  if (momentum_ == 0) return var.assign_sub(step);
  // Note [Updates in separate statements]: a value read inside the argument of an assignment
  // lives until the assignment returns, which would make it copy instead of writing in place.
  Variable& m = slot(var, 0);
  const Tensor next_m = sub(mul(m, scalar(var, momentum_)), step);
  m.assign(next_m);
  if (nesterov_) {
    const Tensor delta = sub(mul(next_m, scalar(var, momentum_)), step);
    return var.assign_add(delta);
  }
  var.assign_add(next_m);
}

Adam::Adam(LearningRate learning_rate, double beta_1, double beta_2, double epsilon)
    : Optimizer(std::move(learning_rate)), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {}

// One ResourceApplyAdam on the variable's device (Note [Fused Adam] in
// kernels/optimizer_shape.cc): Keras's formulas in one pass, in place.
void Adam::update(const Tensor& grad, Variable& var, double lr, int64_t step) {
  const double t = static_cast<double>(step + 1);
  const Tensor lr_t =
      fill({}, lr * std::sqrt(1 - std::pow(beta_2_, t)) / (1 - std::pow(beta_1_, t)),
           apply_adam_lr_dtype(var.dtype()));
  OpAttrs attrs;
  attrs.beta_1 = beta_1_;
  attrs.beta_2 = beta_2_;
  attrs.epsilon = epsilon_;
  const Tensor* inputs[] = {&internal::writable_value(var), &internal::writable_value(slot(var, 0)),
                            &internal::writable_value(slot(var, 1)), &grad, &lr_t};
  internal::value_or_throw(internal::execute_all(OpId::kResourceApplyAdam, inputs, attrs));
}

AdamW::AdamW(LearningRate learning_rate, double weight_decay, double beta_1, double beta_2,
             double epsilon)
    : Adam(std::move(learning_rate), beta_1, beta_2, epsilon), weight_decay_(weight_decay) {}

void AdamW::update(const Tensor& grad, Variable& var, double lr, int64_t step) {
  const Tensor decay = mul(var, scalar(var, weight_decay_ * lr));
  var.assign_sub(decay);
  Adam::update(grad, var, lr, step);
}

RMSprop::RMSprop(LearningRate learning_rate, double rho, double momentum, double epsilon,
                 bool centered)
    : Optimizer(std::move(learning_rate)),
      rho_(rho),
      momentum_(momentum),
      epsilon_(epsilon),
      centered_(centered) {}

void RMSprop::update(const Tensor& grad, Variable& var, double lr, int64_t) {
  Variable& velocity = slot(var, 0);  // Note [Updates in separate statements]
  Tensor denominator =
      add(mul(velocity, scalar(var, rho_)), mul(square(grad), scalar(var, 1 - rho_)));
  velocity.assign(denominator);
  if (centered_) {
    Variable& average = slot(var, 1);
    const Tensor next = add(mul(average, scalar(var, rho_)), mul(grad, scalar(var, 1 - rho_)));
    average.assign(next);
    denominator = sub(denominator, square(next));
  }
  const Tensor increment =
      div(mul(grad, scalar(var, lr)), sqrt(add(denominator, scalar(var, epsilon_))));
  if (momentum_ <= 0) return var.assign_sub(increment);
  Variable& m = slot(var, 2);
  const Tensor next_m = add(mul(m, scalar(var, momentum_)), increment);
  m.assign(next_m);
  var.assign_sub(next_m);
}

}  // namespace mt::optimizers
