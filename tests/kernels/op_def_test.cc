// infer_output for the data ops, MatMul, AddN and the unary ops, with every error path.
// Broadcasting ops: broadcast_test.cc; reductions: reduction_shape_test.cc.
#include "kernels/op_def.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::expect_invalid;
using testutil::S;

TEST(OpDefTest, DataOpsReturnTheirInput) {
  const Shape s = S({2, 3});
  for (OpId op : {OpId::kEagerConst, OpId::kIdentity, OpId::kFill}) {
    for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kBool}) {
      TensorMeta in{&s, dtype};
      absl::StatusOr<OutputMeta> out = infer_output(op, {&in, 1}, {});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->shape, s);
      EXPECT_EQ(out->dtype, dtype);
    }
  }
}

TEST(OpDefTest, DataOpsRejectWrongArity) {
  const Shape s = S({2});
  TensorMeta two[2] = {{&s, DType::kFloat32}, {&s, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kEagerConst, {}, {}), "[_EagerConst] expects 1 input, got 0");
  expect_invalid(infer_output(OpId::kIdentity, two, {}), "[Identity] expects 1 input, got 2");
  expect_invalid(infer_output(OpId::kFill, two, {}), "[Fill] expects 1 input, got 2");
  expect_invalid(infer_output(OpId::kCast, {}, {}), "[Cast] expects 1 input, got 0");
}

TEST(OpDefTest, FillChecksInt32Range) {
  const Shape s = S({3});
  TensorMeta i32{&s, DType::kInt32};
  TensorMeta i64{&s, DType::kInt64};
  OpAttrs attrs;
  attrs.value.i = int64_t{1} << 31;
  expect_invalid(infer_output(OpId::kFill, {&i32, 1}, attrs),
                 "[Fill] value 2147483648 is out of range for int32");
  attrs.value.i = -(int64_t{1} << 31) - 1;
  expect_invalid(infer_output(OpId::kFill, {&i32, 1}, attrs),
                 "[Fill] value -2147483649 is out of range for int32");
  EXPECT_TRUE(infer_output(OpId::kFill, {&i64, 1}, attrs).ok());
  attrs.value.i = -(int64_t{1} << 31);
  EXPECT_TRUE(infer_output(OpId::kFill, {&i32, 1}, attrs).ok());
}

TEST(OpDefTest, CastOutputsTheDestinationDtype) {
  const Shape s = S({4, 1});
  for (int src = 0; src < kNumDTypes; ++src) {
    for (int dst = 0; dst < kNumDTypes; ++dst) {
      TensorMeta in{&s, static_cast<DType>(src)};
      OpAttrs attrs;
      attrs.dst_dtype = static_cast<DType>(dst);
      absl::StatusOr<OutputMeta> out = infer_output(OpId::kCast, {&in, 1}, attrs);
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_EQ(out->shape, s);
      EXPECT_EQ(out->dtype, static_cast<DType>(dst));
    }
  }
}

TEST(OpDefTest, CastRejectsInvalidDestination) {
  const Shape s = S({1});
  TensorMeta in{&s, DType::kFloat32};
  OpAttrs attrs;
  attrs.dst_dtype = static_cast<DType>(9);
  expect_invalid(infer_output(OpId::kCast, {&in, 1}, attrs), "[Cast] invalid destination dtype 9");
}

TEST(OpDefTest, MatMulInfersOutputWithTransposes) {
  const Shape a = S({2, 3}), b = S({3, 4}), at = S({3, 2}), bt = S({4, 3});
  struct Case {
    const Shape* a;
    const Shape* b;
    bool ta, tb;
  };
  for (Case c : {Case{&a, &b, false, false}, Case{&at, &b, true, false}, Case{&a, &bt, false, true},
                 Case{&at, &bt, true, true}}) {
    TensorMeta in[2] = {{c.a, DType::kInt32}, {c.b, DType::kInt32}};
    OpAttrs attrs;
    attrs.transpose_a = c.ta;
    attrs.transpose_b = c.tb;
    absl::StatusOr<OutputMeta> out = infer_output(OpId::kMatMul, in, attrs);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape, S({2, 4}));
    EXPECT_EQ(out->dtype, DType::kInt32);
  }
}

TEST(OpDefTest, MatMulAcceptsZeroSizedDimensions) {
  const Shape a = S({2, 0}), b = S({0, 5}), c = S({0, 3}), d = S({3, 0});
  TensorMeta inner[2] = {{&a, DType::kFloat64}, {&b, DType::kFloat64}};
  EXPECT_EQ(infer_output(OpId::kMatMul, inner, {})->shape, S({2, 5}));
  TensorMeta outer[2] = {{&c, DType::kFloat64}, {&d, DType::kFloat64}};
  EXPECT_EQ(infer_output(OpId::kMatMul, outer, {})->shape, S({0, 0}));
}

