// The loops of bfloat16 and float16 for one ISA level: the binary ops, the unary ops, AddN,
// and Sum and Max into float32 accumulators (Note [Half reductions] in reduction_kernels.cc).
//
// Note [Half loops]: a loop widens up to kHalfBlock elements of each input into float32
// buffers on the stack (half_convert.h, exact), runs this level's float32 loop of the op on
// them (the very function of the table, so the same machine code decides every bit, a NaN's
// payload included) and rounds the block to H once: each element gets the bits the float32
// kernel gives on the widened tensor, rounded once (Note [Half kernels on the CPU] in
// widened_kernel.h). Exp depends on where Eigen's vectorised exp starts and ends (its last
// len % packet elements go element by element): the kernels call these loops on ranges that
// start at multiples of 64 (parallel_for), kHalfBlock is a multiple of 64 and the buffers are
// 64-byte aligned, so every element meets the path it meets in one float32 pass.
#include <algorithm>
#include <cstdint>

#include "kernels/cpu/isa/half_convert.h"
#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

static_assert(kHalfBlock % 64 == 0, "Note [Half loops]");

// This level's float32 loops, copied from its table by fill_half_loops, which loops.cc
// runs after the fillers of the native loops.
struct FloatLoops {
  BinaryLoop binary[kNumOps];
  UnaryLoop unary[kNumOps];
  ReduceLoop reduce[kNumOps];
  AccumulateLoop accumulate[kNumOps];
};
FloatLoops float_loops;

template <OpId kOp, typename H>
void half_binary_loop(const void* va, int64_t sa, const void* vb, int64_t sb, void* vout,
                      int64_t n) {
  const H* a = static_cast<const H*>(va);
  const H* b = static_cast<const H*>(vb);
  alignas(64) float wa[kHalfBlock], wb[kHalfBlock], wout[kHalfBlock];
  if (sa == 0) widen(a, wa, 1);
  if (sb == 0) widen(b, wb, 1);
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - start);
    if (sa != 0) widen(a + start, wa, len);
    if (sb != 0) widen(b + start, wb, len);
    if constexpr (op_is_comparison(kOp)) {  // widening is exact: compare the float32 values
      float_loops.binary[static_cast<int>(kOp)](wa, sa, wb, sb, static_cast<bool*>(vout) + start,
                                                len);
    } else {
      float_loops.binary[static_cast<int>(kOp)](wa, sa, wb, sb, wout, len);
      narrow(wout, static_cast<H*>(vout) + start, len);
    }
  }
}

template <OpId kOp, typename H>
void half_unary_loop(const void* vin, void* vout, int64_t n) {
  const H* in = static_cast<const H*>(vin);
  H* out = static_cast<H*>(vout);
  alignas(64) float win[kHalfBlock], wout[kHalfBlock];
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - start);
    widen(in + start, win, len);
    float_loops.unary[static_cast<int>(kOp)](win, wout, len);
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

// Floats of widened runs each thread keeps between calls: reduce_run hands the reduce loops
// runs of at most 2 * 65536 elements; longer ones (from some rank-3 layouts) allocate.
constexpr int64_t kKeptRun = 2 * 65536;

// Floats on the heap, grown on demand. A type of this file's own: std::vector's destructor
// would be inline code shared with other levels (Note [Kernels per ISA]).
struct RunBuffer {
  float* data = nullptr;
  int64_t size = 0;
  ~RunBuffer() { delete[] data; }
  float* reserve(int64_t n) {
    if (n > size) {
      delete[] data;
      data = new float[n];
      size = n;
    }
    return data;
  }
};

// Widens in[0 .. n) into a float32 buffer at the address, modulo 64 bytes, that the float32
// tensor widened from `in` would hold it at: which of several NaNs Eigen's Max returns depends
// on where its vector loop starts. Tensor buffers are 256-byte aligned, so input element i
// sits at 2 * i modulo 128 and its float32 twin at 4 * i modulo 64.
// Returns this thread's kept buffer, shared by bfloat16 and float16.
RunBuffer& kept_buffer() {
  thread_local RunBuffer kept;
  return kept;
}

