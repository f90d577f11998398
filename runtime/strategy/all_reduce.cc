// All-reduce from inside run() (ReplicaContext::all_reduce) and the checks every
// collective makes before its cross-device ops run (StrategyState::all_reduce).
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "runtime/eager/device_scope.h"
#include "runtime/eager/error.h"
#include "runtime/function/function_recorder.h"
#include "runtime/ops/ops.h"
#include "runtime/strategy/status_of.h"
#include "runtime/strategy/strategy_state.h"

namespace mt::distribute {
namespace internal {
namespace {

absl::Status differs(const char* caller, size_t r, size_t k, const Tensor& value,
                     const Tensor& first) {
  return absl::InvalidArgumentError(absl::StrCat(
      "[", caller, "] replica ", r, "'s value ", k, " is ", dtype_name(value.dtype()), " ",
      value.shape().to_string(), ", replica 0's ", dtype_name(first.dtype()), " ",
      first.shape().to_string(), ": every replica must reduce values of one shape and dtype"));
}

}  // namespace

absl::StatusOr<mt::internal::PerReplicaValues> StrategyState::all_reduce(
    const char* caller, ReduceOp op, const mt::internal::PerReplicaValues& in) {
  mt::internal::PerReplicaValues local = in;
  for (size_t r = 0; r < in.size(); ++r) {
    if (in[r].size() != in[0].size()) {
      return absl::InvalidArgumentError(absl::StrCat("[", caller, "] replica ", r, " reduces ",
                                                     in[r].size(), " values, replica 0 ",
                                                     in[0].size()));
    }
    for (size_t k = 0; k < in[r].size(); ++k) {
      const Tensor& value = in[r][k];
      if (!value.defined()) {
        return absl::InvalidArgumentError(
            absl::StrCat("[", caller, "] replica ", r, "'s value ", k, " is an empty tensor"));
      }
      if (value.dtype() != in[0][k].dtype() || value.shape() != in[0][k].shape()) {
        return differs(caller, r, k, value, in[0][k]);
      }
      if (value.device() == names[r]) continue;
      // A value computed elsewhere (a CPU op in the replica) goes to its replica first.
      absl::Status copied = mt::internal::status_of([&] {
        DeviceScope scope(names[r]);
        local[r][k] = identity(value);
      });
      if (!copied.ok()) return copied;
    }
  }
  if (in[0].empty()) return local;
  return ops->batch_all_reduce(op, local);
}

}  // namespace internal

std::vector<Tensor> ReplicaContext::all_reduce(ReduceOp op, absl::Span<const Tensor> values) {
  auto merge = [&](absl::Span<const void* const> parts) -> absl::Status {
    mt::internal::PerReplicaValues in(parts.size());
    for (size_t r = 0; r < parts.size(); ++r) {
      const auto& part = *static_cast<const absl::Span<const Tensor>*>(parts[r]);
      in[r].assign(part.begin(), part.end());
    }
    absl::StatusOr<mt::internal::PerReplicaValues> out = state_->all_reduce("all_reduce", op, in);
    if (!out.ok()) return out.status();
    state_->reduced = *std::move(out);
    return absl::OkStatus();
  };
  mt::internal::FunctionRecorder* recorder = mt::internal::active_recorder();
  std::vector<Tensor> reduced;
  {
    mt::internal::PauseRecording pause;  // replica 0's merge is no part of its recording
    mt::internal::throw_if_error(state_->merge.arrive(id_, &values, merge));
    reduced = std::move(state_->reduced[id_]);
  }
  if (recorder != nullptr) {
    // A replay hands its own values to the same all-reduce (Note [Replicas in a function]).
    recorder->record_merge(
        values,
        [op](absl::Span<const Tensor> mine) -> absl::StatusOr<std::vector<Tensor>> {
          // The replay's own replica (the signature holds the strategy and the replica).
          ReplicaContext* ctx = get_replica_context();
          if (ctx == nullptr) {
            return absl::FailedPreconditionError(
                "[all_reduce] a function that all-reduces must be called inside run()");
          }
          std::vector<Tensor> out;
          MT_RETURN_IF_ERROR(mt::internal::status_of([&] { out = ctx->all_reduce(op, mine); }));
          return out;
        },
        reduced);
  }
  return reduced;
}

}  // namespace mt::distribute
