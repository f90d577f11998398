// cpu_loops(): builds each ISA level's table once and hands out the one cpu_isa() picked.
#include "kernels/cpu/loops.h"

#include "kernels/cpu/cpu_isa.h"

namespace mt::cpu {
namespace {

template <void (*... Fill)(CpuLoops&)>
CpuLoops make(const char* name) {
  CpuLoops loops{};
  loops.isa = name;
  (Fill(loops), ...);
  return loops;
}

// The fill functions are compiled for their level, so only a supported level's are called;
// each table is built on first use. fill_half_loops comes last: it reads the float32 loops.
const CpuLoops* table(CpuIsa isa) {
  if (isa > best_supported_cpu_isa()) return nullptr;
  switch (isa) {
    case CpuIsa::kBaseline: {
      static const CpuLoops loops =
          make<isa_baseline::fill_elementwise_loops, isa_baseline::fill_reduce_loops,
               isa_baseline::fill_cast_loops, isa_baseline::fill_gemm_loops,
               isa_baseline::fill_half_loops>("baseline");
      return &loops;
    }
    case CpuIsa::kAvx2: {
      static const CpuLoops loops =
          make<isa_avx2::fill_elementwise_loops, isa_avx2::fill_reduce_loops,
               isa_avx2::fill_cast_loops, isa_avx2::fill_gemm_loops, isa_avx2::fill_half_loops>(
              "avx2");
      return &loops;
    }
    case CpuIsa::kAvx512: {
      static const CpuLoops loops =
          make<isa_avx512::fill_elementwise_loops, isa_avx512::fill_reduce_loops,
               isa_avx512::fill_cast_loops, isa_avx512::fill_gemm_loops,
               isa_avx512::fill_half_loops>("avx512");
      return &loops;
    }
  }
  return nullptr;
}

}  // namespace

const CpuLoops& cpu_loops() {
  static const CpuLoops* loops = table(cpu_isa());
  return *loops;
}

const CpuLoops* cpu_loops_for(int isa_level) {
  if (isa_level < 0 || isa_level > static_cast<int>(CpuIsa::kAvx512)) return nullptr;
  return table(static_cast<CpuIsa>(isa_level));
}

}  // namespace mt::cpu
