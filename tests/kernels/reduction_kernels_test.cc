// CPU kernels of Sum, Mean and Max: axes, negative axes, keep_dims, reduce_all, empty
// reductions, NaN, and random shapes against a reference for every axis subset.
#include <cmath>
#include <limits>
#include <random>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename T>
class ReductionKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(ReductionKernelTest, testutil::NumericTypes);

HostTensor reduce(OpId op, const HostTensor& in, std::vector<int64_t> axes, bool keep_dims = false,
                  bool reduce_all = false) {
  OpAttrs attrs;
  attrs.axes.assign(axes.begin(), axes.end());
  attrs.keep_dims = keep_dims;
  attrs.reduce_all = reduce_all;
  absl::StatusOr<HostTensor> out = run_cpu(op, {in}, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : HostTensor();
}

TYPED_TEST(ReductionKernelTest, ReducesEachAxisOfAMatrix) {
  using T = TypeParam;
  const HostTensor m = HostTensor::make<T>({2, 3}, vec<T>({1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(reduce(OpId::kSum, m, {0}).values<T>(), vec<T>({5, 7, 9}));
  EXPECT_EQ(reduce(OpId::kSum, m, {1}).values<T>(), vec<T>({6, 15}));
  EXPECT_EQ(reduce(OpId::kSum, m, {-1}).values<T>(), vec<T>({6, 15}));
  EXPECT_EQ(reduce(OpId::kMax, m, {0}).values<T>(), vec<T>({4, 5, 6}));
  EXPECT_EQ(reduce(OpId::kMax, m, {-1}).values<T>(), vec<T>({3, 6}));
  EXPECT_EQ(reduce(OpId::kMean, m, {1}).values<T>(), vec<T>({2, 5}));
  const std::vector<T> mean0 = std::is_integral_v<T> ? vec<T>({2, 3, 4}) : vec<T>({2.5, 3.5, 4.5});
  EXPECT_EQ(reduce(OpId::kMean, m, {0}).values<T>(), mean0);
}

TYPED_TEST(ReductionKernelTest, ReduceAllAndKeepDims) {
  using T = TypeParam;
  const HostTensor m = HostTensor::make<T>({2, 3}, vec<T>({1, 2, 3, 4, 5, 6}));
  const HostTensor all = reduce(OpId::kSum, m, {}, false, true);
  EXPECT_EQ(all.shape(), S({}));
  EXPECT_THAT(all.values<T>(), ElementsAre(T(21)));
  const HostTensor kept = reduce(OpId::kMax, m, {0, 1}, true);
  EXPECT_EQ(kept.shape(), S({1, 1}));
  EXPECT_THAT(kept.values<T>(), ElementsAre(T(6)));
  const HostTensor col = reduce(OpId::kSum, m, {1}, true);
  EXPECT_EQ(col.shape(), S({2, 1}));
  EXPECT_EQ(col.values<T>(), vec<T>({6, 15}));
  const HostTensor none = reduce(OpId::kMax, m, {});  // no axes: reduces nothing
  EXPECT_EQ(none.shape(), m.shape());
  EXPECT_EQ(none.values<T>(), vec<T>({1, 2, 3, 4, 5, 6}));
  const HostTensor scalar = HostTensor::make<T>({}, vec<T>({-3}));
  EXPECT_THAT(reduce(OpId::kMean, scalar, {}, false, true).values<T>(), ElementsAre(T(-3)));
}

TYPED_TEST(ReductionKernelTest, EmptyReductionsGiveTheIdentity) {
  using T = TypeParam;
  const HostTensor e = HostTensor::make<T>({2, 0}, {});
  const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  EXPECT_THAT(reduce(OpId::kMax, e, {1}).values<T>(), ElementsAre(lowest, lowest));
  EXPECT_THAT(reduce(OpId::kSum, e, {1}).values<T>(), ElementsAre(T(0), T(0)));
  EXPECT_THAT(reduce(OpId::kMax, e, {}, false, true).values<T>(), ElementsAre(lowest));
  const std::vector<T> mean = reduce(OpId::kMean, e, {1}).values<T>();
  ASSERT_EQ(mean.size(), 2u);
  if constexpr (std::is_integral_v<T>) {
    EXPECT_THAT(mean, ElementsAre(T(0), T(0)));  // our choice: Note [Reductions]
  } else {
    EXPECT_TRUE(std::isnan(mean[0]) && std::isnan(mean[1]));
  }
  EXPECT_EQ(reduce(OpId::kSum, e, {0}).shape(), S({0}));
}

TEST(ReductionKernelTest, IntegerMeanTruncatesTowardZero) {
  const HostTensor a = HostTensor::make<int32_t>({2, 2}, {-1, -2, 7, 8});
  EXPECT_THAT(reduce(OpId::kMean, a, {1}).values<int32_t>(), ElementsAre(-1, 7));
}

TEST(ReductionKernelTest, MaxPropagatesNaN) {
  const HostTensor a = HostTensor::make<float>({3, 2}, {1, NAN, 5, 2, NAN, 3});
  const std::vector<float> rows = reduce(OpId::kMax, a, {1}).values<float>();
  EXPECT_TRUE(std::isnan(rows[0]));
  EXPECT_EQ(rows[1], 5);
  EXPECT_TRUE(std::isnan(rows[2]));
  const std::vector<float> cols = reduce(OpId::kMax, a, {0}).values<float>();
  EXPECT_TRUE(std::isnan(cols[0]));
  EXPECT_TRUE(std::isnan(cols[1]));
}

TYPED_TEST(ReductionKernelTest, MinAndProdReduceEachAxis) {
  using T = TypeParam;
  const HostTensor m = HostTensor::make<T>({2, 3}, vec<T>({1, 2, 3, 4, 5, -6}));
  EXPECT_EQ(reduce(OpId::kMin, m, {0}).values<T>(), vec<T>({1, 2, -6}));
  EXPECT_EQ(reduce(OpId::kMin, m, {-1}).values<T>(), vec<T>({1, -6}));
  EXPECT_EQ(reduce(OpId::kProd, m, {0}).values<T>(), vec<T>({4, 10, -18}));
  EXPECT_EQ(reduce(OpId::kProd, m, {1}).values<T>(), vec<T>({6, -120}));
  EXPECT_THAT(reduce(OpId::kProd, m, {}, false, true).values<T>(), ElementsAre(T(-720)));
  EXPECT_THAT(reduce(OpId::kMin, m, {0, 1}, true).values<T>(), ElementsAre(T(-6)));
  const HostTensor e = HostTensor::make<T>({2, 0}, {});
  const T highest = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                         : std::numeric_limits<T>::max();
  EXPECT_THAT(reduce(OpId::kMin, e, {1}).values<T>(), ElementsAre(highest, highest));
  EXPECT_THAT(reduce(OpId::kProd, e, {1}).values<T>(), ElementsAre(T(1), T(1)));
  EXPECT_EQ(reduce(OpId::kProd, e, {0}).shape(), S({0}));
}

TEST(ReductionKernelTest, MinPropagatesNaNAndIntegerProdWraps) {
  const HostTensor a = HostTensor::make<float>({3, 2}, {1, NAN, 5, 2, NAN, 3});
  const std::vector<float> rows = reduce(OpId::kMin, a, {1}).values<float>();
  EXPECT_TRUE(std::isnan(rows[0]));
  EXPECT_EQ(rows[1], 2);
  EXPECT_TRUE(std::isnan(rows[2]));
  const HostTensor big = HostTensor::make<int32_t>({3}, {65536, 65536, 3});
  EXPECT_THAT(reduce(OpId::kProd, big, {0}).values<int32_t>(), ElementsAre(0));
  const HostTensor f = HostTensor::make<float>({2}, {INFINITY, 0});
  EXPECT_TRUE(std::isnan(reduce(OpId::kProd, f, {0}).values<float>()[0]));
}

TEST(ReductionKernelTest, ProdOfALongRunMatchesTheProductInOrder) {
  std::vector<double> v(300007);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 5 == 0 ? -1.0 : 1.0;
  const HostTensor a = HostTensor::make<double>({int64_t(v.size())}, v);
  double want = 1;
  for (double x : v) want *= x;
  EXPECT_THAT(reduce(OpId::kProd, a, {0}).values<double>(), ElementsAre(want));
}

TEST(BoolReductionKernelTest, AnyAndAllReduceEachAxis) {
  const HostTensor m = HostTensor::make<bool>({2, 3}, {true, false, false, true, true, true});
  EXPECT_THAT(reduce(OpId::kAny, m, {1}).values<bool>(), ElementsAre(true, true));
  EXPECT_THAT(reduce(OpId::kAll, m, {1}).values<bool>(), ElementsAre(false, true));
  EXPECT_THAT(reduce(OpId::kAny, m, {0}).values<bool>(), ElementsAre(true, true, true));
  EXPECT_THAT(reduce(OpId::kAll, m, {0}).values<bool>(), ElementsAre(true, false, false));
  EXPECT_THAT(reduce(OpId::kAll, m, {}, false, true).values<bool>(), ElementsAre(false));
  const HostTensor none = HostTensor::make<bool>({2, 2}, {false, false, false, false});
  EXPECT_THAT(reduce(OpId::kAny, none, {}, false, true).values<bool>(), ElementsAre(false));
  std::vector<bool> ones(200003, true);
  const HostTensor all = HostTensor::make<bool>({int64_t(ones.size())}, ones);
  EXPECT_THAT(reduce(OpId::kAll, all, {0}).values<bool>(), ElementsAre(true));
  ones[123456] = false;
  const HostTensor one_false = HostTensor::make<bool>({int64_t(ones.size())}, ones);
  EXPECT_THAT(reduce(OpId::kAll, one_false, {0}).values<bool>(), ElementsAre(false));
  EXPECT_THAT(reduce(OpId::kAny, one_false, {0}).values<bool>(), ElementsAre(true));
}

TEST(BoolReductionKernelTest, EmptyAnyIsFalseAndEmptyAllIsTrue) {
  const HostTensor e = HostTensor::make<bool>({2, 0}, {});
  EXPECT_THAT(reduce(OpId::kAny, e, {1}).values<bool>(), ElementsAre(false, false));
  EXPECT_THAT(reduce(OpId::kAll, e, {1}).values<bool>(), ElementsAre(true, true));
}

TEST(BoolReductionKernelTest, RejectsNonBoolInputsAndBoolMinProd) {
  absl::StatusOr<HostTensor> f = run_cpu(OpId::kAny, {HostTensor::make<float>({2}, {1, 0})});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(f.status().message(), "[Any] dtype float32 is not supported; expected one of bool");
  absl::StatusOr<HostTensor> b = run_cpu(OpId::kProd, {HostTensor::make<bool>({2}, {true, true})});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().message(),
            "[Prod] dtype bool is not supported; expected one of float32, float64, int32, int64, "
            "bfloat16, float16");
}

// Reduces `values` of `shape` over the dimensions in `mask`, by definition.
std::vector<double> reference(OpId op, const std::vector<double>& values, const Shape& shape,
                              const std::vector<bool>& mask, bool integral) {
  int64_t out_size = 1, count = 1;
  for (int d = 0; d < shape.rank(); ++d) (mask[d] ? count : out_size) *= shape.dim(d);
  std::vector<double> out(out_size, op == OpId::kMax   ? -INFINITY
                                    : op == OpId::kMin ? INFINITY
                                                       : 0.0);
  std::vector<int64_t> index(shape.rank(), 0);
  for (double v : values) {
    int64_t o = 0;
    for (int d = 0; d < shape.rank(); ++d) o = mask[d] ? o : o * shape.dim(d) + index[d];
    out[o] = op == OpId::kMax   ? std::max(out[o], v)
             : op == OpId::kMin ? std::min(out[o], v)
                                : out[o] + v;
    for (int d = shape.rank() - 1; d >= 0 && ++index[d] == shape.dim(d); --d) index[d] = 0;
  }
  if (op == OpId::kMean) {
    for (double& v : out) v = integral ? std::trunc(v / count) : v / count;
  }
  return out;
}

TYPED_TEST(ReductionKernelTest, MatchesReferenceForEveryAxisSubset) {
  using T = TypeParam;
  std::mt19937 rng(3);
  for (const Shape& shape : {S({3, 4, 5, 6}), S({2, 1, 7, 3}), S({1, 9, 1, 2})}) {
    std::vector<double> values(shape.num_elements());
    for (double& v : values) v = int(rng() % 19) - 9;
    const HostTensor in = HostTensor::make<T>(shape, std::vector<T>(values.begin(), values.end()));
    for (int bits = 0; bits < 16; ++bits) {
      std::vector<int64_t> axes;
      std::vector<bool> mask(4);
      for (int d = 0; d < 4; ++d) {
        mask[d] = bits >> d & 1;
        if (mask[d]) axes.push_back(d % 2 ? d - 4 : d);  // mix negative and positive axes
      }
      for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax, OpId::kMin}) {
        const std::vector<double> want = reference(op, values, shape, mask, std::is_integral_v<T>);
        const std::vector<double> got = testutil::as_doubles(reduce(op, in, axes, bits & 1));
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_NEAR(got[i], want[i], 1e-5 * std::abs(want[i]))
              << op_name(op) << " of " << shape.to_string() << " over mask " << bits << " at " << i;
        }
      }
    }
  }
}

// ArgMax and ArgMin of an input with no element, along an axis that is not empty, overflowed
// the kernel's count of elements after the axis (huge dimensions beside a zero);
// fuzz/corpus/worker_request/worker_request-arg-reduction-of-nothing sends both.
TEST(ArgReductionKernelTest, OfNothingWithHugeDimensionsAfterTheAxis) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  const HostTensor in = HostTensor::make<float>({2, kHuge, kHuge, 0}, {});
  OpAttrs attrs;
  attrs.axis = 0;
  attrs.dst_dtype = DType::kInt64;
  for (OpId op : {OpId::kArgMax, OpId::kArgMin}) {
    absl::StatusOr<HostTensor> out = run_cpu(op, {in}, attrs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), S({kHuge, kHuge, 0})) << op_name(op);
  }
}

}  // namespace
}  // namespace mt
