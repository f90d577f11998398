// Element-wise loops of bfloat16 and float16 for one ISA level: the binary ops, the unary
// ops and AddN, each running the float32 loop on widened blocks.
//
// Note [Half loops]: a loop widens up to kHalfBlock elements of each input into float32
// buffers on the stack (half_convert.h, exact), runs the float32 loop of the op on them and
// rounds the block to H once, so each element gets the bits the float32 kernel gives on the
// widened tensor, rounded once (Note [Half kernels on the CPU] in widened_kernel.h). Exp
// depends on where Eigen's vectorised exp starts and ends (its last run % packet elements go
// element by element): the kernels call these loops on ranges that start at multiples of 64
// (parallel_for), kHalfBlock is a multiple of 64 and the buffers are 64-byte aligned, so
// every element meets the path it meets in one float32 pass over the tensor.
#include <algorithm>

#include "kernels/cpu/isa/elementwise_ops.h"
#include "kernels/cpu/isa/half_convert.h"
#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

static_assert(kHalfBlock % 64 == 0, "Note [Half loops]");

template <typename Fn, typename H>
void half_binary_loop(const void* va, int64_t sa, const void* vb, int64_t sb, void* vout,
                      int64_t n) {
  const H* a = static_cast<const H*>(va);
  const H* b = static_cast<const H*>(vb);
  H* out = static_cast<H*>(vout);
  alignas(64) float wa[kHalfBlock], wb[kHalfBlock], wout[kHalfBlock];
  if (sa == 0) widen(a, wa, 1);
  if (sb == 0) widen(b, wb, 1);
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - start);
    if (sa != 0) widen(a + start, wa, len);
    if (sb != 0) widen(b + start, wb, len);
    binary_loop<Fn, float>(wa, sa, wb, sb, wout, len);
    narrow(wout, out + start, len);
  }
}

// Runs kFloatLoop (a float32 UnaryLoop) on widened blocks.
template <typename H, void (*kFloatLoop)(const void*, void*, int64_t)>
void half_unary_loop(const void* vin, void* vout, int64_t n) {
  const H* in = static_cast<const H*>(vin);
  H* out = static_cast<H*>(vout);
  alignas(64) float win[kHalfBlock], wout[kHalfBlock];
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - start);
    widen(in + start, win, len);
    kFloatLoop(win, wout, len);
    narrow(wout, out + start, len);
  }
}

// Adds the inputs in order in float32, as the float32 AddN loop does, and rounds once. One
// input still goes through float32, so a signalling NaN comes out quiet as it does there.
template <typename H>
void half_add_n_loop(const void* const* inputs, int64_t count, int64_t begin, int64_t end,
                     void* vout) {
  H* out = static_cast<H*>(vout);
  alignas(64) float sum[kHalfBlock], term[kHalfBlock];
  for (int64_t start = begin; start < end; start += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, end - start);
    widen(static_cast<const H*>(inputs[0]) + start, sum, len);
    for (int64_t k = 1; k < count; ++k) {
      widen(static_cast<const H*>(inputs[k]) + start, term, len);
      for (int64_t j = 0; j < len; ++j) sum[j] = add_op(sum[j], term[j]);
    }
    narrow(sum, out + start, len);
  }
}

template <typename H>
void fill_half(CpuLoops& loops) {
  const int d = static_cast<int>(dtype_of<H>());
  loops.binary[kAdd][d] = &half_binary_loop<AddFn, H>;
  loops.binary[kSub][d] = &half_binary_loop<SubFn, H>;
  loops.binary[kMul][d] = &half_binary_loop<MulFn, H>;
  loops.binary[kDiv][d] = &half_binary_loop<DivFn, H>;
  loops.unary[kNeg][d] = &half_unary_loop<H, &unary_loop<NegFn, float>>;
  loops.unary[kAbs][d] = &half_unary_loop<H, &unary_loop<AbsFn, float>>;
  loops.unary[kRelu][d] = &half_unary_loop<H, &unary_loop<ReluFn, float>>;
  loops.unary[kExp][d] = &half_unary_loop<H, &exp_loop<float>>;
  loops.add_n[d] = &half_add_n_loop<H>;
}

}  // namespace

void fill_half_loops(CpuLoops& loops) {
  [&]<typename... Hs>(TypeList<Hs...>) { (fill_half<Hs>(loops), ...); }(HalfTypes{});
}

}  // namespace mt::cpu::MT_ISA_NS
