// CPU kernels of BatchMatMulV2: broadcast batch dimensions (equal, one side a single matrix,
// both sides broadcasting), every transpose, every numeric dtype, empty batches and
// matrices, against a naive loop; and the shape function's errors.
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/batch_matmul.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

HostTensor from_doubles(const Shape& shape, DType dtype, const std::vector<double>& v) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> t;
    for (double x : v) t.push_back(static_cast<T>(static_cast<float>(x)));
    return HostTensor::make<T>(shape, t);
  });
}

Shape with_matrix(std::vector<int64_t> batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return Shape::make(batch).value();
}

// Returns the product computed by a naive loop, walking the broadcast batch by coordinates.
std::vector<double> reference(const Shape& sa, const std::vector<double>& a, const Shape& sb,
                              const std::vector<double>& b, const Shape& out, bool ta, bool tb) {
  const int ro = out.rank(), ra = sa.rank(), rb = sb.rank();
  const int64_t m = out.dim(ro - 2), n = out.dim(ro - 1), k = sa.dim(ta ? ra - 2 : ra - 1);
  std::vector<double> c(out.num_elements());
  const int64_t batches = m * n == 0 ? 0 : out.num_elements() / (m * n);
  for (int64_t i = 0; i < batches; ++i) {
    int64_t ia = 0, ib = 0, rest = i, sa_stride = 1, sb_stride = 1;
    for (int d = ro - 3; d >= 0; --d) {  // the batch coordinate of output dimension d
      const int64_t coord = rest % out.dim(d);
      rest /= out.dim(d);
      const int da = d - (ro - ra), db = d - (ro - rb);
      if (da >= 0) {
        ia += (sa.dim(da) == 1 ? 0 : coord) * sa_stride;
        sa_stride *= sa.dim(da);
      }
      if (db >= 0) {
        ib += (sb.dim(db) == 1 ? 0 : coord) * sb_stride;
        sb_stride *= sb.dim(db);
      }
    }
    const double* pa = a.data() + ia * m * k;
    const double* pb = b.data() + ib * k * n;
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t s = 0; s < n; ++s) {
        double sum = 0;
        for (int64_t j = 0; j < k; ++j) {
          sum += (ta ? pa[j * m + r] : pa[r * k + j]) * (tb ? pb[s * k + j] : pb[j * n + s]);
        }
        c[i * m * n + r * n + s] = sum;
      }
    }
  }
  return c;
}

constexpr DType kNumeric[] = {DType::kFloat32, DType::kFloat64,  DType::kInt32,
                              DType::kInt64,   DType::kBFloat16, DType::kFloat16};

// Small integers keep every product and sum exact in every dtype, so results compare exactly.
TEST(BatchMatMulKernelTest, MatchesANaiveLoopForEveryBroadcastTransposeAndDtype) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> value(-3, 3);
  const std::vector<int64_t> batches[][2] = {{{3}, {3}}, {{4}, {}},        {{}, {4}},
                                             {{1}, {5}}, {{2, 1}, {1, 3}}, {{2, 3}, {3}},
                                             {{0}, {0}}, {{2, 0}, {1}},    {{2, 1, 2}, {1, 2, 1}},
                                             {{7}, {7}}};
  const int64_t mkn[][3] = {{2, 3, 4}, {5, 9, 3}, {0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {40, 9, 33}};
  for (DType dtype : kNumeric) {
    for (const auto& bt : batches) {
      for (const auto& d : mkn) {
        for (int t = 0; t < 4; ++t) {
          const bool ta = (t & 1) != 0, tb = (t & 2) != 0;
          const Shape sa = ta ? with_matrix(bt[0], d[1], d[0]) : with_matrix(bt[0], d[0], d[1]);
          const Shape sb = tb ? with_matrix(bt[1], d[2], d[1]) : with_matrix(bt[1], d[1], d[2]);
          SCOPED_TRACE(absl::StrCat(dtype_name(dtype), " ", sa.to_string(), " x ", sb.to_string(),
                                    " ta=", ta, " tb=", tb));
          std::vector<double> a(sa.num_elements()), b(sb.num_elements());
          for (double& x : a) x = value(rng);
          for (double& x : b) x = value(rng);
          OpAttrs attrs;
          attrs.transpose_a = ta;
          attrs.transpose_b = tb;
          absl::StatusOr<HostTensor> out =
              run_cpu(OpId::kBatchMatMulV2,
                      {from_doubles(sa, dtype, a), from_doubles(sb, dtype, b)}, attrs);
          ASSERT_TRUE(out.ok()) << out.status();
          EXPECT_EQ(out->dtype(), dtype);
          EXPECT_EQ(testutil::as_doubles(*out), reference(sa, a, sb, b, out->shape(), ta, tb));
        }
      }
    }
  }
}

