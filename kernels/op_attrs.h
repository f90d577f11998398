#pragma once
// OpAttrs: the attributes an op call carries besides its inputs. One flat struct for every
// op, so that building an op call needs no heap; each op reads only the fields it names.

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "core/dtype.h"

namespace mt {

// A scalar of any dtype: `f` for floating types, `i` for integers, `b` for bool.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  bool b = false;
};

struct OpAttrs {
  // MatMul; BatchMatMulV2's adj_x and adj_y (the adjoint is the transpose for real types).
  bool transpose_a = false;
  bool transpose_b = false;
  // Sum, Mean, Max: axes to reduce, each in [-rank, rank); `reduce_all` ignores them.
  absl::InlinedVector<int64_t, 4> axes;
  bool reduce_all = false;
  bool keep_dims = false;
  DType dst_dtype = DType::kFloat32;  // Cast: the target dtype
  Scalar value;                       // Fill: the value to fill with
};

}  // namespace mt
