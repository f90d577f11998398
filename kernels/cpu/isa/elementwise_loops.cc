// Element-wise loops for one ISA level: the binary ops, the unary ops and AddN, each a loop
// over its element functor (elementwise_fns.h) that the compiler vectorises for the level's
// flags, filled for every row of MT_UNARY_OPS and MT_BINARY_OPS and every dtype it accepts.
#include <cstring>

#include "kernels/cpu/isa/elementwise_fns.h"
#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

template <OpId kOp, typename T>
void binary_loop(const void* va, int64_t sa, const void* vb, int64_t sb, void* vout, int64_t n) {
  using Out = decltype(BinaryFn<kOp>{}(T{}, T{}));  // T, or bool for the comparisons
  const T* a = static_cast<const T*>(va);
  const T* b = static_cast<const T*>(vb);
  Out* __restrict out = static_cast<Out*>(vout);
  const BinaryFn<kOp> fn;
  if constexpr (requires { BinaryFn<kOp>::template loop<T>; }) {
    return BinaryFn<kOp>::template loop<T>(a, sa, b, sb, out, n);
  }
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a[i], b[i]);
  } else if (sa == 0) {
    const T x = a[0];
    for (int64_t i = 0; i < n; ++i) out[i] = fn(x, b[i]);
  } else {
    const T y = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = fn(a[i], y);
  }
}

template <OpId kOp, typename T>
void unary_loop(const void* vin, void* vout, int64_t n) {
  const T* in = static_cast<const T*>(vin);
  T* __restrict out = static_cast<T*>(vout);
  if constexpr (requires { UnaryFn<kOp>::template loop<T>; }) {
    UnaryFn<kOp>::template loop<T>(in, out, n);
  } else {
    const UnaryFn<kOp> fn;
    for (int64_t i = 0; i < n; ++i) out[i] = fn(in[i]);
  }
}

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

// True when kOp's row accepts T and T is not a 2-byte float (those widen: half_loops.cc).
template <OpId kOp, typename T>
constexpr bool kNativeLoop = dtype_in(dtype_of<T>(), op_dtypes(kOp)) &&
                             dtype_kind(dtype_of<T>()) != DTypeKind::kHalf;

template <OpId kOp, typename... Ts>
void fill_unary(CpuLoops& loops, TypeList<Ts...>) {
  auto one = [&]<typename T>(DTypeTag<T>) {
    if constexpr (kNativeLoop<kOp, T>) {
      loops.unary[static_cast<int>(kOp)][static_cast<int>(dtype_of<T>())] = &unary_loop<kOp, T>;
    }
  };
  (one(DTypeTag<Ts>{}), ...);
}

template <OpId kOp, typename... Ts>
void fill_binary(CpuLoops& loops, TypeList<Ts...>) {
  auto one = [&]<typename T>(DTypeTag<T>) {
    if constexpr (kNativeLoop<kOp, T>) {
      loops.binary[static_cast<int>(kOp)][static_cast<int>(dtype_of<T>())] = &binary_loop<kOp, T>;
    }
  };
  (one(DTypeTag<Ts>{}), ...);
}

}  // namespace

// bfloat16 and float16 have loops of their own (half_loops.cc).
void fill_elementwise_loops(CpuLoops& loops) {
#define MT_FILL_UNARY(Name, ...) fill_unary<OpId::k##Name>(loops, AllTypes{});
#define MT_FILL_BINARY(Name, ...) fill_binary<OpId::k##Name>(loops, AllTypes{});
  MT_UNARY_OPS(MT_FILL_UNARY)
  MT_BINARY_OPS(MT_FILL_BINARY)
#undef MT_FILL_UNARY
#undef MT_FILL_BINARY
  [&]<typename... Ts>(TypeList<Ts...>) {
    ((loops.add_n[static_cast<int>(dtype_of<Ts>())] = &add_n_loop<Ts>), ...);
  }(WithoutHalf<NumericTypes>{});
}

}  // namespace mt::cpu::MT_ISA_NS
