#pragma once
// mt::Variable: a mutable tensor on one device, with TensorFlow's resource semantics.
// Creating one runs VarHandleOp and AssignVariableOp on the device the current scope (or
// the default placement) picks; every later op on the variable (assign, assign_add,
// assign_sub, reads) runs on that device whatever scope is active, as TensorFlow's
// MaybePinToResourceDevice does. Copies of a Variable handle share one variable.
//
// Note [Variables write in place]: a read (ReadVariableOp) returns the current value itself,
// without a copy; an assignment writes into the variable's buffer in place, unless a read
// value is still held somewhere (or a copy from it is in flight), in which case the
// variable moves to a new buffer and the held value keeps what it held (tensors are
// immutable), as TensorFlow's copy-on-write does.
//
//   mt::Variable w(mt::random::normal({784, 256}), /*trainable=*/true, "w");
//   mt::Tensor y = mt::matmul(x, w);     // reads w (ReadVariableOp)
//   w.assign_sub(mt::mul(g, lr));        // AssignSubVariableOp, in place on w's device
//
// The value lives in the device's pool, counted in its memory stats and snapshots. Errors
// throw mt::Error: InvalidArgument for a value of another shape or dtype. One variable is
// used by one thread at a time (reads and assignments are not synchronised with each other).

#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/eager/tensor.h"

namespace mt {
namespace internal {

struct VariableState {
  Tensor value;
  bool trainable = true;
  std::string name;
  // A mirrored variable's copies, one per replica; its own value is then empty (Note
  // [Mirrored variables]).
  std::vector<std::shared_ptr<VariableState>> mirrors;
};

// Creates the state of a plain variable on the device the thread's scope picks:
// VarHandleOp, then AssignVariableOp of `initial`.
std::shared_ptr<VariableState> make_variable_state(const Tensor& initial, bool trainable,
                                                   std::string name);

}  // namespace internal

class Variable {
 public:
  Variable() = default;  // empty: its methods throw FailedPrecondition
  explicit Variable(const Tensor& initial, bool trainable = true, std::string name = "");

  // Returns the current value (ReadVariableOp); a trainable variable read while a
  // GradientTape records is watched by it.
  Tensor read_value() const;
  operator Tensor() const { return read_value(); }  // NOLINT: a variable is used as a tensor

  void assign(const Tensor& value);
  void assign_add(const Tensor& delta);
  void assign_sub(const Tensor& delta);

  DType dtype() const;
  const Shape& shape() const;
  // Returns the full name of the device holding the variable.
  const std::string& device() const;
  const std::string& name() const;
  bool trainable() const;
  bool defined() const { return state_ != nullptr; }

  // Internal: the shared state, for GradientTape and the optimizers; for a mirrored
  // variable, the calling replica's copy (Note [Mirrored variables] in
  // runtime/strategy/replica_hooks.h).
  const std::shared_ptr<internal::VariableState>& state() const {
    if (state_ != nullptr && !state_->mirrors.empty()) return replica_state();
    return state_;
  }
  // Internal: the state this handle holds (a mirrored variable's, holding its copies).
  const std::shared_ptr<internal::VariableState>& handle_state() const { return state_; }
  static Variable from_state(std::shared_ptr<internal::VariableState> state) {
    Variable v;
    v.state_ = std::move(state);
    return v;
  }

 private:
  const std::shared_ptr<internal::VariableState>& replica_state() const;
  // Returns what an assignment writes: this handle, or every copy of a mirrored variable
  // outside run() (each a handle whose state() is that copy's).
  absl::InlinedVector<Variable, 1> copies_to_write() const;

  std::shared_ptr<internal::VariableState> state_;
};

namespace internal {

// Returns the variable's value after making its buffer the variable's alone (moving the
// variable to a copy when a read value is held elsewhere: Note [Variables write in place]),
// for an op that writes it in place: the assignments, ResourceApplyAdam.
const Tensor& writable_value(const Variable& var);

}  // namespace internal
}  // namespace mt
