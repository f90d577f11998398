#include "runtime/variable.h"

#include "absl/strings/str_cat.h"
#include "runtime/autodiff/tape.h"
#include "runtime/error.h"
#include "runtime/execute.h"
#include "runtime/tensor_impl.h"

namespace mt {
namespace {

using internal::VariableState;

const VariableState& checked(const std::shared_ptr<VariableState>& state) {
  if (state == nullptr) {
    internal::throw_if_error(absl::FailedPreconditionError("[Variable] the variable is empty"));
  }
  return *state;
}

// Whether the variable alone holds its buffer, which it may then overwrite: no read value
// is held elsewhere and no copy from it is in flight (Note [Pinned host tensors]).
bool exclusive(const Tensor& value) {
  const internal::TensorImpl* impl = value.impl();
  return impl->refs.load(std::memory_order_acquire) == 1 && impl->pending.handle == nullptr;
}

// Returns an uninitialised buffer for the variable on its device, for a copy-on-write.
Tensor fresh_buffer(const Tensor& value) {
  internal::TensorImpl* impl = value.impl();
  return Tensor(
      internal::value_or_throw(internal::allocate_tensor(*impl->device, impl->dtype, impl->shape)));
}

void run(OpId op, const Tensor& target, const Tensor& value) {
  const Tensor* inputs[] = {&target, &value};
  internal::value_or_throw(internal::execute_all(op, inputs, {}));
}

}  // namespace

Variable::Variable(const Tensor& initial, bool trainable, std::string name) {
  if (!initial.defined()) {
    internal::throw_if_error(
        absl::InvalidArgumentError("[VarHandleOp] the initial value is an empty tensor"));
  }
  Tensor handle = internal::value_or_throw(
      internal::execute_source(OpId::kVarHandleOp, initial.dtype(), initial.shape(), nullptr, {}));
  run(OpId::kAssignVariableOp, handle, initial);
  state_ = std::make_shared<VariableState>();
  state_->value = std::move(handle);
  state_->trainable = trainable;
  state_->name = std::move(name);
}

Tensor Variable::read_value() const {
  const Tensor* input = &checked(state_).value;
  Tensor value = internal::value_or_throw(
      internal::execute(OpId::kReadVariableOp, absl::MakeConstSpan(&input, 1), {}));
  if (internal::any_tape_recording()) internal::record_variable_read(state_, value);
  return value;
}

void Variable::assign(const Tensor& value) {
  checked(state_);
  Tensor target = exclusive(state_->value) ? state_->value : fresh_buffer(state_->value);
  run(OpId::kAssignVariableOp, target, value);
  state_->value = std::move(target);
}

void Variable::assign_add(const Tensor& delta) {
  run(OpId::kAssignAddVariableOp, internal::writable_value(*this), delta);
}

void Variable::assign_sub(const Tensor& delta) {
  run(OpId::kAssignSubVariableOp, internal::writable_value(*this), delta);
}

DType Variable::dtype() const { return checked(state_).value.dtype(); }
const Shape& Variable::shape() const { return checked(state_).value.shape(); }
const std::string& Variable::device() const { return checked(state_).value.device(); }
const std::string& Variable::name() const { return checked(state_).name; }
bool Variable::trainable() const { return checked(state_).trainable; }

namespace internal {

const Tensor& writable_value(const Variable& var) {
  checked(var.state());
  VariableState& state = *var.state();
  if (!exclusive(state.value)) {
    Tensor copy = fresh_buffer(state.value);
    run(OpId::kAssignVariableOp, copy, state.value);
    state.value = std::move(copy);
  }
  return state.value;
}

}  // namespace internal
}  // namespace mt
