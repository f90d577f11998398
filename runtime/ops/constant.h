#pragma once
// Creating tensors. Every function runs an op (_EagerConst for constants, Fill for zeros,
// ones and fill) on the device the current scope asks for, and logs it when placement
// logging is on. The element type follows the C++ type: float -> float32,
// double -> float64, int32_t -> int32, int64_t -> int64, bool -> bool, mt::bfloat16 ->
// bfloat16, mt::float16 -> float16; or, from float values, the dtype asked for.
//
//   mt::Tensor s = mt::constant(3.f);                              // shape ()
//   mt::Tensor v = mt::constant({1, 2, 3});                        // int32, shape (3,)
//   mt::Tensor m = mt::constant({{1.f, 2.f}, {3.f, 4.f}});         // float32, shape (2, 2)
//   mt::Tensor t = mt::constant(std::vector<double>(6, 1.0), {2, 3});
//   mt::Tensor z = mt::zeros({2, 3});                              // float32 zeros
//   mt::Tensor h = mt::constant({1.5f, 0.1f}, {2}, mt::DType::kBFloat16);  // 1.5, 0.100098
//
// Errors throw mt::Error (InvalidArgument): ragged nested lists, a value count that does
// not match the shape, negative or overflowing dimensions.

#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "runtime/eager/tensor.h"

namespace mt {
namespace internal {

template <typename T>
inline constexpr bool kIsElement = kIsDTypeElement<T>;

// Creates a tensor of `dtype` and `shape` from `count` row-major host elements.
Tensor make_constant(DType dtype, const void* data, size_t count, absl::Span<const int64_t> shape);

// Fails with InvalidArgument when a nested list at `depth` has `actual` elements where its
// first sibling had `expected`.
void check_row_length(int64_t expected, size_t actual, size_t depth);

// Flattens a nested list into `out`, appending one dimension per level to `shape` and
// failing with InvalidArgument when sibling lists differ in length.
template <typename T>
void flatten(std::initializer_list<T> list, std::vector<T>& out, std::vector<int64_t>& shape,
             size_t depth) {
  if (shape.size() == depth) shape.push_back(static_cast<int64_t>(list.size()));
  check_row_length(shape[depth], list.size(), depth);
  out.insert(out.end(), list.begin(), list.end());
}
template <typename T, typename U>
void flatten(std::initializer_list<std::initializer_list<U>> list, std::vector<T>& out,
             std::vector<int64_t>& shape, size_t depth) {
  if (shape.size() == depth) shape.push_back(static_cast<int64_t>(list.size()));
  check_row_length(shape[depth], list.size(), depth);
  for (const auto& inner : list) flatten(inner, out, shape, depth + 1);
}
template <typename T>
Tensor from_vector(const std::vector<T>& values, absl::Span<const int64_t> shape) {
  static_assert(kIsElement<T>, "the element type must be one of the dtype table (core/dtype.h)");
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return make_constant(DType::kBool, bytes.data(), bytes.size(), shape);
  } else {
    return make_constant(dtype_of<T>(), values.data(), values.size(), shape);
  }
}

}  // namespace internal

template <typename T>
Tensor constant(T value) {
  return internal::from_vector(std::vector<T>{value}, {});
}
template <typename T>
Tensor constant(std::initializer_list<T> values) {
  return internal::from_vector(std::vector<T>(values), {static_cast<int64_t>(values.size())});
}
template <typename T>
Tensor constant(std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<T> flat;
  std::vector<int64_t> shape;
  internal::flatten<T>(rows, flat, shape, 0);
  return internal::from_vector(flat, shape);
}
template <typename T>
Tensor constant(std::initializer_list<std::initializer_list<std::initializer_list<T>>> blocks) {
  std::vector<T> flat;
  std::vector<int64_t> shape;
  internal::flatten<T>(blocks, flat, shape, 0);
  return internal::from_vector(flat, shape);
}
// Creates a tensor of `shape` from row-major `values`; their count must match the shape.
template <typename T>
Tensor constant(const std::vector<T>& values, absl::Span<const int64_t> shape) {
  return internal::from_vector(values, shape);
}

// Creates a `dtype` tensor of `shape` from row-major float `values`, each rounded to the
// nearest `dtype` value (ties to even; past the largest finite value: inf). `dtype` must be a
// floating dtype (InvalidArgument otherwise).
Tensor constant(const std::vector<float>& values, absl::Span<const int64_t> shape, DType dtype);

// Creates a tensor of `shape` with every element `value` (Fill).
Tensor fill(absl::Span<const int64_t> shape, double value, DType dtype = DType::kFloat32);
Tensor zeros(absl::Span<const int64_t> shape, DType dtype = DType::kFloat32);
Tensor ones(absl::Span<const int64_t> shape, DType dtype = DType::kFloat32);

// Creates the 1-D `dtype` tensor start, start + delta, ... up to `limit`, excluded (Range;
// tf.range), its length computed in the dtype as TensorFlow does. Element i is start + i *
// delta in double (start and delta rounded to the dtype first), rounded once: TensorFlow's
// CPU kernel adds delta step by step instead, so a long float range may differ from it in
// the last bits. A zero delta, or one that moves away from limit, is InvalidArgument;
// integer dtypes need integer arguments (mt.range infers the dtype as tf.range does).
Tensor range(double start, double limit, double delta = 1, DType dtype = DType::kFloat32);

}  // namespace mt
