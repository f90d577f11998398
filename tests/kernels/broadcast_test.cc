// NumPy broadcasting: broadcast_dims, the coalesced BroadcastPlan, and infer_output of the
// binary ops (AddV2, Sub, Mul, RealDiv) with every error path.
#include "kernels/broadcast.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/op_def.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using ::testing::ElementsAre;

using testutil::expect_invalid;
using testutil::S;

// Returns the broadcast of a and b as a vector, or {-1} when they do not broadcast.
std::vector<int64_t> bdims(const Shape& a, const Shape& b) {
  Shape::Dims out;
  if (!broadcast_dims(a, b, &out)) return {-1};
  return std::vector<int64_t>(out.begin(), out.end());
}

TEST(BroadcastTest, BroadcastsScalars) {
  EXPECT_THAT(bdims(S({}), S({})), ElementsAre());
  EXPECT_THAT(bdims(S({}), S({2, 3})), ElementsAre(2, 3));
  EXPECT_THAT(bdims(S({2, 3}), S({})), ElementsAre(2, 3));
}

TEST(BroadcastTest, BroadcastsRowsAndColumns) {
  EXPECT_THAT(bdims(S({2, 3}), S({3})), ElementsAre(2, 3));
  EXPECT_THAT(bdims(S({2, 3}), S({1, 3})), ElementsAre(2, 3));
  EXPECT_THAT(bdims(S({2, 3}), S({2, 1})), ElementsAre(2, 3));
  EXPECT_THAT(bdims(S({4, 1}), S({1, 5})), ElementsAre(4, 5));
}

TEST(BroadcastTest, ExtendsRankOnTheLeft) {
  EXPECT_THAT(bdims(S({4, 1, 3}), S({2, 1})), ElementsAre(4, 2, 3));
  EXPECT_THAT(bdims(S({5}), S({3, 1, 1})), ElementsAre(3, 1, 5));
}

TEST(BroadcastTest, KeepsZeroSizedDimensions) {
  EXPECT_THAT(bdims(S({0, 3}), S({1, 3})), ElementsAre(0, 3));
  EXPECT_THAT(bdims(S({2, 0}), S({2, 1})), ElementsAre(2, 0));
  EXPECT_THAT(bdims(S({0}), S({})), ElementsAre(0));
  EXPECT_THAT(bdims(S({0}), S({0})), ElementsAre(0));
}

TEST(BroadcastTest, RejectsIncompatibleDimensions) {
  EXPECT_THAT(bdims(S({2, 3}), S({4})), ElementsAre(-1));
  EXPECT_THAT(bdims(S({2, 3}), S({3, 2})), ElementsAre(-1));
  EXPECT_THAT(bdims(S({0}), S({2})), ElementsAre(-1));
}

// Returns the plan as {rank, dims..., strides of a..., strides of b...}.
std::vector<int64_t> plan_of(const Shape& a, const Shape& b) {
  BroadcastPlan p;
  if (!make_broadcast_plan(a, b, &p)) return {-1};
  std::vector<int64_t> v = {p.rank};
  v.insert(v.end(), p.dims, p.dims + p.rank);
  v.insert(v.end(), p.strides[0], p.strides[0] + p.rank);
  v.insert(v.end(), p.strides[1], p.strides[1] + p.rank);
  return v;
}

TEST(BroadcastPlanTest, MergesEqualShapesIntoOneDimension) {
  EXPECT_THAT(plan_of(S({2, 3}), S({2, 3})), ElementsAre(1, 6, 1, 1));
  EXPECT_THAT(plan_of(S({2, 1, 3}), S({2, 1, 3})), ElementsAre(1, 6, 1, 1));
}

TEST(BroadcastPlanTest, GivesBroadcastOperandsStrideZero) {
  EXPECT_THAT(plan_of(S({}), S({2, 3})), ElementsAre(1, 6, 0, 1));
  EXPECT_THAT(plan_of(S({8, 4, 5}), S({4, 5})), ElementsAre(2, 8, 20, 20, 1, 0, 1));
  EXPECT_THAT(plan_of(S({2, 3}), S({2, 1})), ElementsAre(2, 2, 3, 3, 1, 1, 0));
  EXPECT_THAT(plan_of(S({4, 1}), S({1, 5})), ElementsAre(2, 4, 5, 1, 0, 0, 1));
  EXPECT_THAT(plan_of(S({3, 1, 5}), S({1, 4, 1})), ElementsAre(3, 3, 4, 5, 5, 0, 1, 0, 1, 0));
}