template <typename H>
const float* widened_run(const H* in, int64_t n, RunBuffer& own) {
  float* buffer = (n <= kKeptRun ? kept_buffer() : own).reserve(n + 32);
  const uintptr_t base = reinterpret_cast<uintptr_t>(buffer);
  float* out = buffer + (64 - base % 64) % 64 / sizeof(float) +
               reinterpret_cast<uintptr_t>(in) / sizeof(H) % 16;
  widen(in, out, n);
  return out;
}

// *acc = combine(*acc, reduce(in[0 .. n))) with the float32 loop on the widened run.
template <OpId kOp, typename H>
void half_reduce(const void* in, int64_t n, void* acc) {
  RunBuffer own;
  float_loops.reduce[static_cast<int>(kOp)](widened_run(static_cast<const H*>(in), n, own), n, acc);
}

// acc[i] = combine(acc[i], in[i]) with the float32 loop, a widened block at a time.
template <OpId kOp, typename H>
void half_accumulate(const void* vin, void* vacc, int64_t n) {
  const H* in = static_cast<const H*>(vin);
  float* acc = static_cast<float*>(vacc);
  alignas(64) float w[kHalfBlock];
  for (int64_t start = 0; start < n; start += kHalfBlock) {
    const int64_t len = std::min(kHalfBlock, n - start);
    widen(in + start, w, len);
    float_loops.accumulate[static_cast<int>(kOp)](w, acc + start, len);
  }
}

// Sets the loops of H for every element-wise row that accepts it, AddN, Sum, Max, Min and
// Prod.
template <typename H>
void fill_half(CpuLoops& loops) {
  const int d = static_cast<int>(dtype_of<H>());
  constexpr DType kH = dtype_of<H>();
#define MT_HALF_UNARY(Name, ...)                                                          \
  if constexpr (dtype_in(kH, op_dtypes(OpId::k##Name))) {                                 \
    loops.unary[static_cast<int>(OpId::k##Name)][d] = &half_unary_loop<OpId::k##Name, H>; \
  }
#define MT_HALF_BINARY(Name, ...)                                                           \
  if constexpr (dtype_in(kH, op_dtypes(OpId::k##Name))) {                                   \
    loops.binary[static_cast<int>(OpId::k##Name)][d] = &half_binary_loop<OpId::k##Name, H>; \
  }
  MT_UNARY_OPS(MT_HALF_UNARY)
  MT_BINARY_OPS(MT_HALF_BINARY)
#undef MT_HALF_UNARY
#undef MT_HALF_BINARY
  loops.add_n[d] = &half_add_n_loop<H>;
  [&]<OpId... kOps>(std::integer_sequence<OpId, kOps...>) {
    ((loops.reduce[static_cast<int>(kOps)][d] = &half_reduce<kOps, H>), ...);
    ((loops.accumulate[static_cast<int>(kOps)][d] = &half_accumulate<kOps, H>), ...);
  }
  (std::integer_sequence<OpId, OpId::kSum, OpId::kMax, OpId::kMin, OpId::kProd>{});
}

}  // namespace

void fill_half_loops(CpuLoops& loops) {
  const int f = static_cast<int>(DType::kFloat32);
  for (int op = 0; op < kNumOps; ++op) {
    float_loops.binary[op] = loops.binary[op][f];
    float_loops.unary[op] = loops.unary[op][f];
    float_loops.reduce[op] = loops.reduce[op][f];
    float_loops.accumulate[op] = loops.accumulate[op][f];
  }
  [&]<typename... Hs>(TypeList<Hs...>) { (fill_half<Hs>(loops), ...); }(HalfTypes{});
}

}  // namespace mt::cpu::MT_ISA_NS
