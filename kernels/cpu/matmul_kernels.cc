// CPU kernels of MatMul: Eigen's GEMM over row-major views of the buffers.
#include <Eigen/Core>
#include <cstdint>

#include "kernels/cpu/cpu_kernels.h"

namespace mt::cpu {
namespace {

template <typename T>
using RowMajorMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename T>
using ConstMatrixMap = Eigen::Map<const RowMajorMatrix<T>>;

// Returns a view of a rank-2 input.
template <typename T>
ConstMatrixMap<T> matrix_input(const KernelContext& ctx, size_t i) {
  const Shape& shape = *ctx.inputs[i].shape;
  return ConstMatrixMap<T>(input_data<T>(ctx, i), shape.dim(0), shape.dim(1));
}

template <typename T>
absl::Status matmul_kernel(const KernelContext& ctx) {
  using C = ComputeType<T>;  // integers wrap (Note [Integer overflow])
  const Shape& out_shape = *ctx.output.shape;
  if (out_shape.num_elements() == 0) return absl::OkStatus();
  Eigen::Map<RowMajorMatrix<C>> out(reinterpret_cast<C*>(output_data<T>(ctx)), out_shape.dim(0),
                                    out_shape.dim(1));
  const ConstMatrixMap<C> a = matrix_input<C>(ctx, 0);
  const ConstMatrixMap<C> b = matrix_input<C>(ctx, 1);
  const bool ta = ctx.attrs->transpose_a;
  const bool tb = ctx.attrs->transpose_b;
  if ((ta ? a.rows() : a.cols()) == 0) {
    out.setZero();  // an empty inner dimension sums nothing
  } else if (!ta && !tb) {
    out.noalias() = a * b;
  } else if (ta && !tb) {
    out.noalias() = a.transpose() * b;
  } else if (!ta && tb) {
    out.noalias() = a * b.transpose();
  } else {
    out.noalias() = a.transpose() * b.transpose();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status register_matmul_kernels(KernelRegistry& registry) {
  return add_kernels(registry, OpId::kMatMul, NumericTypes{}, [](auto tag) -> KernelFn {
    return &matmul_kernel<typename decltype(tag)::type>;
  });
}

}  // namespace mt::cpu
