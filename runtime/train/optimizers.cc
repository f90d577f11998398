// The optimizers (optimizers.h): Keras 3's update_step of each, written with the eager ops.
#include "runtime/train/optimizers.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "kernels/op_def.h"
#include "runtime/autodiff/gradient_tape.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/function/host_values.h"
#include "runtime/ops/constant.h"
#include "runtime/ops/ops.h"
#include "runtime/strategy/replica_hooks.h"

namespace mt::optimizers {

// Note [Host values of a step]: an mt::Function replays the kernels of a traced step
// without running this code again, so nothing that changes from step to step may be baked
// into a kernel as an attribute or a constant made here. The learning rate (a schedule's
// value at the step), AdamW's decay and Adam's bias-corrected rate reach the kernels as 0-d
// tensors of internal::host_scalar, and ++iterations_ runs through internal::host_step; a
// function repeats both, in trace order, before each replay (runtime/function/host_values.h).
// Their closures read iterations_ and learning_rate_ when they run, never a copy taken at
// the call. Constants (momentum, rho, epsilon, the betas) stay plain scalars and attributes.

void Optimizer::apply_gradients(absl::Span<const GradAndVar> grads_and_vars) {
  if (internal::current_replica_id() >= 0) {
    // Inside MirroredStrategy::run (Note [Mirrored variables]): one step for all replicas.
    internal::merge_apply_gradients(grads_and_vars,
                                    [this](const internal::PerReplicaGradients& replicas) {
                                      for (const auto& pairs : replicas) check(pairs);
                                      for (const auto& pairs : replicas) apply(pairs);
                                      internal::host_step([this] { ++iterations_; });
                                    });
    return;
  }
  check(grads_and_vars);
  apply(grads_and_vars);
  internal::host_step([this] { ++iterations_; });
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
  StepScalars scalars(*this);
  for (const auto& [grad, var] : grads_and_vars) {
    if (!grad.defined()) continue;
    DeviceScope scope(var.device());
    Variable target = var;
    update(grad, target, scalars);
  }
}

std::vector<Variable> Optimizer::slot_variables(const Variable& var) const {
  auto found = slots_.find(var.state().get());
  if (found == slots_.end()) return {};
  return {found->second.variables.begin(), found->second.variables.end()};
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

Tensor Optimizer::StepScalars::get(const Variable& var, DType dtype, absl::string_view name,
                                   Value value) {
  Tensor& made = made_[absl::StrCat(name, " ", dtype_name(dtype), " ", var.device())];
  if (!made.defined()) {
    made = internal::host_scalar(dtype, [optimizer = optimizer_, value = std::move(value)] {
      const int64_t step = optimizer->iterations_;  // when it runs (Note [Host values of a step])
      return value(step, optimizer->learning_rate_.at(step));
    });
  }
  return made;
}

Tensor Optimizer::StepScalars::learning_rate(const Variable& var) {
  return get(var, var.dtype(), "lr", [](int64_t, double lr) { return lr; });
}

SGD::SGD(LearningRate learning_rate, double momentum, bool nesterov)
    : Optimizer(std::move(learning_rate)), momentum_(momentum), nesterov_(nesterov) {}

void SGD::update(const Tensor& grad, Variable& var, StepScalars& scalars) {
  const Tensor step = mul(grad, scalars.learning_rate(var));
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
// kernels/optimizer_shape.cc): Keras's formulas in one pass, in place. Its lr_t is one scalar
// per device and dtype for all the variables of the step.
void Adam::update(const Tensor& grad, Variable& var, StepScalars& scalars) {
  const Tensor lr_t = scalars.get(
      var, apply_adam_lr_dtype(var.dtype()), "adam_lr_t", [this](int64_t step, double lr) {
        const double t = static_cast<double>(step + 1);
        return lr * std::sqrt(1 - std::pow(beta_2_, t)) / (1 - std::pow(beta_1_, t));
      });
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

void AdamW::update(const Tensor& grad, Variable& var, StepScalars& scalars) {
  const Tensor rate = scalars.get(var, var.dtype(), "weight_decay*lr",
                                  [this](int64_t, double lr) { return weight_decay_ * lr; });
  const Tensor decay = mul(var, rate);
  var.assign_sub(decay);
  Adam::update(grad, var, scalars);
}

RMSprop::RMSprop(LearningRate learning_rate, double rho, double momentum, double epsilon,
                 bool centered)
    : Optimizer(std::move(learning_rate)),
      rho_(rho),
      momentum_(momentum),
      epsilon_(epsilon),
      centered_(centered) {}

void RMSprop::update(const Tensor& grad, Variable& var, StepScalars& scalars) {
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
      div(mul(grad, scalars.learning_rate(var)), sqrt(add(denominator, scalar(var, epsilon_))));
  if (momentum_ <= 0) return var.assign_sub(increment);
  Variable& m = slot(var, 2);
  const Tensor next_m = add(mul(m, scalar(var, momentum_)), increment);
  m.assign(next_m);
  var.assign_sub(next_m);
}

}  // namespace mt::optimizers
