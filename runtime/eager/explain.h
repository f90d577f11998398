#pragma once
// Placement reasons in words (internal). The Placer returns a PlacementReason with every
// decision; this file turns it, the thread's device scope and the inputs the op would copy
// into the phrases the opt-in log suffix and mt::debugging::explain_placement show:
//
//   Executing op Cast in device /job:localhost/replica:0/task:0/device:CPU:0
//       (no GPU kernel for Cast on float32; asked for /device:GPU:0; input 0 copied from
//       GPU:0, 64 KiB)

#include <atomic>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dtype.h"
#include "kernels/op_id.h"
#include "placement/placer.h"
#include "runtime/debugging.h"
#include "runtime/eager/device.h"
#include "runtime/eager/tensor.h"

namespace mt::internal {

// Whether placement log lines carry their reasons (mt::debugging::set_log_placement_reasons).
inline std::atomic<bool> g_log_reasons{false};

// Returns the short name of `device`: "GPU:0".
std::string short_name(const Device& device);

// Returns `bytes` for people: "512 B", "64 KiB", "1.5 MiB".
std::string human_bytes(int64_t bytes);

// Returns the reason code of `reason`: "default", "scope", "no_kernel_fallback",
// "soft_fallback", "small_op_on_host", "resource_device", "cost".
const char* reason_code(PlacementReason reason);

// Returns why (op, dtype) went where `p` says when `requested` (null: no scope) was asked
// for, e.g. "soft placement: /device:GPU:2 does not exist".
std::string placement_detail(OpId op, DType dtype, const DeviceSpec* requested, const Placement& p);

// Writes the placement log line of `op` on `device`; with reasons on, appends the detail
// (`cost_why` for an op the cost policy placed: CostPolicy::place's words) and the inputs
// that live elsewhere and will be copied. Called only when logging is on.
void log_op(OpId op, DType dtype, const Placement& p, const Device& device,
            absl::Span<const Tensor* const> inputs, std::string_view cost_why);

// Returns what mt::debugging::explain_placement returns, as a status.
absl::StatusOr<debugging::PlacementExplanation> explain(std::string_view op,
                                                        absl::Span<const Tensor* const> inputs,
                                                        DType dtype);

}  // namespace mt::internal