TEST(OpDefTest, MatMulRejectsBadCalls) {
  const Shape a = S({2, 3}), b = S({4, 2}), r3 = S({2, 3, 4}), big = S({int64_t{1} << 40, 0}),
              big_t = S({0, int64_t{1} << 40});
  TensorMeta one[1] = {{&a, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kMatMul, one, {}), "[MatMul] expects 2 inputs, got 1");
  TensorMeta mixed[2] = {{&a, DType::kFloat32}, {&b, DType::kInt32}};
  expect_invalid(infer_output(OpId::kMatMul, mixed, {}),
                 "[MatMul] dtypes differ: float32 vs int32");
  TensorMeta bools[2] = {{&a, DType::kBool}, {&b, DType::kBool}};
  expect_invalid(infer_output(OpId::kMatMul, bools, {}),
                 "[MatMul] dtype bool is not supported; expected one of float32, float64, "
                 "int32, int64, bfloat16, float16");
  TensorMeta rank3[2] = {{&r3, DType::kFloat32}, {&b, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kMatMul, rank3, {}),
                 "[MatMul] expects rank-2 inputs, got shapes (2, 3, 4) and (4, 2)");
  TensorMeta inner[2] = {{&a, DType::kFloat32}, {&b, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kMatMul, inner, {}),
                 "[MatMul] inner dimensions differ: (2, 3) vs (4, 2)");
  OpAttrs ta;
  ta.transpose_a = true;
  expect_invalid(infer_output(OpId::kMatMul, inner, ta),
                 "[MatMul] inner dimensions differ: (2, 3) vs (4, 2) with transpose_a");
  OpAttrs tb;
  tb.transpose_b = true;
  TensorMeta inner_t[2] = {{&b, DType::kFloat32}, {&a, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kMatMul, inner_t, tb),
                 "[MatMul] inner dimensions differ: (4, 2) vs (2, 3) with transpose_b");
  tb.transpose_a = true;
  expect_invalid(infer_output(OpId::kMatMul, inner_t, tb),
                 "[MatMul] inner dimensions differ: (4, 2) vs (2, 3) with transpose_a and "
                 "transpose_b");
  TensorMeta huge[2] = {{&big, DType::kFloat32}, {&big_t, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kMatMul, huge, {}),
                 "[MatMul] output shape [1099511627776,1099511627776] has too many elements: "
                 "its byte size overflows int64");
}

TEST(OpDefTest, AddNReturnsTheCommonShape) {
  const Shape s = S({2, 3});
  TensorMeta in[3] = {{&s, DType::kInt64}, {&s, DType::kInt64}, {&s, DType::kInt64}};
  for (size_t n = 1; n <= 3; ++n) {
    absl::StatusOr<OutputMeta> out = infer_output(OpId::kAddN, {in, n}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape, s);
    EXPECT_EQ(out->dtype, DType::kInt64);
  }
}

TEST(OpDefTest, AddNRejectsBadCalls) {
  const Shape s = S({2, 3}), t = S({3});
  expect_invalid(infer_output(OpId::kAddN, {}, {}), "[AddN] expects at least one input");
  TensorMeta dtypes[3] = {{&s, DType::kFloat32}, {&s, DType::kFloat32}, {&s, DType::kInt32}};
  expect_invalid(infer_output(OpId::kAddN, dtypes, {}),
                 "[AddN] dtypes differ: input 0 is float32, input 2 is int32");
  TensorMeta shapes[3] = {{&s, DType::kFloat32}, {&t, DType::kFloat32}, {&s, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kAddN, shapes, {}),
                 "[AddN] shapes differ: input 0 has (2, 3), input 1 has (3,)");
  TensorMeta bools[2] = {{&s, DType::kBool}, {&s, DType::kBool}};
  expect_invalid(infer_output(OpId::kAddN, bools, {}),
                 "[AddN] dtype bool is not supported; expected one of float32, float64, int32, "
                 "int64, bfloat16, float16");
}

TEST(OpDefTest, UnaryOpsReturnTheirInput) {
  const Shape s = S({5, 0, 2});
  for (OpId op : {OpId::kNeg, OpId::kAbs, OpId::kExp, OpId::kRelu}) {
    TensorMeta in{&s, DType::kFloat64};
    absl::StatusOr<OutputMeta> out = infer_output(op, {&in, 1}, {});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape, s);
    EXPECT_EQ(out->dtype, DType::kFloat64);
  }
}

TEST(OpDefTest, UnaryOpsRejectBadCalls) {
  const Shape s = S({2});
  TensorMeta two[2] = {{&s, DType::kFloat32}, {&s, DType::kFloat32}};
  expect_invalid(infer_output(OpId::kRelu, two, {}), "[Relu] expects 1 input, got 2");
  expect_invalid(infer_output(OpId::kNeg, {}, {}), "[Neg] expects 1 input, got 0");
  TensorMeta i32{&s, DType::kInt32};
  expect_invalid(
      infer_output(OpId::kExp, {&i32, 1}, {}),
      "[Exp] dtype int32 is not supported; expected one of float32, float64, bfloat16, float16");
  TensorMeta b{&s, DType::kBool};
  expect_invalid(infer_output(OpId::kAbs, {&b, 1}, {}),
                 "[Abs] dtype bool is not supported; expected one of float32, float64, int32, "
                 "int64, bfloat16, float16");
}

}  // namespace
}  // namespace mt
