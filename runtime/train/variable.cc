#include "runtime/train/variable.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/autodiff/tape.h"
#include "runtime/cost/copy_cache.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/eager/tensor_impl.h"
#include "runtime/function/function_recorder.h"
#include "runtime/strategy/replica_hooks.h"

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
  internal::PauseRecording pause;  // a function creates its variables once, at the trace
  state_ = internal::in_strategy_scope()
               ? internal::make_mirrored_variable(initial, trainable, std::move(name))
               : internal::make_variable_state(initial, trainable, std::move(name));
}

const std::shared_ptr<VariableState>& Variable::replica_state() const {
  const int replica = std::max(internal::current_replica_id(), 0);
  if (replica >= static_cast<int>(state_->mirrors.size())) {
    internal::throw_if_error(absl::InvalidArgumentError(absl::StrCat(
        "[ReadVariableOp] variable '", state_->name, "' is mirrored on ", state_->mirrors.size(),
        " devices; replica ", replica, " of another MirroredStrategy cannot use it")));
  }
  return state_->mirrors[replica];
}

Tensor Variable::read_value() const {
  const std::shared_ptr<VariableState>& state = this->state();
  const Tensor* input = &checked(state).value;
  if (internal::FunctionRecorder* recorder = internal::active_recorder()) {
    recorder->note_variable(state);
  }
  Tensor value = internal::value_or_throw(
      internal::execute(OpId::kReadVariableOp, absl::MakeConstSpan(&input, 1), {}));
  if (internal::any_tape_recording()) internal::record_variable_read(state, value);
  return value;
}

// Outside run(), an assignment to a mirrored variable writes every copy (Note [Mirrored
// variables]); each copy's op runs on its device and copies `value` there.
void Variable::assign(const Tensor& value) {
  for (const Variable& copy : copies_to_write()) {
    VariableState& state = *copy.state();
    internal::FunctionRecorder* recorder = internal::active_recorder();
    if (recorder != nullptr) recorder->note_variable(copy.state());
    Tensor target = exclusive(state.value) ? state.value : fresh_buffer(state.value);
    if (recorder != nullptr && target.impl() != state.value.impl()) {
      recorder->variable_moved(copy.state(), state.value.impl(), target.impl());
    }
    run(OpId::kAssignVariableOp, target, value);
    state.value = std::move(target);
  }
}

void Variable::assign_add(const Tensor& delta) {
  for (const Variable& copy : copies_to_write()) {
    run(OpId::kAssignAddVariableOp, internal::writable_value(copy), delta);
  }
}

void Variable::assign_sub(const Tensor& delta) {
  for (const Variable& copy : copies_to_write()) {
    run(OpId::kAssignSubVariableOp, internal::writable_value(copy), delta);
  }
}

absl::InlinedVector<Variable, 1> Variable::copies_to_write() const {
  checked(state_);
  if (state_->mirrors.empty()) return {*this};
  if (internal::current_replica_id() >= 0) return {from_state(state())};
  absl::InlinedVector<Variable, 1> copies;
  for (const auto& copy : state_->mirrors) copies.push_back(from_state(copy));
  return copies;
}

DType Variable::dtype() const { return checked(state()).value.dtype(); }
const Shape& Variable::shape() const { return checked(state()).value.shape(); }
const std::string& Variable::device() const { return checked(state()).value.device(); }
const std::string& Variable::name() const { return checked(state_).name; }
bool Variable::trainable() const { return checked(state_).trainable; }

namespace internal {

std::shared_ptr<VariableState> make_variable_state(const Tensor& initial, bool trainable,
                                                   std::string name) {
  Tensor handle = value_or_throw(
      execute_source(OpId::kVarHandleOp, initial.dtype(), initial.shape(), nullptr, {}));
  run(OpId::kAssignVariableOp, handle, initial);
  auto state = std::make_shared<VariableState>();
  state->value = std::move(handle);
  state->trainable = trainable;
  state->name = std::move(name);
  return state;
}

const Tensor& writable_value(const Variable& var) {
  checked(var.state());
  VariableState& state = *var.state();
  FunctionRecorder* recorder = active_recorder();
  if (recorder != nullptr) recorder->note_variable(var.state());
  if (!exclusive(state.value)) {
    Tensor copy = fresh_buffer(state.value);
    {
      PauseRecording pause;  // the function snapshots instead (Note [Variables moved during
      run(OpId::kAssignVariableOp, copy, state.value);  // a trace])
    }
    if (recorder != nullptr) recorder->variable_moved(var.state(), state.value.impl(), copy.impl());
    state.value = std::move(copy);
  }
  drop_cached_copy(*state.value.impl());  // written in place next, by an op or a replay
  return state.value;
}

}  // namespace internal
}  // namespace mt
