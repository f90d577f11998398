#pragma once
// PlacementPolicy (internal): how an op that no device scope and no variable pins chooses
// its device, when a policy other than TensorFlow's priority rules is on
// (mt::config::set_placement_policy). The priority rules are the core's own (place() and
// the small-op rule in execute.cc); a policy replaces them for unscoped ops, and the
// execute body tells it what becomes of each decision it made (reason kCost): the inputs it
// copies, the kernel's launch and, when the decision asked (`measure`), its timing. The
// cost policy (runtime/cost/cost_policy.h) is the one implementation today; a factory
// registered from outside the core (runtime/features.cc) makes it when a runtime starts.
//
//   PlacementPolicy* policy = rt.policy();            // null: only the priority rules
//   MT_ASSIGN_OR_RETURN(Placement p, policy->place(op, dtype, inputs, out_bytes, true, &why));

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

class Device;
class Runtime;
struct TensorImpl;

// The timing of one kernel run a policy asked for (begin() to measured()).
struct PolicyTiming {
  int64_t host_begin_ns = 0;
  void* mark_begin = nullptr;  // a GPU's event; nullptr on a CPU
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;

  // Returns where `op` on `inputs` runs (keyed by `dtype`; `out_bytes` the outputs' size;
  // `one_output` false for an op with several). With `why`, also the decision in words.
  // Thread-safe.
  virtual absl::StatusOr<Placement> place(OpId op, DType dtype,
                                          absl::Span<const Tensor* const> inputs, int64_t out_bytes,
                                          bool one_output, std::string* why) = 0;

  // A decision and its words.
  struct Explained {
    Placement placement;
    std::string text;
  };
  // Returns what place() would decide now, changing nothing (explain_placement).
  virtual absl::StatusOr<Explained> explain(OpId op, DType dtype,
                                            absl::Span<const Tensor* const> inputs,
                                            int64_t out_bytes) = 0;

  // For an op this policy placed on `device`: returns the copy of `src` it kept there, with
  // a reference for the caller, or nullptr (then the op copies `src`, and copied() hears of
  // it).
  virtual TensorImpl* kept_copy(OpId /*op*/, TensorImpl& /*src*/, const Device& /*device*/) {
    return nullptr;
  }
  virtual void copied(OpId /*op*/, TensorImpl& /*src*/, TensorImpl& /*copy*/) {}
  // Returns whether an op of this policy on `device` would read a kept copy of `src`
  // (explain_placement), changing nothing.
  virtual bool holds_copy(OpId /*op*/, const TensorImpl& /*src*/, const Device& /*device*/) const {
    return false;
  }

  // `t`'s bytes are about to change (a resource op writes it): a copy kept of it is stale.
  // Called for every such op, whoever placed it.
  virtual void writing(TensorImpl& /*t*/) {}

  // Starts timing the kernel of a decision with `measure` set.
  virtual PolicyTiming begin(Device& /*device*/) { return {}; }
  // The kernel of decision `p` was launched; `outputs` are its outputs (none when no kernel
  // ran: Identity's copy).
  virtual void launched(const Placement& /*p*/, absl::Span<const Tensor> /*outputs*/) {}
  // The run begun by begin() ended: it succeeded (measured) or failed (abandoned).
  virtual void measured(const PolicyTiming& /*timing*/, Device& /*device*/, OpId /*op*/,
                        DType /*dtype*/, absl::Span<const Tensor* const> /*inputs*/,
                        int64_t /*out_bytes*/) {}
  virtual void abandoned(const PolicyTiming& /*timing*/, Device& /*device*/) {}
};

// Makes the runtime's policy; registered by install_features() (runtime/features.cc).
using PolicyFactory = std::unique_ptr<PlacementPolicy> (*)(const Runtime& rt);
void set_policy_factory(PolicyFactory factory);
PolicyFactory policy_factory();

}  // namespace mt::internal
