#include "runtime/eager/explain.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status.h"
#include "placement/small_op_rule.h"
#include "runtime/debugging.h"
#include "runtime/eager/context.h"
#include "runtime/eager/error.h"
#include "runtime/eager/execute.h"
#include "runtime/eager/placement_log.h"
#include "runtime/eager/placement_policy.h"
#include "runtime/eager/scope_stack.h"
#include "runtime/eager/tensor_impl.h"

namespace mt::internal {
namespace {

// Whether the op reads a copy of `impl` the placement policy keeps on `device` rather than
// copying it, as execute.cc decides.
bool reads_cached_copy(OpId op, const Placement& p, const TensorImpl& impl, const Device& device) {
  if (p.reason != PlacementReason::kCost) return false;
  const PlacementPolicy* policy = Context::get().runtime_if_initialized()->policy();
  return policy != nullptr && policy->holds_copy(op, impl, device);
}

// Appends "; input i copied from X, N KiB" for each input that does not live on `device`, or
// "; input i mirrored there" for one whose mirror the op reads.
void append_copies(std::string* out, OpId op, const Placement& p, const Device& device,
                   absl::Span<const Tensor* const> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i]->impl();
    if (impl == nullptr || impl->device == &device) continue;
    if (reads_cached_copy(op, p, *impl, device)) {
      absl::StrAppend(out, "; input ", i, " mirrored there");
      continue;
    }
    absl::StrAppend(out, "; input ", i, " copied from ", short_name(*impl->device), ", ",
                    human_bytes(static_cast<int64_t>(impl->bytes())));
  }
}

// Returns placement_detail(), or for the cost policy its words (`cost_why`) when it has them.
std::string detail(OpId op, DType dtype, const Placement& p, std::string_view cost_why) {
  if (p.reason == PlacementReason::kCost && !cost_why.empty()) return std::string(cost_why);
  const ScopeEntry* scope = scope_stack().top();
  return placement_detail(op, dtype, scope ? &scope->spec : nullptr, p);
}

absl::StatusOr<OpId> find_op(std::string_view name) {
  for (int i = 0; i < kNumOps; ++i) {
    if (name == op_name(static_cast<OpId>(i))) return static_cast<OpId>(i);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("[explain_placement] unknown op '", std::string(name), "'"));
}

}  // namespace

std::string short_name(const Device& device) {
  return absl::StrCat(device_type_name(device.type()), ":", device.id());
}

std::string human_bytes(int64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<int64_t>(value))) {
    return absl::StrCat(static_cast<int64_t>(value), " ", kUnits[unit]);
  }
  return absl::StrFormat("%.1f %s", value, kUnits[unit]);
}

const char* reason_code(PlacementReason reason) {
  switch (reason) {
    case PlacementReason::kDefault:
      return "default";
    case PlacementReason::kScope:
      return "scope";
    case PlacementReason::kNoKernelFallback:
      return "no_kernel_fallback";
    case PlacementReason::kSoftFallback:
      return "soft_fallback";
    case PlacementReason::kSmallOpOnHost:
      return "small_op_on_host";
    case PlacementReason::kResourceDevice:
      return "resource_device";
    case PlacementReason::kCost:
      return "cost";
  }
  return "unknown";
}

std::string placement_detail(OpId op, DType dtype, const DeviceSpec* requested,
                             const Placement& p) {
  const std::string asked = requested == nullptr ? "" : to_string(*requested);
  switch (p.reason) {
    case PlacementReason::kDefault:
      return "default: the best device with a kernel";
    case PlacementReason::kScope:
      return absl::StrCat("asked for ", asked);
    case PlacementReason::kNoKernelFallback:
      return absl::StrCat("no ", requested->type.value_or("matching"), " kernel for ", op_name(op),
                          " on ", dtype_name(dtype), "; asked for ", asked);
    case PlacementReason::kSoftFallback:
      return absl::StrCat("soft placement: ", asked, " does not exist");
    case PlacementReason::kSmallOpOnHost:
      return absl::StrCat("every input is an int32 or int64 of at most ", kSmallOpMaxElements,
                          " elements on the host CPU: pinned there",
                          requested == nullptr ? "" : absl::StrCat(" (asked for ", asked, ")"));
    case PlacementReason::kResourceDevice:
      return absl::StrCat("input 0 is a variable: pinned to its device",
                          requested == nullptr ? "" : absl::StrCat(" (asked for ", asked, ")"));
    case PlacementReason::kCost:
      return "cost policy: the earliest estimated finish";
  }
  return "unknown";
}

void log_op(OpId op, DType dtype, const Placement& p, const Device& device,
            absl::Span<const Tensor* const> inputs, std::string_view cost_why) {
  if (!g_log_reasons.load(std::memory_order_relaxed)) return log_placement(op, device.name());
  std::string text = absl::StrCat(device.name(), " (", detail(op, dtype, p, cost_why));
  append_copies(&text, op, p, device, inputs);
  text.push_back(')');
  log_placement(op, text);  // the suffix rides after the device name
}

absl::StatusOr<debugging::PlacementExplanation> explain(std::string_view name,
                                                        absl::Span<const Tensor* const> inputs,
                                                        DType dtype) {
  MT_ASSIGN_OR_RETURN(OpId op, find_op(name));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->impl() == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("[explain_placement] input ", i, " is an empty tensor"));
    }
  }
  if (!inputs.empty()) dtype = inputs[0]->impl()->dtype;
  Context& ctx = Context::get();
  MT_ASSIGN_OR_RETURN(Runtime * rt, ctx.runtime());
  // Under the cost policy: its decision now, changing nothing (no try, no queue, no cache).
  Placement p;
  std::string cost_why;
  if (cost_places(ctx, op) && rt->policy() != nullptr) {
    MT_ASSIGN_OR_RETURN(PlacementPolicy::Explained c,
                        rt->policy()->explain(op, dtype, inputs, output_bytes(nullptr, inputs)));
    p = c.placement;
    cost_why = std::move(c.text);
  } else {
    MT_ASSIGN_OR_RETURN(p, place_op(ctx, *rt, op, dtype, inputs, nullptr));
  }
  const Device& device = rt->device(p.device);
  const ScopeEntry* scope = scope_stack().top();
  debugging::PlacementExplanation e;
  e.op = op_name(op);
  e.device = device.name();
  e.requested = scope == nullptr ? "" : to_string(scope->spec);
  e.reason = reason_code(p.reason);
  e.detail = detail(op, dtype, p, cost_why);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorImpl* impl = inputs[i]->impl();
    if (impl->device == &device || reads_cached_copy(op, p, *impl, device)) continue;
    e.copies.push_back(
        {static_cast<int>(i), short_name(*impl->device), static_cast<int64_t>(impl->bytes())});
  }
  return e;
}

}  // namespace mt::internal

namespace mt::debugging {

void set_log_placement_reasons(bool enable) {
  internal::g_log_reasons.store(enable, std::memory_order_relaxed);
}

bool get_log_placement_reasons() { return internal::g_log_reasons.load(std::memory_order_relaxed); }

PlacementExplanation explain_placement(std::string_view op, const std::vector<Tensor>& inputs,
                                       DType dtype) {
  std::vector<const Tensor*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(&t);
  return internal::value_or_throw(internal::explain(op, pointers, dtype));
}

}  // namespace mt::debugging
