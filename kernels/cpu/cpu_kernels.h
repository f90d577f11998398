#pragma once
// Internal to kernels/cpu/: the registration function of each row, the helper
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
#include "kernels/op_kernels.h"
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

// The CPU kernels of each row, defined by its family's file (Note [Registering kernels] in
// kernels/op_kernels.h).
template <OpId kOp>
absl::Status add_op_kernels(KernelRegistry& registry);
MT_OP_TABLE(MT_DECLARE_OP_KERNELS)

}  // namespace mt::cpu
