// take_index_fault: the host's side of Note [GPU index faults] (kernels/cuda/index_fault.h).
#include "kernels/cuda/index_fault.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kernels/op_id.h"
#include "kernels/shape_fns.h"

namespace mt::cuda {
namespace {

// Returns the position as the CPU kernel names it: "0,1" for indices of shape (2, 3).
std::string position_text(const IndexFault& f) {
  if (f.rank < 0 || f.rank > kIndexFaultDims) return absl::StrCat(f.position);
  int64_t pos[kIndexFaultDims] = {};
  for (int64_t d = f.rank - 1, r = f.position; d >= 0; --d) {
    pos[d] = f.dims[d] > 0 ? r % f.dims[d] : 0;
    r = f.dims[d] > 0 ? r / f.dims[d] : 0;
  }
  return absl::StrJoin(pos, pos + f.rank, ",");
}

}  // namespace

absl::Status take_index_fault(IndexFault& fault, std::string_view device) {
  if (!fault_pending(fault)) return absl::OkStatus();
  const IndexFault f = fault;
  // `ready` is cleared before `taken` moves on: a kernel may claim the record again as
  // soon as it sees the new `taken`.
  __atomic_store_n(&fault.ready, 0u, __ATOMIC_RELEASE);
  __atomic_store_n(&fault.taken, f.taken + 1, __ATOMIC_RELEASE);
  const auto op = static_cast<OpId>(f.op);
  const std::string where =
      absl::StrCat(" (on ", std::string(device), "; reported at the next synchronisation)");
  if (op == OpId::kUnsortedSegmentSum) {
    return internal::op_error(op, "segment_ids[", position_text(f), "] = ", f.value,
                              " is out of range [0, ", f.bound, ")", where);
  }
  return internal::op_error(op, "indices[", position_text(f), "] = ", f.value, " is not in [0, ",
                            f.bound, ")", where);
}

}  // namespace mt::cuda
