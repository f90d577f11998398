// CPU kernels of MatMul and BatchMatMulV2. float32 products of some size go to oneDNN's sgemm where
// the build has it (onednn_gemm.h). Every other product is split into a grid of tiles, one per
// thread, and each tile is one call of the ISA level's GEMM (Eigen's packed product,
// loops.h).
//
// Note [GEMM tiles]: the grid (gm x gn) uses at most intra_op_threads() tiles and minimises
// a tile's work plus the cost of packing its panels, tm * tn + 16 * (tm + tn) for a tm x tn
// tile, so 1024 x 1024 on 16 threads is 4 x 4 tiles of 256 x 256 and a matrix-vector
// product splits its columns. Each tile packs its own panels: more packing than one shared
// blocked product, but a tile's k-loop has no synchronisation at all. Products under
// kSerialWork multiply-adds stay on the calling thread.
//
// BatchMatMulV2 runs its products one after another, each split as above, or, when there are
// at least as many products as threads, one product per thread at a time (batch_matmul.h
// tells which matrices each output batch multiplies).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/batch_matmul.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/onednn_gemm.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/widened_kernel.h"

namespace mt::cpu {
namespace {

constexpr int64_t kSerialWork = int64_t{96} * 96 * 96;
// float32 products from this many multiply-adds go to oneDNN; under it, its call costs more
// than Eigen's whole product.
constexpr int64_t kOnednnWork = int64_t{32} * 32 * 32;

struct Grid {
  int64_t rows = 1, cols = 1;  // tiles down and across
};

Grid choose_grid(int64_t m, int64_t n, int threads) {
  Grid best;
  double best_cost = -1;
  for (int64_t gm = 1; gm <= threads && gm <= m; ++gm) {
    const int64_t gn = std::min<int64_t>(threads / gm, n);
    const double tm = double((m + gm - 1) / gm), tn = double((n + gn - 1) / gn);
    const double cost = tm * tn + 16 * (tm + tn);
    if (best_cost < 0 || cost < best_cost) {
      best_cost = cost;
      best = Grid{gm, gn};
    }
  }
  return best;
}

}  // namespace

template <typename T>
void run_gemm(const GemmArgs& g, int threads) {
  const int64_t work = g.m * g.n * g.k;
  if constexpr (std::is_same_v<T, float>) {
    if (work >= kOnednnWork && onednn_sgemm(g, work < kSerialWork ? 1 : threads)) return;
  }
  const GemmLoop gemm = cpu_loops().gemm[static_cast<int>(dtype_of<T>())];
  if (threads == 1 || work < kSerialWork) return gemm(g);
  const Grid grid = choose_grid(g.m, g.n, threads);
  const int64_t tm = (g.m + grid.rows - 1) / grid.rows, tn = (g.n + grid.cols - 1) / grid.cols;
  parallel_for(grid.rows * grid.cols, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t i0 = (t / grid.cols) * tm, j0 = (t % grid.cols) * tn;
      GemmArgs tile = g;
      tile.m = std::min(tm, g.m - i0);
      tile.n = std::min(tn, g.n - j0);
      if (tile.m <= 0 || tile.n <= 0) continue;
      tile.a = static_cast<const T*>(g.a) + (g.ta ? i0 : i0 * g.lda);
      tile.b = static_cast<const T*>(g.b) + (g.tb ? j0 * g.ldb : j0);
      tile.c = static_cast<T*>(g.c) + i0 * g.ldc + j0;
      gemm(tile);
    }
  });
}

template void run_gemm<float>(const GemmArgs& g, int threads);
template void run_gemm<double>(const GemmArgs& g, int threads);

namespace {

template <typename T>
absl::Status matmul_kernel(const KernelContext& ctx) {
  const Shape& a_shape = *ctx.inputs[0].shape;
  const Shape& b_shape = *ctx.inputs[1].shape;
  GemmArgs g;
  g.ta = ctx.attrs->transpose_a;
  g.tb = ctx.attrs->transpose_b;
  g.m = ctx.output.shape->dim(0);
  g.n = ctx.output.shape->dim(1);
  g.k = g.ta ? a_shape.dim(0) : a_shape.dim(1);
  g.a = input_data<T>(ctx, 0);
  g.lda = a_shape.dim(1);
  g.b = input_data<T>(ctx, 1);
  g.ldb = b_shape.dim(1);
  g.c = output_data<T>(ctx);
  g.ldc = g.n;
  if (g.m == 0 || g.n == 0) return absl::OkStatus();
  if (g.k == 0) {  // an empty inner dimension sums nothing
    std::memset(g.c, 0, g.m * g.n * sizeof(T));
    return absl::OkStatus();
  }
  run_gemm<T>(g, intra_op_threads());
  return absl::OkStatus();
}

template <typename T>
absl::Status batch_matmul_kernel(const KernelContext& ctx) {
  const internal::BatchPlan p =
      internal::plan_batch_matmul(*ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.attrs);
  T* c = output_data<T>(ctx);
  if (p.batches == 0 || p.m == 0 || p.n == 0) return absl::OkStatus();
  if (p.k == 0) {  // an empty inner dimension sums nothing
    std::memset(c, 0, p.batches * p.m * p.n * sizeof(T));
    return absl::OkStatus();
  }
  auto product = [&](int64_t i, int threads) {
    const GemmArgs g{p.m,
                     p.n,
                     p.k,
                     input_data<T>(ctx, 0) + p.a_index(i) * p.a_matrix,
                     p.lda,
                     p.ta,
                     input_data<T>(ctx, 1) + p.b_index(i) * p.b_matrix,
                     p.ldb,
                     p.tb,
                     c + i * p.m * p.n,
                     p.n};
    run_gemm<T>(g, threads);
  };
  const int threads = intra_op_threads();
  if (p.batches >= threads || p.m * p.n * p.k < kSerialWork) {
    parallel_for(p.batches, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) product(i, 1);
    });
  } else {
    for (int64_t i = 0; i < p.batches; ++i) product(i, threads);
  }
  return absl::OkStatus();
}

}  // namespace

MT_OP_KERNELS(MatMul) {
  return add_kernels(registry, OpId::kMatMul, NumericTypes{}, [](auto tag) -> KernelFn {
    using T = typename decltype(tag)::type;
    if constexpr (kIsHalf<T>) {
      return &widened_kernel<T, &matmul_kernel<float>>;
    } else {
      return &matmul_kernel<T>;
    }
  });
}
MT_OP_KERNELS(BatchMatMulV2) {
  return add_kernels(registry, OpId::kBatchMatMulV2, NumericTypes{}, [](auto tag) -> KernelFn {
    using T = typename decltype(tag)::type;
    if constexpr (kIsHalf<T>) {
      return &widened_kernel<T, &batch_matmul_kernel<float>>;
    } else {
      return &batch_matmul_kernel<T>;
    }
  });
}

}  // namespace mt::cpu
