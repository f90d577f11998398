#pragma once
// The instruction-set level the CPU kernels run at, chosen once per process at run time.
//
// Note [Kernels per ISA]: the inner loops (kernels/cpu/isa/) are compiled three times, for
// the x86-64 baseline (SSE2), for AVX2+FMA+F16C and for AVX-512 (F, DQ, BW, VL), each copy in
// a namespace of its own with Eigen renamed to match (isa/isa_eigen.h), so no inline code
// compiled for one level can stand in for another's at link time. At the first kernel the
// best level the CPU and the operating system support is picked (cpuid through
// __builtin_cpu_supports, and directly for F16C), and its table of loops (loops.h) serves the whole
// process. The environment variable MT_CPU_ISA=baseline|avx2|avx512 lowers the level (never above
// what the CPU supports), so tests can run every level on one machine.

namespace mt::cpu {

enum class CpuIsa { kBaseline, kAvx2, kAvx512 };

// Returns the level in use: the best supported, lowered by MT_CPU_ISA when set.
CpuIsa cpu_isa();

// Returns "baseline", "avx2" or "avx512".
const char* cpu_isa_name(CpuIsa isa);

// Returns the best level this CPU supports, ignoring MT_CPU_ISA.
CpuIsa best_supported_cpu_isa();

}  // namespace mt::cpu
