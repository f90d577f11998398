#pragma once
// TypeList: the element types a kernel family is instantiated for, read from the dtype table
// (MT_DTYPE_TABLE in core/dtype.h) and shared by the CPU and CUDA registration helpers
// (kernels/cpu/cpu_kernels.h, kernels/cuda/cuda_kernels.h).
//
//   add_kernels(registry, OpId::kNeg, NumericTypes{}, make);   // every dtype but bool

#include <cstdint>
#include <type_traits>

#include "core/dtype.h"
#include "core/dtype_set.h"

namespace mt {

template <typename... Ts>
struct TypeList {};

namespace internal {

template <typename First, typename... Ts>
struct DropFirst {
  using type = TypeList<Ts...>;
};

// Keeps the types T of a TypeList for which Keep(dtype_of<T>()) holds.
template <typename List, bool (*Keep)(DType)>
struct Filter;
template <bool (*Keep)(DType)>
struct Filter<TypeList<>, Keep> {
  using type = TypeList<>;
};
template <typename T, typename... Ts, bool (*Keep)(DType)>
struct Filter<TypeList<T, Ts...>, Keep> {
  using rest = typename Filter<TypeList<Ts...>, Keep>::type;
  template <typename... Us>
  static TypeList<T, Us...> prepend(TypeList<Us...>);
  using type = std::conditional_t<Keep(dtype_of<T>()), decltype(prepend(rest{})), rest>;
};

constexpr bool is_numeric_dtype(DType d) { return dtype_kind(d) != DTypeKind::kBool; }
constexpr bool is_floating_dtype(DType d) { return is_floating(d); }
constexpr bool is_not_half_dtype(DType d) { return dtype_kind(d) != DTypeKind::kHalf; }
constexpr bool is_half_dtype(DType d) { return dtype_kind(d) == DTypeKind::kHalf; }
template <DTypeSet kSet>
constexpr bool is_in_set(DType d) {
  return dtype_in(d, kSet);
}

}  // namespace internal

#define MT_DTYPE_COMMA_TYPE(e, T, name, type_name, kind) , T
using AllTypes = internal::DropFirst<void MT_DTYPE_TABLE(MT_DTYPE_COMMA_TYPE)>::type;
#undef MT_DTYPE_COMMA_TYPE
using NumericTypes = internal::Filter<AllTypes, internal::is_numeric_dtype>::type;
using FloatTypes = internal::Filter<AllTypes, internal::is_floating_dtype>::type;
// The 2-byte floats (kind kHalf): bfloat16 and float16.
using HalfTypes = internal::Filter<AllTypes, internal::is_half_dtype>::type;

// The element types of a DTypeSet: TypesIn<op_dtypes(OpId::kExp)> is float, double,
// bfloat16, float16.
template <DTypeSet kSet>
using TypesIn = typename internal::Filter<AllTypes, internal::is_in_set<kSet>>::type;

// Drops bfloat16 and float16 from a list: for a backend that has no 2-byte kernels yet.
template <typename List>
using WithoutHalf = typename internal::Filter<List, internal::is_not_half_dtype>::type;

}  // namespace mt
