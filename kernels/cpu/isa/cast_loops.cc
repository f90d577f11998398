// Cast loops for one ISA level: every (source, destination) pair of dtypes.
#include <cmath>
#include <limits>

#include "kernels/cpu/isa/half_convert.h"
#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

// Note [Float to integer casts]: in range, a float converts as static_cast does (it
// truncates toward zero). Out of range, where static_cast is undefined, it saturates to
// the integer's lowest or highest value, and NaN becomes 0 (as XLA defines it).
// bfloat16 and float16 convert through float: widening is exact, and narrowing rounds once
// from float to nearest even (so float64 -> float16 rounds twice, as Eigen and TensorFlow do).
template <typename Dst, typename Src>
Dst cast_value(Src x) {
  if constexpr (dtype_kind(dtype_of<Src>()) == DTypeKind::kHalf) {
    return cast_value<Dst>(static_cast<float>(x));
  } else if constexpr (dtype_kind(dtype_of<Dst>()) == DTypeKind::kHalf) {
    return Dst(cast_value<float>(x));
  } else if constexpr (std::is_same_v<Dst, bool>) {
    return x != Src(0);
  } else if constexpr (std::is_floating_point_v<Src> && std::is_integral_v<Dst>) {
    constexpr Dst kLowest = std::numeric_limits<Dst>::lowest();
    constexpr Dst kMax = std::numeric_limits<Dst>::max();
    if (std::isnan(x)) return 0;
    if (x <= static_cast<Src>(kLowest)) return kLowest;
    if (x >= static_cast<Src>(kMax)) return kMax;  // kMax rounds up to a power of two
    return static_cast<Dst>(x);
  } else {
    return static_cast<Dst>(x);
  }
}

// Between float32 and bfloat16 or float16 the vector conversions of half_convert.h give
// the bits cast_value gives.
template <typename Src, typename Dst>
void cast_loop(const void* vin, void* vout, int64_t n) {
  const Src* in = static_cast<const Src*>(vin);
  Dst* __restrict out = static_cast<Dst*>(vout);
  constexpr bool kHalfSrc = dtype_kind(dtype_of<Src>()) == DTypeKind::kHalf;
  constexpr bool kHalfDst = dtype_kind(dtype_of<Dst>()) == DTypeKind::kHalf;
  if constexpr (kHalfSrc && std::is_same_v<Dst, float>) {
    widen(in, out, n);
  } else if constexpr (std::is_same_v<Src, float> && kHalfDst) {
    narrow(in, out, n);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = cast_value<Dst>(in[i]);
  }
}

template <typename Src, typename... Dsts>
void fill_from(CpuLoops& loops) {
  ((loops.cast[static_cast<int>(dtype_of<Src>())][static_cast<int>(dtype_of<Dsts>())] =
        &cast_loop<Src, Dsts>),
   ...);
}

template <typename... Ts>
void fill_all(CpuLoops& loops, TypeList<Ts...>) {
  (fill_from<Ts, Ts...>(loops), ...);
}

}  // namespace

void fill_cast_loops(CpuLoops& loops) { fill_all(loops, AllTypes{}); }

}  // namespace mt::cpu::MT_ISA_NS
