#pragma once
// float32 GEMM through oneDNN's sgemm, in builds that have it (MT_ONEDNN, docs/design.md,
// "Execution on CPUs"): faster than Eigen's product at one thread and at every core on the
// machines measured. It runs on OpenMP's team, the threads parallel_for uses.
//
//   if (!onednn_sgemm(args, intra_op_threads())) eigen_gemm(args);

#include "kernels/cpu/loops.h"

namespace mt::cpu {

// Computes args (float32) with oneDNN on `threads` threads; returns false, having done
// nothing, when the build has no oneDNN or oneDNN refuses the call.
bool onednn_sgemm(const GemmArgs& args, int threads);

// Caps oneDNN's generated kernels at the ISA level of the CPU kernels (MT_CPU_ISA), once;
// every use of oneDNN calls it first (onednn_conv.h's convolutions too). Thread-safe.
void configure_onednn();

// Names the float32 GEMM this build and machine use: "onednn <version> (<isa>)" or "eigen".
const char* float32_gemm_name();

}  // namespace mt::cpu
