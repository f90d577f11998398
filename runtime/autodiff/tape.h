#pragma once
// Internal to the runtime: the recording side of GradientTape (gradient_tape.h).
//
// Note [Tapes cost one load when off]: a tape registers an op observer with its thread
// (runtime/eager/op_observer.h), which calls record_on_tapes after each successful op of
// that thread; with no observer anywhere an op pays one load. record_on_tapes looks at the
// calling thread's own stack of recording tapes; each records the op when it is
// differentiable and reads a tensor the tape tracks (watched, or an output of an op it
// recorded), and tracks the op's floating-point outputs in turn. Variable reads reach the
// tapes through record_variable_read when any_tape_recording() (a global counter) says a
// tape lives on some thread.

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"
#include "runtime/eager/op_observer.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

struct TensorImpl;
struct VariableState;

extern std::atomic<int> g_recording_tapes;

inline bool any_tape_recording() {
  return __builtin_expect(g_recording_tapes.load(std::memory_order_relaxed) != 0, 0);
}

// Returns whether a tape records on this thread now (not paused): a gradient computed now is
// itself recorded, so it must be built of differentiable ops (LayerNorm's).
bool tape_recording_on_thread();

// Records a finished op on every tape recording on this thread.
void record_on_tapes(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs,
                     absl::Span<const Tensor> outputs);

// Tells the recording tapes of this thread that `value` was read from `var` (a trainable
// variable is watched by tapes that watch accessed variables).
void record_variable_read(const std::shared_ptr<VariableState>& var, const Tensor& value);

// A tensor a TapeEntry holds: whole when the op's gradient reads its values, else weakly,
// its identity and meta only (Note [What a gradient reads] in grad_fns.h, Note [Weak tensor
// references] in tensor_impl.h), so that its buffer returns to the pool once the program
// drops it.
class TapeRef {
 public:
  TapeRef(const Tensor& t, bool whole);
  TapeRef(TapeRef&& other) noexcept : tensor_(std::move(other.tensor_)), weak_(other.weak_) {
    other.weak_ = nullptr;
  }
  TapeRef& operator=(TapeRef&& other) noexcept;
  TapeRef(const TapeRef&) = delete;
  TapeRef& operator=(const TapeRef&) = delete;
  ~TapeRef();

  const TensorImpl* impl() const { return weak_ != nullptr ? weak_ : tensor_.impl(); }
  // The tensor for the gradient function: itself, or, held weakly, a tensor of its dtype,
  // shape and device without a buffer.
  Tensor tensor() const;

 private:
  Tensor tensor_;               // held whole
  TensorImpl* weak_ = nullptr;  // held weakly
};

// One recorded op: what its gradient function needs.
struct TapeEntry {
  OpId op;
  OpAttrs attrs;
  absl::InlinedVector<TapeRef, 3> inputs;
  absl::InlinedVector<TapeRef, 2> outputs;
};

class Tape {
 public:
  Tape(bool persistent, bool watch_accessed_variables);
  ~Tape();

  void watch(const Tensor& t);
  void watch_variable(const std::shared_ptr<VariableState>& var, const Tensor& value);
  void maybe_record(OpId op, absl::Span<const Tensor* const> inputs, const OpAttrs& attrs,
                    absl::Span<const Tensor> outputs);
  void on_variable_read(const std::shared_ptr<VariableState>& var, const Tensor& value);

  // Computes the gradients (gradient_tape.h); `sources` are tensor impls, and each variable
  // source sums the gradients of its reads. Throws mt::Error.
  std::vector<Tensor> gradient(const Tensor& target, absl::Span<const Tensor> sources,
                               absl::Span<const VariableState* const> variables,
                               const Tensor& output_gradient);

  // Leaves this thread's recording tapes for good (idempotent; the destructor does it).
  void detach();
  void pause() { ++paused_; }
  void resume() { --paused_; }
  bool recording() const { return paused_ == 0; }
  const std::vector<std::shared_ptr<VariableState>>& watched_variables() const {
    return variable_order_;
  }

 private:
  bool tracks(const TensorImpl* impl) const { return tracked_.contains(impl); }
  void track(const Tensor& t);

  const bool persistent_;
  const bool watch_accessed_variables_;
  int paused_ = 0;
  bool attached_ = true;
  std::vector<Tape*>* owner_;   // the recording tapes of the thread that made this one
  ThreadObservers* observers_;  // that thread's op observers (runtime/eager/op_observer.h)
  bool used_ = false;
  absl::flat_hash_set<const TensorImpl*> tracked_;
  std::vector<Tensor> kept_;  // watched tensors, kept alive so that their impls stay unique
  std::vector<TapeEntry> entries_;
  absl::flat_hash_map<const VariableState*, std::vector<Tensor>> reads_;
  std::vector<std::shared_ptr<VariableState>> variable_order_;  // keeps them alive
};

}  // namespace mt::internal
