// infer_output of the reductions Sum, Mean and Max, with every error path.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/op_def.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::expect_invalid;
using testutil::S;

absl::StatusOr<OutputMeta> infer_reduce(OpId op, const Shape& s, std::vector<int64_t> axes,
                                        bool keep_dims = false, bool reduce_all = false,
                                        DType dtype = DType::kFloat32) {
  OpAttrs attrs;
  attrs.axes.assign(axes.begin(), axes.end());
  attrs.keep_dims = keep_dims;
  attrs.reduce_all = reduce_all;
  TensorMeta in{&s, dtype};
  return infer_output(op, {&in, 1}, attrs);
}

TEST(ReductionOpDefTest, RemovesReducedAxes) {
  const Shape s = S({2, 3, 4});
  for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax}) {
    absl::StatusOr<OutputMeta> out = infer_reduce(op, s, {1}, false, false, DType::kInt64);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape, S({2, 4}));
    EXPECT_EQ(out->dtype, DType::kInt64);
  }
  EXPECT_EQ(infer_reduce(OpId::kSum, s, {0, 2})->shape, S({3}));
  EXPECT_EQ(infer_reduce(OpId::kSum, s, {2, 0})->shape, S({3}));
  EXPECT_EQ(infer_reduce(OpId::kSum, s, {0, 1, 2})->shape, S({}));
}

TEST(ReductionOpDefTest, AcceptsNegativeAxes) {
  const Shape s = S({2, 3, 4});
  EXPECT_EQ(infer_reduce(OpId::kMax, s, {-1})->shape, S({2, 3}));
  EXPECT_EQ(infer_reduce(OpId::kMax, s, {-3, -2})->shape, S({4}));
}

TEST(ReductionOpDefTest, KeepsReducedAxesAsOne) {
  const Shape s = S({2, 3, 4});
  EXPECT_EQ(infer_reduce(OpId::kMean, s, {1}, true)->shape, S({2, 1, 4}));
  EXPECT_EQ(infer_reduce(OpId::kMean, s, {}, true, true)->shape, S({1, 1, 1}));
}

TEST(ReductionOpDefTest, ReduceAllIgnoresAxes) {
  const Shape s = S({2, 3, 4});
  EXPECT_EQ(infer_reduce(OpId::kSum, s, {}, false, true)->shape, S({}));
  EXPECT_EQ(infer_reduce(OpId::kSum, s, {7, 7}, false, true)->shape, S({}));
}

TEST(ReductionOpDefTest, EmptyAxesReduceNothing) {
  EXPECT_EQ(infer_reduce(OpId::kSum, S({2, 3}), {})->shape, S({2, 3}));
  EXPECT_EQ(infer_reduce(OpId::kSum, S({}), {})->shape, S({}));
  EXPECT_EQ(infer_reduce(OpId::kSum, S({}), {}, true, true)->shape, S({}));
}

TEST(ReductionOpDefTest, ReducesZeroSizedAxes) {
  EXPECT_EQ(infer_reduce(OpId::kMax, S({2, 0}), {1})->shape, S({2}));
  EXPECT_EQ(infer_reduce(OpId::kMax, S({2, 0}), {0})->shape, S({0}));
}

TEST(ReductionOpDefTest, RejectsBadCalls) {
  const Shape s = S({2, 3});
  TensorMeta two[2] = {{&s, DType::kFloat32}, {&s, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kSum, two, {}), "[Sum] expects 1 input, got 2");
  expect_invalid(infer_reduce(OpId::kMax, s, {0}, false, false, DType::kBool),
                 "[Max] dtype bool is not supported; expected one of float32, float64, int32, "
                 "int64, bfloat16, float16");
  expect_invalid(infer_reduce(OpId::kSum, s, {2}),
                 "[Sum] axis 2 is out of range for input of shape (2, 3); expected an axis in "
                 "[-2, 2)");
  expect_invalid(infer_reduce(OpId::kMean, s, {-3}),
                 "[Mean] axis -3 is out of range for input of shape (2, 3); expected an axis in "
                 "[-2, 2)");
  expect_invalid(infer_reduce(OpId::kSum, S({}), {0}),
                 "[Sum] axis 0 is out of range for input of shape (); expected an axis in [0, 0)");
  expect_invalid(infer_reduce(OpId::kMax, s, {1, -1}), "[Max] axes [1, -1] name dimension 1 twice");
  expect_invalid(infer_reduce(OpId::kSum, s, {0, 0}), "[Sum] axes [0, 0] name dimension 0 twice");
}

}  // namespace
}  // namespace mt
