#pragma once
// Formats a tensor's host values exactly as NumPy's `str(ndarray)` does with the default
// print options (precision 8, floatmode 'maxprec', threshold 1000, edgeitems 3, linewidth
// 75). Tensor printing wraps this text the way TensorFlow does:
//
//   float data[] = {22, 28, 49, 64};
//   format_values(data, DType::kFloat32, shape_2x2);  // "[[22. 28.]\n [49. 64.]]"
//   format_values(&x, DType::kFloat64, Shape());      // "1.5" (a scalar prints bare)
//
// Floats print at their own precision: a float32 0.1f prints "0.1". See Note [NumPy float
// layout] in tensor_format.cc for how a float array picks positional or scientific form.

#include <string>

#include "core/dtype.h"
#include "core/shape.h"

namespace mt::internal {

// Returns the NumPy `str` of the shape.num_elements() values of `dtype` at `data`, which is
// host memory in row-major order and is only read. Thread-safe; never fails.
std::string format_values(const void* data, DType dtype, const Shape& shape);

}  // namespace mt::internal
