// What variables and optimizers ask of MirroredStrategy (replica_hooks.h): the thread's
// replica, mirrored variables, and the optimizer step that meets at the merge point.
#include "runtime/strategy/replica_hooks.h"

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/error.h"
#include "runtime/function/function_recorder.h"
#include "runtime/strategy/status_of.h"
#include "runtime/strategy/strategy_state.h"

namespace mt::distribute::internal {

ReplicaBinding& replica_binding() {
  thread_local ReplicaBinding binding;
  return binding;
}

std::vector<StrategyState*>& scope_stack() {
  thread_local std::vector<StrategyState*> stack;
  return stack;
}

}  // namespace mt::distribute::internal

namespace mt::internal {
namespace {

using distribute::internal::replica_binding;
using distribute::internal::StrategyState;

// Checks that every replica passed the same variables in the same order (copies of one
// mirrored variable of this strategy) and gradients defined alike; returns the indices of
// the pairs with gradients.
absl::StatusOr<std::vector<size_t>> matched_pairs(const StrategyState& state,
                                                  absl::Span<const void* const> parts) {
  const auto& first = *static_cast<const absl::Span<const GradAndVar>*>(parts[0]);
  std::vector<size_t> defined;
  for (size_t r = 1; r < parts.size(); ++r) {
    const auto& pairs = *static_cast<const absl::Span<const GradAndVar>*>(parts[r]);
    if (pairs.size() != first.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[apply_gradients] replica ", r, " passed ", pairs.size(), " pairs, replica 0 ",
          first.size(), ": every replica must update the same variables"));
    }
    for (size_t k = 0; k < pairs.size(); ++k) {
      if (pairs[k].second.handle_state() != first[k].second.handle_state() ||
          pairs[k].first.defined() != first[k].first.defined()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "[apply_gradients] pair ", k, " of replica ", r,
            " differs from replica 0's (another variable, or a gradient only one has)"));
      }
    }
  }
  for (size_t k = 0; k < first.size(); ++k) {
    const Variable& var = first[k].second;
    if (!var.defined()) return absl::InvalidArgumentError("[apply_gradients] a variable is empty");
    if (var.handle_state()->mirrors.size() != state.devices.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "[apply_gradients] variable '", var.handle_state()->name,
          "' is not mirrored by this MirroredStrategy: create the variables it trains under "
          "strategy.scope()"));
    }
    if (first[k].first.defined()) defined.push_back(k);
  }
  return defined;
}

}  // namespace

int current_replica_id() { return replica_binding().replica; }

uint64_t current_strategy_id() {
  const StrategyState* state = replica_binding().state;
  return state == nullptr ? 0 : state->id;
}

bool in_strategy_scope() { return !distribute::internal::scope_stack().empty(); }

std::shared_ptr<VariableState> make_mirrored_variable(const Tensor& initial, bool trainable,
                                                      std::string name) {
  const StrategyState& state = *distribute::internal::scope_stack().back();
  auto mirrored = std::make_shared<VariableState>();
  mirrored->trainable = trainable;
  mirrored->name = name;
  for (size_t r = 0; r < state.names.size(); ++r) {
    DeviceScope scope(state.names[r]);
    mirrored->mirrors.push_back(r == 0 ? make_variable_state(initial, trainable, name)
                                       : make_variable_state(mirrored->mirrors[0]->value, trainable,
                                                             absl::StrCat(name, "/replica_", r)));
  }
  return mirrored;
}

std::vector<Variable> variable_copies(const Variable& var) {
  std::vector<Variable> copies;
  for (const auto& copy : var.handle_state()->mirrors) copies.push_back(Variable::from_state(copy));
  return copies;
}

void merge_apply_gradients(absl::Span<const GradAndVar> grads_and_vars,
                           const std::function<void(const PerReplicaGradients&)>& apply) {
  const auto binding = replica_binding();
  StrategyState& state = *binding.state;
  auto merge = [&](absl::Span<const void* const> parts) -> absl::Status {
    absl::StatusOr<std::vector<size_t>> defined = matched_pairs(state, parts);
    if (!defined.ok()) return defined.status();
    PerReplicaValues grads(parts.size());
    for (size_t r = 0; r < parts.size(); ++r) {
      const auto& pairs = *static_cast<const absl::Span<const GradAndVar>*>(parts[r]);
      for (size_t k : *defined) grads[r].push_back(pairs[k].first);
    }
    absl::StatusOr<PerReplicaValues> reduced =
        state.all_reduce("apply_gradients", distribute::ReduceOp::kSum, grads);
    if (!reduced.ok()) return reduced.status();
    const auto& first = *static_cast<const absl::Span<const GradAndVar>*>(parts[0]);
    PerReplicaGradients per_replica(parts.size());
    for (size_t i = 0; i < defined->size(); ++i) {
      std::vector<Variable> copies = variable_copies(first[(*defined)[i]].second);
      for (size_t r = 0; r < parts.size(); ++r) {
        per_replica[r].emplace_back((*reduced)[r][i], copies[r]);
      }
    }
    return status_of([&] { apply(per_replica); });
  };
  FunctionRecorder* recorder = active_recorder();
  FunctionRecorder::VariableBuffers before;
  if (recorder != nullptr) before = recorder->variable_buffers();
  {
    PauseRecording pause;  // replica 0's merge is no part of its recording
    throw_if_error(state.merge.arrive(binding.replica, &grads_and_vars, merge));
  }
  if (recorder == nullptr) return;
  recorder->note_moves_since(before);
  // A replay hands its own gradients to the same step (Note [Replicas in a function]).
  std::vector<Tensor> exports;
  std::vector<Variable> vars;
  std::vector<bool> has_grad;
  for (const auto& [grad, var] : grads_and_vars) {
    if (grad.defined()) exports.push_back(grad);
    vars.push_back(var);
    has_grad.push_back(grad.defined());
  }
  recorder->record_merge(
      exports,
      [vars, has_grad,
       apply](absl::Span<const Tensor> grads) -> absl::StatusOr<std::vector<Tensor>> {
        std::vector<GradAndVar> pairs;
        size_t next = 0;
        for (size_t k = 0; k < vars.size(); ++k) {
          pairs.emplace_back(has_grad[k] ? grads[next++] : Tensor(), vars[k]);
        }
        MT_RETURN_IF_ERROR(status_of([&] { merge_apply_gradients(pairs, apply); }));
        return std::vector<Tensor>{};
      },
      {});
}

}  // namespace mt::internal