TEST(BatchMatMulKernelTest, OutputShapeBroadcastsTheBatch) {
  const auto shape = [](std::initializer_list<int64_t> a, std::initializer_list<int64_t> b) {
    const HostTensor x = HostTensor::meta(a, DType::kFloat32);
    const HostTensor y = HostTensor::meta(b, DType::kFloat32);
    const TensorMeta metas[2] = {{&x.shape(), DType::kFloat32}, {&y.shape(), DType::kFloat32}};
    absl::StatusOr<OutputMeta> out = infer_output(OpId::kBatchMatMulV2, metas, {});
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->shape : Shape();
  };
  EXPECT_EQ(shape({5, 2, 3}, {3, 4}), S({5, 2, 4}));
  EXPECT_EQ(shape({2, 3}, {7, 1, 3, 4}), S({7, 1, 2, 4}));
  EXPECT_EQ(shape({2, 1, 2, 3}, {5, 3, 4}), S({2, 5, 2, 4}));
  EXPECT_EQ(shape({2, 3}, {3, 4}), S({2, 4}));
}

TEST(BatchMatMulKernelTest, PlanIsUniformUnlessBothSidesBroadcast) {
  const OpAttrs attrs;
  EXPECT_TRUE(internal::plan_batch_matmul(S({4, 2, 3}), S({4, 3, 2}), attrs).uniform);
  const internal::BatchPlan one = internal::plan_batch_matmul(S({4, 2, 3}), S({3, 2}), attrs);
  EXPECT_TRUE(one.uniform);
  EXPECT_EQ(one.a_step, 1);
  EXPECT_EQ(one.b_step, 0);
  const internal::BatchPlan both =
      internal::plan_batch_matmul(S({2, 1, 2, 3}), S({1, 3, 3, 2}), attrs);
  EXPECT_FALSE(both.uniform);
  EXPECT_EQ(both.batches, 6);
  EXPECT_THAT(both.a_list, ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_THAT(both.b_list, ElementsAre(0, 1, 2, 0, 1, 2));
}

// Products with no element whose plans overflowed the size of a matrix (a zero batch of huge
// matrices) or listed each of 2^40 broadcast batches of empty matrices (8 TiB of indices);
// fuzz/corpus/worker_request/worker_request-batch-matmul-of-nothing sends both.
TEST(BatchMatMulKernelTest, ProductsOfNothingWithHugeDimensions) {
  constexpr int64_t kHuge = int64_t{1} << 40, kMany = int64_t{1} << 20;
  const HostTensor a = HostTensor::make<float>({0, kHuge, kHuge}, {});
  const HostTensor b = HostTensor::make<float>({0, kHuge, 2}, {});
  absl::StatusOr<HostTensor> c = run_cpu(OpId::kBatchMatMulV2, {a, b}, OpAttrs());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->shape(), S({0, kHuge, 2}));
  const HostTensor x = HostTensor::make<float>({kMany, 1, 0, 1}, {});
  const HostTensor y = HostTensor::make<float>({1, kMany, 1, 0}, {});
  absl::StatusOr<HostTensor> z = run_cpu(OpId::kBatchMatMulV2, {x, y}, OpAttrs());
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_EQ(z->shape(), S({kMany, kMany, 0, 0}));
}

TEST(BatchMatMulKernelTest, RejectsLowRanksMismatchedMatricesAndBatches) {
  const auto error = [](std::initializer_list<int64_t> a, std::initializer_list<int64_t> b,
                        bool ta = false, DType db = DType::kFloat32) {
    const HostTensor x = HostTensor::meta(a, DType::kFloat32);
    const HostTensor y = HostTensor::meta(b, db);
    const TensorMeta metas[2] = {{&x.shape(), DType::kFloat32}, {&y.shape(), db}};
    OpAttrs attrs;
    attrs.transpose_a = ta;
    absl::StatusOr<OutputMeta> out = infer_output(OpId::kBatchMatMulV2, metas, attrs);
    EXPECT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(out.status().message());
  };
  EXPECT_EQ(error({3}, {3, 2}), "[BatchMatMulV2] In[0] ndims must be >= 2: 1");
  EXPECT_EQ(error({2, 3, 2}, {4}), "[BatchMatMulV2] In[1] ndims must be >= 2: 1");
  EXPECT_EQ(error({2, 2, 3}, {2, 4, 5}),
            "[BatchMatMulV2] Matrix size-incompatible: In[0]: (2, 2, 3), In[1]: (2, 4, 5)");
  EXPECT_EQ(error({2, 3, 2}, {2, 2, 5}, true),
            "[BatchMatMulV2] Matrix size-incompatible: In[0]: (2, 3, 2), In[1]: (2, 2, 5) with "
            "adj_x");
  EXPECT_EQ(error({2, 2, 3}, {3, 3, 5}),
            "[BatchMatMulV2] In[0] and In[1] must have compatible batch dimensions: (2, 2, 3) vs. "
            "(3, 3, 5)");
  EXPECT_EQ(error({2, 2, 3}, {2, 3, 5}, false, DType::kFloat64),
            "[BatchMatMulV2] dtypes differ: float32 vs float64");
}

}  // namespace
}  // namespace mt
