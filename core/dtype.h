#pragma once
// DType: the element types a tensor can hold, their sizes and names, and the one switch
// that turns a runtime DType into a compile-time type.
//
//   size_t bytes = dtype_size(DType::kFloat32);            // 4
//   visit_dtype(t.dtype(), [&](auto tag) {                   // tag is DTypeTag<T>
//     using T = typename decltype(tag)::type;
//     ...
//   });

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/check.h"

namespace mt {

enum class DType : uint8_t { kFloat32, kFloat64, kInt32, kInt64, kBool };
inline constexpr int kNumDTypes = 5;

// Returns the NumPy-style name used in printing: "float32", "int64", "bool".
const char* dtype_name(DType dtype);

// Returns the C-style name TensorFlow uses in OOM messages: "float", "double", "int32".
const char* dtype_type_name(DType dtype);

// Returns the size of one element in bytes.
constexpr size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
      return 8;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
  }
  return 0;
}

template <typename T>
struct DTypeTag {
  using type = T;
};

// Maps a C++ element type to its DType at compile time.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kFloat64;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}

// Calls fn(DTypeTag<T>{}) with T the C++ type of `dtype`; returns what fn returns.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32:
      return fn(DTypeTag<float>{});
    case DType::kFloat64:
      return fn(DTypeTag<double>{});
    case DType::kInt32:
      return fn(DTypeTag<int32_t>{});
    case DType::kInt64:
      return fn(DTypeTag<int64_t>{});
    case DType::kBool:
      return fn(DTypeTag<bool>{});
  }
  MT_CHECK(false && "unknown dtype");
}

}  // namespace mt
