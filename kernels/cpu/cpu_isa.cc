// Picks the ISA level of the CPU kernels (Note [Kernels per ISA] in cpu_isa.h).
#include "kernels/cpu/cpu_isa.h"

#include <cpuid.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace mt::cpu {

namespace {

// Returns whether the CPU has F16C (the float16 conversions the AVX2 and AVX-512 levels are
// compiled with, kernels/CMakeLists.txt). Read from CPUID: __builtin_cpu_supports has no
// "f16c" in Clang and answers false for it in GCC 12. Every CPU with AVX2 that Intel or AMD
// made has it; a virtual CPU model may leave it out.
bool has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

}  // namespace

CpuIsa best_supported_cpu_isa() {
  // libgcc checks XCR0 too, so these are false when the OS does not save the registers.
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
    return CpuIsa::kAvx512;
  }
  return avx2 ? CpuIsa::kAvx2 : CpuIsa::kBaseline;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kBaseline:
      return "baseline";
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

namespace {

CpuIsa pick() {
  const CpuIsa best = best_supported_cpu_isa();
  const char* env = std::getenv("MT_CPU_ISA");
  if (env == nullptr || *env == '\0') return best;
  for (CpuIsa isa : {CpuIsa::kBaseline, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (std::strcmp(env, cpu_isa_name(isa)) == 0) return isa < best ? isa : best;
  }
  std::fprintf(stderr, "minitensor: ignoring MT_CPU_ISA=%s (expected baseline, avx2 or avx512)\n",
               env);
  return best;
}

}  // namespace

CpuIsa cpu_isa() {
  static const CpuIsa isa = pick();
  return isa;
}

}  // namespace mt::cpu
