// oneDNN's sgemm behind onednn_gemm.h. oneDNN generates its kernels at run time for the
// machine's CPU; it is capped at the ISA level the CPU kernels use (MT_CPU_ISA, cpu_isa.h),
// so a run asked to stay at baseline or AVX2 keeps its GEMM there too.
#include "kernels/cpu/onednn_gemm.h"

#if MT_HAVE_ONEDNN
#include <omp.h>

#include <mutex>
#include <string>

#include "kernels/cpu/cpu_isa.h"
#include "oneapi/dnnl/dnnl.h"

namespace mt::cpu {
namespace {

dnnl_cpu_isa_t max_isa(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kBaseline:
      return dnnl_cpu_isa_sse41;
    case CpuIsa::kAvx2:
      return dnnl_cpu_isa_avx2;
    case CpuIsa::kAvx512:
      return dnnl_cpu_isa_all;
  }
  return dnnl_cpu_isa_all;
}

}  // namespace

void configure_onednn() {
  static std::once_flag once;
  std::call_once(once, [] { dnnl_set_max_cpu_isa(max_isa(cpu_isa())); });
}

bool onednn_sgemm(const GemmArgs& g, int threads) {
  configure_onednn();
  // OpenMP's thread count is per calling thread: set it for this one.
  if (omp_get_max_threads() != threads) omp_set_num_threads(threads);
  return dnnl_sgemm(g.ta ? 'T' : 'N', g.tb ? 'T' : 'N', g.m, g.n, g.k, 1.f,
                    static_cast<const float*>(g.a), g.lda, static_cast<const float*>(g.b), g.ldb,
                    0.f, static_cast<float*>(g.c), g.ldc) == dnnl_success;
}

const char* float32_gemm_name() {
  static const std::string name = [] {
    configure_onednn();
    const dnnl_version_t* v = dnnl_version();
    const char* isa = "sse41";
    switch (dnnl_get_effective_cpu_isa()) {
      case dnnl_cpu_isa_avx2:
      case dnnl_cpu_isa_avx2_vnni:
        isa = "avx2";
        break;
      case dnnl_cpu_isa_avx512_core:
      case dnnl_cpu_isa_avx512_core_vnni:
      case dnnl_cpu_isa_avx512_core_bf16:
      case dnnl_cpu_isa_avx512_core_amx:
        isa = "avx512";
        break;
      default:
        break;
    }
    return "onednn " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + " (" + isa + ")";
  }();
  return name.c_str();
}

}  // namespace mt::cpu

#else  // !MT_HAVE_ONEDNN

namespace mt::cpu {

void configure_onednn() {}
bool onednn_sgemm(const GemmArgs&, int) { return false; }
const char* float32_gemm_name() { return "eigen"; }

}  // namespace mt::cpu

#endif  // MT_HAVE_ONEDNN
