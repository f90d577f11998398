#pragma once
// Internal to kernels/cpu/: the registration function of each CPU op family, the helper
// that registers one kernel template for a list of element types, and the input and output
// views; the integer arithmetic is in wrapping_math.h, the inner loops in loops.h.
//
//   return add_kernels(registry, OpId::kNeg, NumericTypes{}, [](auto tag) -> KernelFn {
//     return &unary_kernel<NegOp, typename decltype(tag)::type>;
//   });

#include <cstdint>

#include "absl/status/status.h"
#include "core/check.h"
#include "core/dtype.h"
#include "core/status.h"
#include "kernels/cpu/wrapping_math.h"
#include "kernels/kernel_registry.h"
#include "kernels/shape_fns.h"
#include "kernels/type_list.h"

namespace mt::cpu {

// Registers make(DTypeTag<T>{}) as the CPU kernel of `op` for every T in the list. The
// list must be exactly the dtypes the op accepts (op_dtypes), which it checks.
template <typename... Ts, typename Make>
absl::Status add_kernels(KernelRegistry& registry, OpId op, TypeList<Ts...>, Make make) {
  MT_CHECK(((dtype_bit(dtype_of<Ts>()) | ...)) == op_dtypes(op));
  absl::Status status;
  ((status.ok() ? status = registry.add(op, DeviceType::kCPU, dtype_of<Ts>(), make(DTypeTag<Ts>{}))
                : status),
   ...);
  return status;
}

// True for the 2-byte float element types, bfloat16 and float16.
template <typename T>
inline constexpr bool kIsHalf = dtype_kind(dtype_of<T>()) == DTypeKind::kHalf;

// Returns input `i`'s elements, typed.
template <typename T>
const T* input_data(const KernelContext& ctx, size_t i) {
  return static_cast<const T*>(ctx.inputs[i].data);
}

// Returns the output's elements, typed.
template <typename T>
T* output_data(const KernelContext& ctx) {
  return static_cast<T*>(ctx.output.data);
}

// One registration function per op family (one .cc file each).
absl::Status register_data_kernels(KernelRegistry& registry);
absl::Status register_matmul_kernels(KernelRegistry& registry);
absl::Status register_add_n_kernels(KernelRegistry& registry);
absl::Status register_binary_kernels(KernelRegistry& registry);
absl::Status register_unary_kernels(KernelRegistry& registry);
absl::Status register_reduction_kernels(KernelRegistry& registry);
// The array ops (MT_ARRAY_OPS): array_kernels.cc registers its own and calls
// register_combine_kernels (combine_kernels.cc) for ConcatV2, Pack, SplitV, GatherV2, OneHot.
absl::Status register_array_kernels(KernelRegistry& registry);
absl::Status register_combine_kernels(KernelRegistry& registry);
absl::Status register_random_kernels(KernelRegistry& registry);
absl::Status register_nn_kernels(KernelRegistry& registry);
absl::Status register_select_kernels(KernelRegistry& registry);     // SelectV2
absl::Status register_arg_kernels(KernelRegistry& registry);        // ArgMax, ArgMin
absl::Status register_segment_kernels(KernelRegistry& registry);    // UnsortedSegmentSum
absl::Status register_optimizer_kernels(KernelRegistry& registry);  // ResourceApplyAdam

}  // namespace mt::cpu
