#pragma once
// Internal to kernels/: how BatchMatMulV2 walks its batch. The inputs are (..., m, k) and
// (..., k, n) (or transposed: adj_x / adj_y, held in OpAttrs::transpose_a / transpose_b);
// their batch dimensions (all but the last two) broadcast as NumPy's do, and output batch i
// multiplies matrix a_index(i) of `a` by matrix b_index(i) of `b`. When each side's batch
// is either the output's own or a single matrix, the walk is uniform: a_index(i) is
// i * a_step with a_step 0 or 1 (so a GPU call can take stride 0), else the indices are
// listed.
//
//   BatchPlan p = plan_batch_matmul(*a.shape, *b.shape, attrs);
//   for (int64_t i = 0; i < p.batches; ++i) gemm(a + p.a_index(i) * p.a_matrix, ...);

#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "kernels/op_attrs.h"

namespace mt::internal {

struct BatchPlan {
  int64_t batches = 0;                  // output matrices
  int64_t m = 0, n = 0, k = 0;          // each product: (m x k) (k x n)
  bool ta = false, tb = false;          // read `a` / `b` transposed
  int64_t lda = 0, ldb = 0;             // columns of each stored matrix (row-major)
  int64_t a_matrix = 0, b_matrix = 0;   // elements of one stored matrix
  bool uniform = true;                  // a_step/b_step describe the walk
  int64_t a_step = 0, b_step = 0;       // 0 or 1 when uniform
  std::vector<int64_t> a_list, b_list;  // the indices when not uniform

  int64_t a_index(int64_t i) const { return uniform ? i * a_step : a_list[i]; }
  int64_t b_index(int64_t i) const { return uniform ? i * b_step : b_list[i]; }
};

// Plans a validated BatchMatMulV2 call (infer_batch_matmul accepted it).
BatchPlan plan_batch_matmul(const Shape& a, const Shape& b, const OpAttrs& attrs);

}  // namespace mt::internal
