#pragma once
// OpAttrs: the attributes an op call carries besides its inputs. One flat struct for every
// op, so that building an op call needs no heap; each op reads only the fields it names.

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "core/dtype.h"
#include "kernels/philox.h"

namespace mt {

// A scalar of any dtype: `f` for floating types, `i` for integers, `b` for bool.
struct Scalar {
  double f = 0;
  int64_t i = 0;
  bool b = false;
};

struct OpAttrs {
  bool transpose_a = false;  // MatMul
  bool transpose_b = false;  // MatMul
  // Sum, Mean, Max: axes to reduce, each in [-rank, rank); `reduce_all` ignores them.
  absl::InlinedVector<int64_t, 4> axes;
  bool reduce_all = false;
  bool keep_dims = false;
  DType dst_dtype = DType::kFloat32;  // Cast: the target dtype
  Scalar value;                       // Fill: the value to fill with
  // The random ops (Note [Random ops] in kernels/random_shape.cc): where the output's
  // Philox stream starts, fixed on the host at the call; the uniform's bounds (`f` for the
  // float ops, `i` for the integer ones); the normals' mean and standard deviation.
  PhiloxSeed philox = {};
  Scalar minval;
  Scalar maxval = {1, 1, false};
  double mean = 0;
  double stddev = 1;
};

}  // namespace mt
