// GEMM for one ISA level: Eigen's blocked, packed product (the level's micro-kernel) over
// strided row-major views. The matmul kernel splits C into tiles across threads and calls
// this once per tile.
#include "kernels/cpu/isa/isa_eigen.h"
#include "kernels/type_list.h"

namespace mt::cpu::MT_ISA_NS {
namespace {

template <typename T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstView = Eigen::Map<const Matrix<T>, 0, Eigen::OuterStride<>>;
template <typename T>
using View = Eigen::Map<Matrix<T>, 0, Eigen::OuterStride<>>;

template <typename T>
void gemm(const GemmArgs& g) {
  using C = ComputeType<T>;  // integers wrap (Note [Integer overflow])
  const ConstView<C> a(static_cast<const C*>(g.a), g.ta ? g.k : g.m, g.ta ? g.m : g.k,
                       Eigen::OuterStride<>(g.lda));
  const ConstView<C> b(static_cast<const C*>(g.b), g.tb ? g.n : g.k, g.tb ? g.k : g.n,
                       Eigen::OuterStride<>(g.ldb));
  View<C> c(static_cast<C*>(g.c), g.m, g.n, Eigen::OuterStride<>(g.ldc));
  if (!g.ta && !g.tb) {
    c.noalias() = a * b;
  } else if (g.ta && !g.tb) {
    c.noalias() = a.transpose() * b;
  } else if (!g.ta && g.tb) {
    c.noalias() = a * b.transpose();
  } else {
    c.noalias() = a.transpose() * b.transpose();
  }
}

}  // namespace

// Every dtype MatMul accepts but the 2-byte floats, which widen to float32 (matmul_kernels.cc).
void fill_gemm_loops(CpuLoops& loops) {
  [&]<typename... Ts>(TypeList<Ts...>) {
    ((loops.gemm[static_cast<int>(dtype_of<Ts>())] = &gemm<Ts>), ...);
  }(WithoutHalf<NumericTypes>{});
}

}  // namespace mt::cpu::MT_ISA_NS
