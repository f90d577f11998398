#pragma once
// Shape: the dimensions of a tensor, stored inline for up to six dimensions.
//
// A Shape built through Shape::make is always valid: every dimension is >= 0 and the
// element count times the widest element size (8 bytes) fits in int64_t. Scalars have
// rank 0 and one element.
//
//   MT_ASSIGN_OR_RETURN(Shape s, Shape::make({2, 3}));
//   s.num_elements();   // 6
//   s.to_string();      // "(2, 3)"      as printed with a tensor
//   s.to_list_string(); // "[2,3]"       as in OOM messages

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace mt {

class Shape {
 public:
  using Dims = absl::InlinedVector<int64_t, 6>;

  // Creates a scalar shape.
  Shape() = default;

  // Validates `dims` and returns the shape, or InvalidArgument for a negative dimension or
  // an element count whose byte size would overflow int64_t.
  static absl::StatusOr<Shape> make(absl::Span<const int64_t> dims);
  static absl::StatusOr<Shape> make(std::initializer_list<int64_t> dims) {
    return make(absl::Span<const int64_t>(dims.begin(), dims.size()));
  }

  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  const Dims& dims() const { return dims_; }
  int64_t num_elements() const { return num_elements_; }

  // Returns "(2, 3)", "(3,)" for rank 1 and "()" for a scalar.
  std::string to_string() const;
  // Returns "[2,3]" ("[]" for a scalar).
  std::string to_list_string() const;

  friend bool operator==(const Shape& a, const Shape& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  Dims dims_;
  int64_t num_elements_ = 1;
};

}  // namespace mt
