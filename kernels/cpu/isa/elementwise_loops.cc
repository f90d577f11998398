// Element-wise loops for one ISA level: the binary ops, the unary ops and AddN on the native
// types. Plain loops the compiler vectorises for the level's flags; Exp uses Eigen's
// vectorised exp (elementwise_ops.h).
#include <cstring>

#include "kernels/cpu/isa/elementwise_ops.h"
#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

// Elements per AddN block: 8 KiB of float32, small enough to stay in L1 beside the inputs.
constexpr int64_t kAddNBlock = 2048;

template <typename T>
void add_n_loop(const void* const* inputs, int64_t count, int64_t begin, int64_t end, void* vout) {
  T* out = static_cast<T*>(vout);
  for (int64_t start = begin; start < end; start += kAddNBlock) {
    const int64_t len = end - start < kAddNBlock ? end - start : kAddNBlock;
    T* __restrict o = out + start;
    const T* first = static_cast<const T*>(inputs[0]) + start;
    if (count == 1) {
      std::memcpy(o, first, len * sizeof(T));
      continue;
    }
    const T* second = static_cast<const T*>(inputs[1]) + start;
    for (int64_t j = 0; j < len; ++j) o[j] = add_op(first[j], second[j]);
    for (int64_t k = 2; k < count; ++k) {
      const T* in = static_cast<const T*>(inputs[k]) + start;
      for (int64_t j = 0; j < len; ++j) o[j] = add_op(o[j], in[j]);
    }
  }
}

template <typename T>
void fill_numeric(CpuLoops& loops) {
  const int d = static_cast<int>(dtype_of<T>());
  loops.binary[kAdd][d] = &binary_loop<AddFn, T>;
  loops.binary[kSub][d] = &binary_loop<SubFn, T>;
  loops.binary[kMul][d] = &binary_loop<MulFn, T>;
  loops.unary[kNeg][d] = &unary_loop<NegFn, T>;
  loops.unary[kAbs][d] = &unary_loop<AbsFn, T>;
  loops.unary[kRelu][d] = &unary_loop<ReluFn, T>;
  loops.add_n[d] = &add_n_loop<T>;
  if constexpr (std::is_floating_point_v<T>) {
    loops.binary[kDiv][d] = &binary_loop<DivFn, T>;
    loops.unary[kExp][d] = &exp_loop<T>;
  }
}

}  // namespace

// bfloat16 and float16 have loops of their own (half_loops.cc).
void fill_elementwise_loops(CpuLoops& loops) {
  [&]<typename... Ts>(TypeList<Ts...>) {
    (fill_numeric<Ts>(loops), ...);
  }(WithoutHalf<NumericTypes>{});
}

}  // namespace mt::cpu::MT_ISA_NS
