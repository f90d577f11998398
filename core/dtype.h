#pragma once
// DType: the element types a tensor can hold, as one table (MT_DTYPE_TABLE) that every
// per-dtype fact is read from: the enum, sizes, names, kinds, dtype_of<T>, visit_dtype, the
// kernels' type lists (kernels/type_list.h) and dtype sets (kernels/shape_fns.h). Adding a
// dtype is one row here plus its kernels (Note [Adding a dtype] in docs/design.md).
//
//   size_t bytes = dtype_size(DType::kFloat32);            // 4
//   visit_dtype(t.dtype(), [&](auto tag) {                   // tag is DTypeTag<T>
//     using T = typename decltype(tag)::type;
//     ...
//   });

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/check.h"
#include "core/half.h"

namespace mt {

// The kind of a dtype: what arithmetic on it means. kHalf is a 2-byte float that kernels
// compute in float32 (loads widen, stores round).
enum class DTypeKind : uint8_t { kFloat, kHalf, kInt, kBool };

// The dtype table, in DType order (the order is part of the wire format: append only).
// Columns: enumerator, C++ element type, name (NumPy style, used in printing and in messages),
// type name (TensorFlow's C style, used where TensorFlow says "float" or "half"), kind.
#define MT_DTYPE_TABLE(X)                               \
  X(kFloat32, float, "float32", "float", kFloat)        \
  X(kFloat64, double, "float64", "double", kFloat)      \
  X(kInt32, int32_t, "int32", "int32", kInt)            \
  X(kInt64, int64_t, "int64", "int64", kInt)            \
  X(kBool, bool, "bool", "bool", kBool)                 \
  X(kBFloat16, bfloat16, "bfloat16", "bfloat16", kHalf) \
  X(kFloat16, float16, "float16", "half", kHalf)

#define MT_DTYPE_ENUMERATOR(e, T, name, type_name, kind) e,
enum class DType : uint8_t { MT_DTYPE_TABLE(MT_DTYPE_ENUMERATOR) };
#undef MT_DTYPE_ENUMERATOR

struct DTypeInfo {
  const char* name;
  const char* type_name;
  size_t size;
  DTypeKind kind;
};

// kDTypeInfo[kNumDTypes] is the row of every value outside the enum ("unknown", size 0), so
// messages about corrupt input can still name it.
#define MT_DTYPE_INFO(e, T, name, type_name, kind) {name, type_name, sizeof(T), DTypeKind::kind},
inline constexpr DTypeInfo kDTypeInfo[] = {
    MT_DTYPE_TABLE(MT_DTYPE_INFO){"unknown", "unknown", 0, DTypeKind::kBool}};
#undef MT_DTYPE_INFO
inline constexpr int kNumDTypes = static_cast<int>(sizeof(kDTypeInfo) / sizeof(kDTypeInfo[0])) - 1;

// Returns the table row of `dtype` (the "unknown" row for a value outside the enum).
constexpr const DTypeInfo& dtype_info(DType dtype) {
  const int i = static_cast<int>(dtype);
  return kDTypeInfo[i < kNumDTypes ? i : kNumDTypes];
}

// Returns the NumPy-style name used in printing and messages: "float32", "float16", "bool".
constexpr const char* dtype_name(DType dtype) { return dtype_info(dtype).name; }

// Returns the C-style name TensorFlow uses in OOM messages: "float", "double", "half".
constexpr const char* dtype_type_name(DType dtype) { return dtype_info(dtype).type_name; }

// Returns the size of one element in bytes.
constexpr size_t dtype_size(DType dtype) { return dtype_info(dtype).size; }

// Returns what arithmetic on `dtype` means.
constexpr DTypeKind dtype_kind(DType dtype) { return dtype_info(dtype).kind; }

// Returns true for the floating-point dtypes, 2-byte ones included.
constexpr bool is_floating(DType dtype) {
  return dtype_kind(dtype) == DTypeKind::kFloat || dtype_kind(dtype) == DTypeKind::kHalf;
}

template <typename T>
struct DTypeTag {
  using type = T;
};

// Maps a C++ element type to its DType at compile time.
template <typename T>
constexpr DType dtype_of();
#define MT_DTYPE_OF(e, T, name, type_name, kind) \
  template <>                                    \
  constexpr DType dtype_of<T>() {                \
    return DType::e;                             \
  }
MT_DTYPE_TABLE(MT_DTYPE_OF)
#undef MT_DTYPE_OF

// True when T is the element type of some dtype.
#define MT_DTYPE_IS(e, T, name, type_name, kind) || std::is_same_v<Elem, T>
template <typename Elem>
inline constexpr bool kIsDTypeElement = false MT_DTYPE_TABLE(MT_DTYPE_IS);
#undef MT_DTYPE_IS

// Calls fn(DTypeTag<T>{}) with T the C++ type of `dtype`; returns what fn returns.
template <typename Fn>
decltype(auto) visit_dtype(DType dtype, Fn&& fn) {
#define MT_DTYPE_CASE(e, T, name, type_name, kind) \
  case DType::e:                                   \
    return fn(DTypeTag<T>{});
  switch (dtype) { MT_DTYPE_TABLE(MT_DTYPE_CASE) }
#undef MT_DTYPE_CASE
  MT_CHECK(false && "unknown dtype");
}

}  // namespace mt
