#pragma once
// The optimizers of tf.keras.optimizers, with Keras 3's update formulas and defaults: SGD
// (momentum, Nesterov), Adam, AdamW and RMSprop. apply_gradients updates each variable in
// place on its own device (AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp there;
// Adam and AdamW's step is one fused op, ResourceApplyAdam), keeping its slot variables
// (momentum, moments, velocity) beside it, created on first use.
//
//   mt::optimizers::Adam adam(1e-3);
//   adam.apply_gradients({{g0, w0}, {g1, w1}});   // one step; iterations() becomes 1
//
// A learning rate is a number or a schedule, a function of the step (iterations(), from 0),
// read by closures an mt::Function's replay runs again (Note [Host values of a step]).
// Errors throw mt::Error: InvalidArgument when a gradient's shape or dtype is not its
// variable's.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/variable.h"

namespace mt::optimizers {

class LearningRate {
 public:
  LearningRate(double value) : fn_([value](int64_t) { return value; }) {}  // NOLINT
  template <typename Fn, typename = std::enable_if_t<std::is_invocable_r_v<double, Fn, int64_t>>>
  LearningRate(Fn schedule) : fn_(std::move(schedule)) {}  // NOLINT: a schedule of the step
  double at(int64_t step) const { return fn_(step); }

 private:
  std::function<double(int64_t)> fn_;
};

using GradAndVar = std::pair<Tensor, Variable>;

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Applies one step to every pair whose gradient is defined (an empty gradient, a source
  // the loss does not depend on, leaves its variable alone) and counts it in iterations().
  // Inside MirroredStrategy::run, the replicas' gradients are summed first and every copy
  // of each (mirrored) variable is updated, in one step.
  void apply_gradients(absl::Span<const GradAndVar> grads_and_vars);
  void apply_gradients(std::initializer_list<GradAndVar> grads_and_vars) {
    apply_gradients(absl::MakeConstSpan(grads_and_vars.begin(), grads_and_vars.size()));
  }

  int64_t iterations() const { return iterations_; }
  // Returns the learning rate of the next step.
  double learning_rate() const { return learning_rate_.at(iterations_); }
  // Replaces the learning rate (Keras's `optimizer.learning_rate = x`). The next step uses
  // it, and so does every later replay of an mt::Function that applies this optimizer: the
  // step's scalars read the rate when they run (Note [Host values of a step]).
  void set_learning_rate(LearningRate learning_rate) { learning_rate_ = std::move(learning_rate); }

  // Internal (checkpoints): returns the slot variables made for `var` so far, by index.
  std::vector<Variable> slot_variables(const Variable& var) const;
  // Internal (checkpoints): returns slot `index` of `var`, made (zeros) when missing.
  Variable& make_slot(const Variable& var, int index) { return slot(var, index); }
  // Internal (checkpoints): sets the step count, as a restore does.
  void set_iterations(int64_t iterations) { iterations_ = iterations; }

 protected:
  class StepScalars;
  explicit Optimizer(LearningRate learning_rate) : learning_rate_(std::move(learning_rate)) {}
  // Updates `var` with `grad` in one step, under `var`'s device scope; whatever depends on
  // the step or its learning rate comes from `scalars`.
  virtual void update(const Tensor& grad, Variable& var, StepScalars& scalars) = 0;
  // Returns slot `index` of `var`: a variable of its shape and dtype on its device, zeros
  // at first.
  Variable& slot(const Variable& var, int index);
  // Returns a scalar of `var`'s dtype on its device.
  static Tensor scalar(const Variable& var, double value);

 private:
  // Throws InvalidArgument for a pair whose gradient does not fit its variable.
  static void check(absl::Span<const GradAndVar> grads_and_vars);
  // Updates each variable with a defined gradient, at step iterations_.
  void apply(absl::Span<const GradAndVar> grads_and_vars);

  LearningRate learning_rate_;
  int64_t iterations_ = 0;
  struct Slots {
    std::shared_ptr<internal::VariableState> owner;  // keeps the key's address unique
    std::deque<Variable> variables;                  // stable references as it grows
  };
  absl::flat_hash_map<const internal::VariableState*, Slots> slots_;
};

// The 0-d tensors that carry one apply()'s host-computed values to the kernels, one per
// value, device and dtype (Note [Host values of a step] in optimizers.cc). Not thread-safe.
class Optimizer::StepScalars {
 public:
  // A value computed in double from the step (iterations(), from 0) and its learning rate.
  using Value = std::function<double(int64_t step, double lr)>;
  explicit StepScalars(const Optimizer& optimizer) : optimizer_(&optimizer) {}

  // Returns the scalar `name` of `dtype` on `var`'s device (the current scope's), holding
  // value(step, lr) of the step being applied: made with internal::host_scalar by the first
  // call for that name, device and dtype, returned again by later ones.
  Tensor get(const Variable& var, DType dtype, absl::string_view name, Value value);
  // Returns the learning rate as a scalar of `var`'s dtype on its device.
  Tensor learning_rate(const Variable& var);

 private:
  const Optimizer* optimizer_;
  absl::flat_hash_map<std::string, Tensor> made_;
};

class SGD : public Optimizer {
 public:
  explicit SGD(LearningRate learning_rate = 0.01, double momentum = 0, bool nesterov = false);

 private:
  void update(const Tensor& grad, Variable& var, StepScalars& scalars) override;
  double momentum_;
  bool nesterov_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(LearningRate learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7);

 protected:
  void update(const Tensor& grad, Variable& var, StepScalars& scalars) override;
  double beta_1_, beta_2_, epsilon_;
};

// Adam with decoupled weight decay: var -= var * weight_decay * lr before each Adam step.
class AdamW : public Adam {
 public:
  explicit AdamW(LearningRate learning_rate = 0.001, double weight_decay = 0.004,
                 double beta_1 = 0.9, double beta_2 = 0.999, double epsilon = 1e-7);

 private:
  void update(const Tensor& grad, Variable& var, StepScalars& scalars) override;
  double weight_decay_;
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(LearningRate learning_rate = 0.001, double rho = 0.9, double momentum = 0,
                   double epsilon = 1e-7, bool centered = false);

 private:
  void update(const Tensor& grad, Variable& var, StepScalars& scalars) override;
  double rho_, momentum_, epsilon_;
  bool centered_;
};

}  // namespace mt::optimizers
