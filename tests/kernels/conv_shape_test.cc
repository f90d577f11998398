// The errors of the convolutions' and pools' shape function (kernels/conv_shape.cc), through
// the CPU kernels: every one is InvalidArgument whose message starts with the op's name.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

// Returns a tensor of `shape` and `dtype` holding zeros.
HostTensor zeros(const Shape& shape, DType dtype = DType::kFloat32) {
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return HostTensor::make<T>(shape, std::vector<T>(shape.num_elements(), static_cast<T>(0.f)));
  });
}

// Expects InvalidArgument with exactly `message`, which names the op first.
void expect_invalid(OpId op, const std::vector<HostTensor>& in, const OpAttrs& attrs,
                    const std::string& message) {
  SCOPED_TRACE(message);
  const absl::StatusOr<HostTensor> out = run_cpu(op, in, attrs);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(out.status().message(), message);
  EXPECT_THAT(std::string(out.status().message()),
              ::testing::StartsWith(absl::StrCat("[", op_name(op), "] ")));
}

TEST(ConvShapeTest, RejectsBadShapesWithTheOpsName) {
  const HostTensor image = zeros(S({2, 5, 5, 3})), filter = zeros(S({3, 3, 3, 2}));
  const OpAttrs none;
  expect_invalid(OpId::kConv2D, {zeros(S({5, 5, 3})), filter}, none,
                 "[Conv2D] input must be 4-dimensional, got shape (5, 5, 3)");
  expect_invalid(OpId::kConv2D, {image, zeros(S({3, 3, 3}))}, none,
                 "[Conv2D] filter must be 4-dimensional, got shape (3, 3, 3)");
  expect_invalid(OpId::kConv2D, {image, zeros(S({3, 3, 2, 2}))}, none,
                 "[Conv2D] input depth must equal the filter's input depth (groups are not "
                 "supported): 3 vs 2");
  expect_invalid(OpId::kConv2D, {image, zeros(S({0, 3, 3, 2}))}, none,
                 "[Conv2D] filter's spatial dimensions must be positive, got shape (0, 3, 3, 2)");
  expect_invalid(OpId::kConv2D, {image, zeros(S({3, 3, 3, 2}), DType::kFloat64)}, none,
                 "[Conv2D] dtypes differ: float32 vs float64");
  expect_invalid(OpId::kMaxPool, {zeros(S({2, 5, 5, 3}), DType::kInt32)}, none,
                 "[MaxPool] dtype int32 is not supported; expected one of float32, float64, "
                 "bfloat16, float16");
  expect_invalid(OpId::kAvgPool, {zeros(S({25, 3}))}, none,
                 "[AvgPool] input must be 4-dimensional, got shape (25, 3)");
  expect_invalid(OpId::kMaxPoolGrad,
                 {zeros(S({5, 5, 3})), zeros(S({5, 5, 3})), zeros(S({5, 5, 3}))}, none,
                 "[MaxPoolGrad] input must be 4-dimensional, got shape (5, 5, 3)");
}

TEST(ConvShapeTest, RejectsWindowsOverTheBatchOrChannels) {
  const HostTensor image = zeros(S({2, 5, 5, 3})), filter = zeros(S({3, 3, 3, 2}));
  OpAttrs attrs;
  attrs.strides = {2, 1, 1, 1};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs,
                 "[Conv2D] Current implementation does not yet support strides in the batch and "
                 "depth dimensions.");
  attrs.channels_first = true;  // NCHW: entry 1 is the channels
  attrs.strides = {1, 2, 1, 1};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs,
                 "[Conv2D] Current implementation does not yet support strides in the batch and "
                 "depth dimensions.");
  attrs = OpAttrs();
  attrs.dilations = {1, 1, 1, 2};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs,
                 "[Conv2D] Current implementation does not yet support dilations in the batch "
                 "and depth dimensions.");
  attrs = OpAttrs();
  attrs.strides = {2, 1, 1, 1};
  expect_invalid(OpId::kMaxPool, {image}, attrs,
                 "[MaxPool] Pooling is not yet supported on the batch dimension.");
  attrs = OpAttrs();
  attrs.ksize = {1, 2, 2, 2};
  expect_invalid(OpId::kAvgPool, {image}, attrs,
                 "[AvgPool] Pooling is not yet supported on the batch dimension.");
  attrs = OpAttrs();
  attrs.dilations = {1, 2, 2, 1};
  expect_invalid(OpId::kMaxPool, {image}, attrs, "[MaxPool] pools take no dilations");
}

