#pragma once
// FunctionRecorder: what an mt::Function's first call with a new signature writes down
// while its body runs eagerly (internal). While it records, an op observer of its thread
// (runtime/eager/op_observer.h) hands it every kernel the execute body runs and every copy
// it makes; variables, host values and variable
// creation tell it what the kernels alone do not show. finish() turns the recording into a
// FunctionGraph (function_graph.h), which later calls replay.
//
// Note [Values in a recording]: the recorder names every buffer a kernel reads or writes by
// the TensorImpl that held it during the trace, and classifies it once, when first seen:
//   - an argument of the call (bound again at each replay);
//   - a variable's buffer (VariableState: the replay binds the variable's buffer of the
//     moment, which it writes in place);
//   - a value the recording made: a kernel's output or a copy (planned in the function's
//     arena, function_plan.h);
//   - anything else, a tensor from outside or a source op's output (_EagerConst, Fill): a
//     constant the function holds, unless host_scalar() made it a parameter written again
//     before each replay (runtime/function/host_values.h).
// The recorder holds strong references to constants only. The values it made and the
// variables' buffers it saw it holds by weak references (Note [Weak tensor references]):
// no later tensor takes an address it has named, yet a made value's buffer goes back to the
// pool when the body drops it, as in eager code, so a trace needs no more memory than an
// eager call (holding them all once made tracing a GPT-2 step need the sum of its
// intermediates), and a variable's reference count still decides whether an assignment
// writes in place.
//
// Note [Variables moved during a trace]: an assignment to a variable whose value is also
// held elsewhere writes a fresh buffer (Note [Variables write in place]); the old buffer
// keeps the value from before. The recording keeps the variable in one place instead: it
// snapshots the variable's content at that point into a value of its own, which every later
// use of the old buffer reads, and writes the variable in place. A replay thus gives what
// the eager run gave whether or not the old value is still held.
//
// Note [Replicas in a function]: a function called inside MirroredStrategy::run traces and
// replays once per replica, each on its replica's thread (the signature holds the replica).
// Where the replicas meet (ReplicaContext::all_reduce, an optimizer step), the recording
// pauses: the merge that replica 0's thread runs for all of them belongs to no replica's
// recording. The replica's recording gets a merge step instead, whose inputs are the values
// it handed over and whose outputs are those it got back; a replay runs the steps before
// it, hands its own values to the same collective (which runs eagerly, as at the trace),
// copies what comes back into its arena, and goes on. The steps between merges on one GPU
// are each one CUDA graph (Note [Function replay] in concrete_function.h).
//
// Recording is per thread: the recorder's observer reads active_recorder(), one
// thread-local load, once per op of a thread that records.

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/kernel.h"
#include "kernels/op_attrs.h"
#include "kernels/op_id.h"
#include "runtime/eager/tensor.h"
#include "runtime/function/function_graph.h"

namespace mt::internal {

class Device;
struct TensorImpl;
struct VariableState;

class FunctionRecorder;
inline thread_local FunctionRecorder* t_active_recorder = nullptr;

// The calling thread's recorder while a function traces; nullptr otherwise.
inline FunctionRecorder* active_recorder() { return t_active_recorder; }

// Stops recording on the calling thread for its lifetime: a variable's creation runs once,
// at the trace, and is no part of the function.
class PauseRecording {
 public:
  PauseRecording() : saved_(t_active_recorder) { t_active_recorder = nullptr; }
  ~PauseRecording() { t_active_recorder = saved_; }
  PauseRecording(const PauseRecording&) = delete;
  PauseRecording& operator=(const PauseRecording&) = delete;

 private:
  FunctionRecorder* saved_;
};

class FunctionRecorder {
 public:
  // Starts recording on the calling thread, the call's arguments being `args`.
  explicit FunctionRecorder(absl::Span<const Tensor> args);
  // Stops recording (if finish() did not).
  ~FunctionRecorder();
  FunctionRecorder(const FunctionRecorder&) = delete;
  FunctionRecorder& operator=(const FunctionRecorder&) = delete;

  // From its op observer: `op` ran `kernel` on `device` (or no kernel: Identity's copy,
  // ReadVariableOp's alias) over `inputs`, of which those on other devices were first
  // copied, in order, into `copies`; `source` is set for a source op.
  void record_op(OpId op, const OpAttrs& attrs, KernelFn kernel, Device& device,
                 absl::Span<const Tensor* const> inputs, absl::Span<const Tensor> copies,
                 bool source, absl::Span<const Tensor> outputs);

  // From variable.cc: `state`'s buffer is about to be read or written.
  void note_variable(const std::shared_ptr<VariableState>& state);
  // From variable.cc: `state` moved from buffer `old_value` to `new_value` (Note [Variables
  // moved during a trace]); the eager copy between them was not recorded.
  void variable_moved(const std::shared_ptr<VariableState>& state, TensorImpl* old_value,
                      TensorImpl* new_value);

  // From host_values.cc.
  void add_host_scalar(const Tensor& value, std::function<double()> compute);
  void add_host_step(std::function<void()> step);

  // From a collective inside MirroredStrategy::run (Note [Replicas in a function]): this
  // replica handed over `exports` and got `imports` back; a replay calls `merge` with its
  // own values instead. Call it after the collective, outside the recording.
  void record_merge(absl::Span<const Tensor> exports, MergeFn merge,
                    absl::Span<const Tensor> imports);
  // Around a merge, which runs outside the recording: the buffer of each variable the
  // recording knows, taken before; after, a variable the merge moved to another buffer is
  // recorded as moved (Note [Variables moved during a trace]), ahead of the merge step.
  using VariableBuffers = std::vector<std::pair<std::shared_ptr<VariableState>, TensorImpl*>>;
  VariableBuffers variable_buffers() const;
  void note_moves_since(const VariableBuffers& before);

  // Marks the recording unusable for a replay, with the reason (a random op, a remote op);
  // the function then runs its body eagerly at every call.
  void set_unreplayable(absl::Status why);

  // Stops recording and returns the graph whose outputs are `outputs`, or the reason the
  // function cannot replay.
  absl::StatusOr<std::unique_ptr<FunctionGraph>> finish(absl::Span<const Tensor> outputs);

 private:
  // Returns the value `impl` names (Note [Values in a recording]), classifying it if new.
  ValueId value_of(TensorImpl* impl);
  ValueId add_value(ValueKind kind, const TensorImpl& impl);
  ValueId add_variable_buffer(const std::shared_ptr<VariableState>& state, TensorImpl* impl);
  // Holds `impl` (a tensor the caller holds) by a weak reference until the recorder goes.
  void name_weakly(TensorImpl* impl);

  FunctionRecorder* saved_;
  bool recording_ = true;
  std::vector<Tensor> args_;
  absl::flat_hash_map<const TensorImpl*, ValueId> values_;
  std::vector<TensorImpl*> weak_;  // the values made and the variables' buffers seen (weak)
  absl::flat_hash_map<const VariableState*, int> variable_index_;
  std::unique_ptr<FunctionGraph> graph_;
  std::vector<std::pair<ValueId, OpId>> random_values_;
  absl::Status unreplayable_;
};

}  // namespace mt::internal
