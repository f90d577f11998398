#include "core/shape.h"

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mt {

absl::StatusOr<Shape> Shape::make(absl::Span<const int64_t> dims) {
  // Keep num_elements * 8 (the widest element) within int64_t.
  constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 8;
  Shape shape;
  int64_t count = 1;
  bool overflow = false;
  for (int64_t d : dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("[Shape] dimension ", shape.rank(),
                                                     " is negative (", d, ") in [",
                                                     absl::StrJoin(dims, ","), "]"));
    }
    if (d != 0 && count > kMaxElements / d) overflow = true;
    count = overflow ? count : count * d;
    shape.dims_.push_back(d);
  }
  for (int64_t d : dims) {
    if (d == 0) overflow = false, count = 0;  // a zero dimension makes the size 0
  }
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat("[Shape] too many elements in [",
                                                   absl::StrJoin(dims, ","),
                                                   "]: the byte size overflows int64"));
  }
  shape.num_elements_ = count;
  return shape;
}

std::string Shape::to_string() const {
  if (dims_.size() == 1) return absl::StrCat("(", dims_[0], ",)");
  return absl::StrCat("(", absl::StrJoin(dims_, ", "), ")");
}

std::string Shape::to_list_string() const {
  return absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
}

}  // namespace mt
