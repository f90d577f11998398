// register_cpu_kernels: the one place that lists the CPU op families, and the check that
// every kernel it registered finds its loops at every ISA level this CPU runs.
#include "absl/strings/str_cat.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/loops.h"
#include "kernels/kernel_registry.h"

namespace mt {
namespace cpu {
namespace {

// Returns whether `loops` has what the CPU kernel of (op, dtype) calls.
bool has_loop(const CpuLoops& loops, OpId op, DType dtype) {
  const int o = static_cast<int>(op), d = static_cast<int>(dtype);
  const bool half = dtype_kind(dtype) == DTypeKind::kHalf;
  switch (op) {
#define MT_UNARY_CASE(Name, ...) case OpId::k##Name:
    MT_UNARY_OPS(MT_UNARY_CASE)
    return loops.unary[o][d] != nullptr;
#define MT_BINARY_CASE(Name, ...) case OpId::k##Name:
    MT_BINARY_OPS(MT_BINARY_CASE)
    return loops.binary[o][d] != nullptr;
#undef MT_UNARY_CASE
#undef MT_BINARY_CASE
    case OpId::kAddN:
      return loops.add_n[d] != nullptr;
    case OpId::kSum:
    case OpId::kMean:
    case OpId::kMax:
    case OpId::kMin:
    case OpId::kProd:
    case OpId::kAny:
    case OpId::kAll: {
      const int r = static_cast<int>(op == OpId::kMean ? OpId::kSum : op);
      return loops.reduce[r][d] != nullptr && loops.accumulate[r][d] != nullptr;
    }
    case OpId::kMatMul:  // the 2-byte floats widen to float32
    case OpId::kBatchMatMulV2:
      return loops.gemm[half ? static_cast<int>(DType::kFloat32) : d] != nullptr;
    case OpId::kCast:
      for (int to = 0; to < kNumDTypes; ++to) {
        if (loops.cast[d][to] == nullptr) return false;
      }
      return true;
    default:  // no loop table: the kernel is self-contained
      return true;
  }
}

// Returns Internal naming the first dtype of an op's row without a CPU kernel, or the first
// registered CPU kernel whose loops are missing at some level (a forgotten fill line would
// otherwise call a null pointer).
absl::Status check_loops(const KernelRegistry& registry) {
  for (int level = 0; level <= static_cast<int>(CpuIsa::kAvx512); ++level) {
    const CpuLoops* loops = cpu_loops_for(level);
    if (loops == nullptr) continue;
    for (int o = 0; o < kNumOps; ++o) {
      for (int d = 0; d < kNumDTypes; ++d) {
        const OpId op = static_cast<OpId>(o);
        const DType dtype = static_cast<DType>(d);
        const bool registered = registry.find(op, DeviceType::kCPU, dtype) != nullptr;
        if (registered != dtype_in(dtype, op_dtypes(op))) {
          return absl::InternalError(absl::StrCat("[", op_name(op), "] the CPU kernels of ",
                                                  dtype_name(dtype), " differ from its row"));
        }
        if (!registered || has_loop(*loops, op, dtype)) continue;
        return absl::InternalError(absl::StrCat("[", op_name(op), "] the ", loops->isa,
                                                " CPU loops have no ", dtype_name(dtype), " loop"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace cpu

absl::Status register_cpu_kernels(KernelRegistry& registry) {
  {
    using cpu::add_op_kernels;
    MT_OP_TABLE(MT_ADD_OP_KERNELS)
  }
  return cpu::check_loops(registry);
}

}  // namespace mt
