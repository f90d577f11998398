#pragma once
// run_gemm: one product of the CPU's GEMM, as MatMul runs it (matmul_kernels.cc): oneDNN's
// sgemm for float32 where it pays, else the ISA level's loop over tiles split across
// threads. Conv2D's im2col path (conv_kernels.cc) multiplies through it.

#include "kernels/cpu/loops.h"

namespace mt::cpu {

// Computes g (k > 0) on up to `threads` threads; float and double.
template <typename T>
void run_gemm(const GemmArgs& g, int threads);

extern template void run_gemm<float>(const GemmArgs& g, int threads);
extern template void run_gemm<double>(const GemmArgs& g, int threads);

}  // namespace mt::cpu
