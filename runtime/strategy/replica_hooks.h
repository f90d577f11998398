#pragma once
// What variables and optimizers ask of MirroredStrategy (internal).
//
// Note [Mirrored variables]
// A variable created under MirroredStrategy::scope() is one VariableState per replica,
// each on its device, replica r > 0's initialised from replica 0's value, held in the
// `mirrors` of the handle's state (whose own value stays empty). Variable::state() resolves
// the handle for the calling thread: inside run(), replica r's thread sees copy r, so
// reads, tapes and optimizer slots use the local copy; elsewhere (cross-replica) it sees
// replica 0's, and an assignment there writes every copy, as TensorFlow's MirroredVariable
// does. An optimizer step inside run() meets the other replicas at the strategy's merge
// point: once all arrived, replica 0 all-reduces every replica's gradients and updates every copy
// (through handles of the copies themselves, which resolve to nothing else), so the
// copies stay equal.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "runtime/eager/tensor.h"
#include "runtime/train/variable.h"

namespace mt::internal {

// Returns the calling thread's replica inside MirroredStrategy::run, -1 elsewhere.
int current_replica_id();
// Returns the id of the strategy whose run() the calling thread is in (unique in the
// process), 0 elsewhere.
uint64_t current_strategy_id();

// Returns whether the calling thread is inside a MirroredStrategy's scope().
bool in_strategy_scope();

// Creates a variable mirrored on every device of the innermost strategy scope of this
// thread (Note [Mirrored variables]).
std::shared_ptr<VariableState> make_mirrored_variable(const Tensor& initial, bool trainable,
                                                      std::string name);

// Returns a handle of each copy of mirrored variable `var`, in replica order.
std::vector<Variable> variable_copies(const Variable& var);

using GradAndVar = std::pair<Tensor, Variable>;
using PerReplicaGradients = std::vector<std::vector<GradAndVar>>;

// An optimizer step from inside run(): deposits this replica's pairs and waits; once all
// have, replica 0 all-reduces (SUM) the gradients and calls `apply` once with every replica's
// reduced gradients paired with its copy of each variable. Throws mt::Error when the
// replicas' lists differ, a variable is not mirrored by this strategy, or a replica failed.
void merge_apply_gradients(absl::Span<const GradAndVar> grads_and_vars,
                           const std::function<void(const PerReplicaGradients&)>& apply);

}  // namespace mt::internal