TEST(ConvShapeTest, RejectsNonPositiveWindowsAndBadPaddings) {
  const HostTensor image = zeros(S({2, 5, 5, 3})), filter = zeros(S({3, 3, 3, 2}));
  OpAttrs attrs;
  attrs.strides = {1, 0, 1, 1};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs, "[Conv2D] strides must be positive, got 0");
  attrs = OpAttrs();
  attrs.dilations = {1, 1, -1, 1};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs,
                 "[Conv2D] dilations must be positive, got -1");
  attrs = OpAttrs();
  attrs.ksize = {1, 0, 2, 1};
  expect_invalid(OpId::kMaxPool, {image}, attrs, "[MaxPool] ksize must be positive, got 0");
  attrs = OpAttrs();
  attrs.padding = Padding::kExplicit;
  attrs.explicit_paddings = {0, 0, 1, -1, 0, 0, 0, 0};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs,
                 "[Conv2D] explicit_paddings must be non-negative, got -1");
  attrs.explicit_paddings = {1, 0, 0, 0, 0, 0, 0, 0};
  expect_invalid(OpId::kConv2D, {image, filter}, attrs,
                 "[Conv2D] explicit_paddings of the batch and depth dimensions must be 0");
  attrs.padding = Padding::kSame;
  attrs.explicit_paddings = {0, 0, 1, 1, 0, 0, 0, 0};
  expect_invalid(OpId::kAvgPool, {image}, attrs,
                 "[AvgPool] explicit_paddings are only for padding EXPLICIT");
}

TEST(ConvShapeTest, RejectsANegativeOutputSize) {
  OpAttrs attrs;
  attrs.dilations = {1, 2, 2, 1};  // an effective filter of 5 over 3 rows
  expect_invalid(OpId::kConv2D, {zeros(S({2, 3, 7, 1})), zeros(S({3, 3, 1, 1}))}, attrs,
                 "[Conv2D] Computed output size would be negative: -1 [input_size: 3, "
                 "effective_filter_size: 5, stride: 1]");
  attrs = OpAttrs();
  attrs.padding = Padding::kExplicit;
  attrs.explicit_paddings = {0, 0, 0, 0, 1, 0, 0, 0};  // W padded from 1 to 2
  expect_invalid(OpId::kConv2D, {zeros(S({2, 7, 1, 1})), zeros(S({1, 5, 1, 1}))}, attrs,
                 "[Conv2D] Computed output size would be negative: -2 [input_size: 1, "
                 "effective_filter_size: 5, stride: 1]");
  attrs = OpAttrs();
  attrs.ksize = {1, 5, 1, 1};
  expect_invalid(OpId::kMaxPool, {zeros(S({2, 3, 3, 1}))}, attrs,
                 "[MaxPool] Computed output size would be negative: -1 [input_size: 3, "
                 "effective_filter_size: 5, stride: 1]");
}

TEST(ConvShapeTest, RejectsGradientsOfTheWrongShape) {
  const HostTensor filter = zeros(S({3, 3, 3, 2})), dy = zeros(S({2, 3, 3, 2}));
  OpAttrs attrs;
  attrs.dims = {2, 5, 5};
  expect_invalid(OpId::kConv2DBackpropInput, {filter, dy}, attrs,
                 "[Conv2DBackpropInput] input_sizes must have 4 elements, got 3");
  attrs.dims = {2, 5, 5, 3};
  expect_invalid(OpId::kConv2DBackpropInput, {filter, zeros(S({2, 5, 5, 2}))}, attrs,
                 "[Conv2DBackpropInput] out_backprop has shape (2, 5, 5, 2) but the "
                 "convolution's output has shape (2, 3, 3, 2)");
  attrs.dims = {3, 3, -1, 2};
  expect_invalid(OpId::kConv2DBackpropFilter, {zeros(S({2, 5, 5, 3})), dy}, attrs,
                 "[Conv2DBackpropFilter] filter_sizes must be non-negative, got -1");
  attrs.dims = {3, 3, 4, 2};
  expect_invalid(OpId::kConv2DBackpropFilter, {zeros(S({2, 5, 5, 3})), dy}, attrs,
                 "[Conv2DBackpropFilter] input depth must equal the filter's input depth (groups "
                 "are not supported): 3 vs 4");
  OpAttrs pool;
  pool.ksize = pool.strides = {1, 2, 2, 1};
  const HostTensor x = zeros(S({1, 4, 4, 1})), y = zeros(S({1, 2, 2, 1}));
  expect_invalid(OpId::kMaxPoolGrad, {x, y, zeros(S({1, 2, 1, 1}))}, pool,
                 "[MaxPoolGrad] grad has shape (1, 2, 1, 1) but the pool's output has shape "
                 "(1, 2, 2, 1)");
  expect_invalid(OpId::kMaxPoolGrad, {x, zeros(S({1, 4, 4, 1})), y}, pool,
                 "[MaxPoolGrad] orig_output has shape (1, 4, 4, 1) but the pool's output has "
                 "shape (1, 2, 2, 1)");
  expect_invalid(OpId::kMaxPoolGrad, {x, y, zeros(S({1, 2, 2, 1}), DType::kFloat64)}, pool,
                 "[MaxPoolGrad] dtypes differ: float32 vs float64");
  pool.dims = {4, 4};
  expect_invalid(OpId::kAvgPoolGrad, {y}, pool,
                 "[AvgPoolGrad] orig_input_shape must have 4 elements, got 2");
  pool.dims = {1, 6, 4, 1};
  expect_invalid(OpId::kAvgPoolGrad, {y}, pool,
                 "[AvgPoolGrad] grad has shape (1, 2, 2, 1) but the pool's output has shape "
                 "(1, 3, 2, 1)");
}

}  // namespace
}  // namespace mt