TEST(BroadcastPlanTest, DropsSizeOneOutputDimensions) {
  EXPECT_THAT(plan_of(S({1, 1}), S({1})), ElementsAre(0));
  EXPECT_THAT(plan_of(S({}), S({})), ElementsAre(0));
  EXPECT_THAT(plan_of(S({1, 3}), S({1, 1})), ElementsAre(1, 3, 1, 0));
}

// An empty output indexes nothing: its plan is one dimension of 0, so the dimensions beside
// the zero are never multiplied (the wire fuzzer found that product overflowing).
TEST(BroadcastPlanTest, HandlesZeroSizedDimensions) {
  EXPECT_THAT(plan_of(S({0, 3}), S({1, 3})), ElementsAre(1, 0, 0, 0));
  constexpr int64_t kHuge = int64_t{1} << 40;
  EXPECT_THAT(plan_of(S({kHuge, kHuge, 0}), S({1, kHuge, 1})), ElementsAre(1, 0, 0, 0));
}

TEST(BroadcastPlanTest, RefusesMoreThanEightMergedDimensions) {
  const Shape a8 = S({2, 1, 2, 1, 2, 1, 2, 1}), b8 = S({1, 2, 1, 2, 1, 2, 1, 2});
  EXPECT_EQ(plan_of(a8, b8).front(), 8);
  const Shape a9 = S({2, 1, 2, 1, 2, 1, 2, 1, 2}), b9 = S({1, 2, 1, 2, 1, 2, 1, 2, 1});
  EXPECT_THAT(plan_of(a9, b9), ElementsAre(-1));
}

absl::StatusOr<OutputMeta> infer2(OpId op, const Shape& a, const Shape& b, DType da, DType db) {
  TensorMeta in[2] = {{&a, da}, {&b, db}};
  return infer_output(op, in, {});
}

TEST(BinaryOpDefTest, InfersBroadcastOutput) {
  for (OpId op : {OpId::kAddV2, OpId::kSub, OpId::kMul, OpId::kRealDiv}) {
    absl::StatusOr<OutputMeta> out =
        infer2(op, S({2, 1}), S({3}), DType::kFloat64, DType::kFloat64);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape, S({2, 3}));
    EXPECT_EQ(out->dtype, DType::kFloat64);
  }
  EXPECT_EQ(infer2(OpId::kMul, S({4, 5}), S({4, 5}), DType::kInt32, DType::kInt32)->shape,
            S({4, 5}));
  EXPECT_EQ(infer2(OpId::kSub, S({0, 1}), S({3}), DType::kInt64, DType::kInt64)->shape, S({0, 3}));
  const Shape r9 = S({2, 2, 2, 2, 2, 2, 2, 2, 2});
  EXPECT_EQ(infer2(OpId::kAddV2, r9, S({2}), DType::kFloat32, DType::kFloat32)->shape, r9);
}

TEST(BinaryOpDefTest, RejectsBadCalls) {
  const Shape s = S({2});
  TensorMeta one{&s, DType::kFloat32};
  expect_invalid(infer_output(OpId::kAddV2, {&one, 1}, {}), "[AddV2] expects 2 inputs, got 1");
  expect_invalid(infer2(OpId::kMul, s, s, DType::kFloat32, DType::kInt32),
                 "[Mul] dtypes differ: float32 vs int32");
  expect_invalid(infer2(OpId::kRealDiv, s, s, DType::kInt32, DType::kInt32),
                 "[RealDiv] dtype int32 is not supported; expected one of float32, float64, "
                 "bfloat16, float16");
  expect_invalid(infer2(OpId::kSub, s, s, DType::kBool, DType::kBool),
                 "[Sub] dtype bool is not supported; expected one of float32, float64, int32, "
                 "int64, bfloat16, float16");
  expect_invalid(infer2(OpId::kAddV2, S({2, 3}), S({4}), DType::kFloat32, DType::kFloat32),
                 "[AddV2] shapes cannot be broadcast: (2, 3) vs (4,)");
}

TEST(BinaryOpDefTest, RejectsOversizedBroadcasts) {
  const int64_t big = int64_t{1} << 40;
  expect_invalid(infer2(OpId::kMul, S({big, 1}), S({1, big}), DType::kInt32, DType::kInt32),
                 "[Mul] output shape [1099511627776,1099511627776] has too many elements: its "
                 "byte size overflows int64");
  expect_invalid(infer2(OpId::kSub, S({2, 1, 2, 1, 2, 1, 2, 1, 2}), S({1, 2, 1, 2, 1, 2, 1, 2, 1}),
                        DType::kFloat32, DType::kFloat32),
                 "[Sub] broadcasting (2, 1, 2, 1, 2, 1, 2, 1, 2) with (1, 2, 1, 2, 1, 2, 1, 2, 1) "
                 "needs more than 8 dimensions after merging, which is not supported");
}

}  // namespace
}  // namespace mt
