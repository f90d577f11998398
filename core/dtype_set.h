#pragma once
// DTypeSet: a set of dtypes, one bit per DType, read from the dtype table. The op table
// (kernels/op_table.h) names each op's dtypes with these sets.
//
//   constexpr DTypeSet s = kFloatDTypes | dtype_bit(DType::kInt32);
//   dtype_in(DType::kInt64, s);  // false

#include <cstdint>

#include "core/dtype.h"

namespace mt {

using DTypeSet = uint32_t;

constexpr DTypeSet dtype_bit(DType dtype) { return DTypeSet{1} << static_cast<int>(dtype); }

constexpr bool dtype_in(DType dtype, DTypeSet set) { return (set & dtype_bit(dtype)) != 0; }

// Returns the set of dtypes whose kind is `kind`.
constexpr DTypeSet dtypes_of_kind(DTypeKind kind) {
  DTypeSet set = 0;
  for (int d = 0; d < kNumDTypes; ++d) {
    if (dtype_kind(static_cast<DType>(d)) == kind) set |= dtype_bit(static_cast<DType>(d));
  }
  return set;
}

inline constexpr DTypeSet kAllDTypes = (DTypeSet{1} << kNumDTypes) - 1;
inline constexpr DTypeSet kBoolDTypes = dtypes_of_kind(DTypeKind::kBool);
inline constexpr DTypeSet kIntDTypes = dtypes_of_kind(DTypeKind::kInt);
inline constexpr DTypeSet kHalfDTypes = dtypes_of_kind(DTypeKind::kHalf);
// float32, float64, bfloat16, float16.
inline constexpr DTypeSet kFloatDTypes = dtypes_of_kind(DTypeKind::kFloat) | kHalfDTypes;
// Every dtype but bool.
inline constexpr DTypeSet kNumericDTypes = kAllDTypes & ~kBoolDTypes;

}  // namespace mt
