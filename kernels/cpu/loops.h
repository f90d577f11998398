#pragma once
// CpuLoops: the inner loops of the CPU kernels, one table per ISA level (Note [Kernels per
// ISA] in cpu_isa.h). The kernels (kernels/cpu/*_kernels.cc) do shapes, broadcasting and the
// split across threads; these loops do the arithmetic over contiguous runs, vectorised for
// the level they were compiled for. An entry is null where the op has no kernel for the
// dtype. The files that fill a table (isa/*.cc) see only this header, plain pointers and
// counts: nothing that another level's copy could replace at link time.
//
// The tables are keyed by the op itself (OpId), so an element-wise op's loop is the row of
// its family in kernels/op_table.h plus its element functor; register_cpu_kernels checks
// that every registered kernel finds its loops at every level.
//
//   const CpuLoops& loops = cpu_loops();
//   loops.binary[int(OpId::kAddV2)][int(DType::kFloat32)](a, 1, b, 1, out, n);

#include <cstdint>

#include "core/dtype.h"
#include "kernels/op_id.h"

namespace mt::cpu {

// out[i] = a[i * sa] op b[i * sb] for i in [0, n); sa and sb are 0 or 1, not both 0.
using BinaryLoop = void (*)(const void* a, int64_t sa, const void* b, int64_t sb, void* out,
                            int64_t n);
// out[i] = op(in[i]) for i in [0, n).
using UnaryLoop = void (*)(const void* in, void* out, int64_t n);
// out[i] = inputs[0][i] + ... + inputs[count - 1][i] for i in [begin, end); count >= 1.
using AddNLoop = void (*)(const void* const* inputs, int64_t count, int64_t begin, int64_t end,
                          void* out);
// *acc = combine(*acc, reduce(in[0 .. n))).
using ReduceLoop = void (*)(const void* in, int64_t n, void* acc);
// acc[i] = combine(acc[i], in[i]) for i in [0, n).
using AccumulateLoop = void (*)(const void* in, void* acc, int64_t n);
// out[i] = cast(in[i]) for i in [0, n) (Note [Float to integer casts] in isa/cast_loops.cc).
using CastLoop = void (*)(const void* in, void* out, int64_t n);

// C (m x n, row stride ldc) = op(A) op(B), row-major: op(A) is m x k, stored as m x k (lda)
// or, when ta, as k x m; op(B) is k x n, stored as k x n (ldb) or, when tb, as n x k.
// Integers wrap (Note [Integer overflow] in cpu_kernels.h). k > 0.
struct GemmArgs {
  int64_t m, n, k;
  const void* a;
  int64_t lda;
  bool ta;
  const void* b;
  int64_t ldb;
  bool tb;
  void* c;
  int64_t ldc;
};
using GemmLoop = void (*)(const GemmArgs& args);

struct CpuLoops {
  const char* isa;
  BinaryLoop binary[kNumOps][kNumDTypes];  // the rows of MT_BINARY_OPS
  UnaryLoop unary[kNumOps][kNumDTypes];    // the rows of MT_UNARY_OPS
  AddNLoop add_n[kNumDTypes];
  ReduceLoop reduce[kNumOps][kNumDTypes];  // Sum (Mean uses it) and Max
  AccumulateLoop accumulate[kNumOps][kNumDTypes];
  CastLoop cast[kNumDTypes][kNumDTypes];  // [source][destination]
  GemmLoop gemm[kNumDTypes];
};

// Returns the table of the level cpu_isa() picked, filled on first use.
const CpuLoops& cpu_loops();

// Returns the table of one level, for tests that compare levels; null when this CPU cannot
// run it.
const CpuLoops* cpu_loops_for(int isa_level);

// Each level's isa/*.cc files fill their part of its table.
#define MT_DECLARE_ISA_FILLERS(ns)              \
  namespace ns {                                \
  void fill_elementwise_loops(CpuLoops& loops); \
  void fill_half_loops(CpuLoops& loops);        \
  void fill_reduce_loops(CpuLoops& loops);      \
  void fill_cast_loops(CpuLoops& loops);        \
  void fill_gemm_loops(CpuLoops& loops);        \
  }
MT_DECLARE_ISA_FILLERS(isa_baseline)
MT_DECLARE_ISA_FILLERS(isa_avx2)
MT_DECLARE_ISA_FILLERS(isa_avx512)
#undef MT_DECLARE_ISA_FILLERS

}  // namespace mt::cpu
