// The CPU kernel table: exactly the supported (op, dtype) pairs, in agreement with
// infer_output, and duplicate registration errors.
#include "kernels/kernel_registry.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/attention.h"
#include "kernels/batch_norm.h"
#include "kernels/layer_norm.h"
#include "kernels/op_def.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::cpu_registry;

// The expected CPU support, written out: a row per op, columns in DType order
// (float32, float64, int32, int64, bool, bfloat16, float16).
struct Row {
  OpId op;
  bool supported[kNumDTypes];
};
constexpr Row kTable[] = {
    {OpId::kEagerConst, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kFill, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kIdentity, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kCast, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kMatMul, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kAddN, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kAddV2, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kSub, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kMul, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kRealDiv, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kNeg, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kAbs, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kExp, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kRelu, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kSum, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kMean, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kMax, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kPow, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kMaximum, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kMinimum, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kSquaredDifference, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kFloorDiv, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kFloorMod, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kLogicalAnd, {0, 0, 0, 0, 1, 0, 0}},
    {OpId::kLogicalOr, {0, 0, 0, 0, 1, 0, 0}},
    {OpId::kSqrt, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kRsqrt, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kSquare, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kLog, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kLog1p, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kTanh, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kErf, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kSin, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kCos, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kSigmoid, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kSign, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kFloor, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kRound, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kLogicalNot, {0, 0, 0, 0, 1, 0, 0}},
    {OpId::kReshape, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kTranspose, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kExpandDims, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kSqueeze, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kConcatV2, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kPack, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kSplitV, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kSlice, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kStridedSlice, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kGatherV2, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kOneHot, {0, 0, 1, 1, 0, 0, 0}},
    {OpId::kBroadcastTo, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kTile, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kMatrixBandPart, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kCumsum, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kPad, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kPadV2, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kMirrorPad, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kMirrorPadGrad, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kTopKV2, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kScatterNd, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kTensorScatterUpdate, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kTensorScatterAdd, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kRange, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kZerosLike, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kOnesLike, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kRandomUniform, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kRandomUniformInt, {0, 0, 1, 1, 0, 0, 0}},
    {OpId::kRandomStandardNormal, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kTruncatedNormal, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kStatelessRandomUniformV2, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kStatelessRandomUniformIntV2, {0, 0, 1, 1, 0, 0, 0}},
    {OpId::kStatelessRandomNormalV2, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kStatelessTruncatedNormalV2, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kBatchMatMulV2, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kMin, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kProd, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kAny, {0, 0, 0, 0, 1, 0, 0}},
    {OpId::kAll, {0, 0, 0, 0, 1, 0, 0}},
    {OpId::kSoftmax, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kLogSoftmax, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kEqual, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kNotEqual, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kLess, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kLessEqual, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kGreater, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kGreaterEqual, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kSelectV2, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kArgMax, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kArgMin, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kBiasAdd, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kSparseSoftmaxCrossEntropyWithLogits, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kGelu, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kConv2D, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kConv2DBackpropInput, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kConv2DBackpropFilter, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kMaxPool, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kMaxPoolGrad, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kAvgPool, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kAvgPoolGrad, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kFusedBatchNormV3, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kFusedBatchNormGradV3, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kLayerNorm, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kLayerNormGrad, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kAddLayerNorm, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kDotProductAttention, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kDotProductAttentionGrad, {1, 1, 0, 0, 0, 1, 1}},
    {OpId::kStopGradient, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kUnsortedSegmentSum, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kClipByValue, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kVarHandleOp, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kReadVariableOp, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kAssignVariableOp, {1, 1, 1, 1, 1, 1, 1}},
    {OpId::kAssignAddVariableOp, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kAssignSubVariableOp, {1, 1, 1, 1, 0, 1, 1}},
    {OpId::kResourceApplyAdam, {1, 1, 0, 0, 0, 1, 1}},
};
static_assert(std::size(kTable) == kNumOps);

TEST(CpuKernelRegistryTest, RegistersExactlyTheSupportedPairs) {
  for (const Row& row : kTable) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dtype = static_cast<DType>(d);
      EXPECT_EQ(cpu_registry().find(row.op, DeviceType::kCPU, dtype) != nullptr, row.supported[d])
          << op_name(row.op) << " " << dtype_name(dtype);
      EXPECT_EQ(cpu_registry().find(row.op, DeviceType::kGPU, dtype), nullptr);
    }
  }
}

TEST(CpuKernelRegistryTest, NamedExamples) {
  EXPECT_EQ(cpu_registry().find(OpId::kRealDiv, DeviceType::kCPU, DType::kInt32), nullptr);
  EXPECT_EQ(cpu_registry().find(OpId::kMatMul, DeviceType::kCPU, DType::kBool), nullptr);
  for (int d = 0; d < kNumDTypes; ++d) {
    EXPECT_NE(cpu_registry().find(OpId::kCast, DeviceType::kCPU, static_cast<DType>(d)), nullptr);
  }
}

// Returns attributes that make a call of an array op on one (2, 2) input well formed.
OpAttrs well_formed_attrs(OpId op) {
  OpAttrs attrs;
  if (op == OpId::kReshape) attrs.dims = {4};
  if (op == OpId::kTranspose) attrs.dims = {1, 0};
  if (op == OpId::kBroadcastTo) attrs.dims = {2, 2};
  if (op == OpId::kTile) attrs.dims = {1, 2};
  if (op == OpId::kMatrixBandPart) attrs.dims = {1, -1};
  if (op == OpId::kPad || op == OpId::kPadV2 || op == OpId::kMirrorPad) attrs.dims = {1, 0, 0, 1};
  if (op == OpId::kMirrorPadGrad) attrs.dims = {0, 0, 0, 0};
  if (op == OpId::kTopKV2) attrs.k = 1;
  if (op == OpId::kRange) attrs.limit = {2, 2, true};  // [0, 1]: Range's output is a vector
  if (op == OpId::kSplitV) attrs.num_split = 2;
  if (op == OpId::kSlice) attrs.dims = {0, 0}, attrs.dims2 = {-1, 1};
  if (op == OpId::kArgMax || op == OpId::kArgMin) attrs.dst_dtype = DType::kInt64;
  if (op == OpId::kUnsortedSegmentSum) attrs.depth = 3;
  if (op == OpId::kScatterNd) attrs.dims = {2, 2};
  if (op == OpId::kConv2DBackpropInput || op == OpId::kAvgPoolGrad) attrs.dims = {1, 2, 2, 1};
  if (op == OpId::kConv2DBackpropFilter) attrs.dims = {1, 1, 1, 1};
  if (op == OpId::kLayerNorm || op == OpId::kLayerNormGrad || op == OpId::kAddLayerNorm) {
    attrs.axis = -1;
  }
  return attrs;
}

// Returns whether infer_output accepts `op` on `dtype` for well-formed inputs.
bool infer_accepts(OpId op, DType dtype) {
  static const Shape kSquare = Shape::make({2, 2}).value();
  static const Shape kVector = Shape::make({2}).value();
  // GatherV2's indices are int32 whatever the params; BiasAdd's bias and the labels of
  // SparseSoftmaxCrossEntropyWithLogits are vectors; SelectV2 is keyed by x, after a bool
  // condition.
  const bool labels = op == OpId::kSparseSoftmaxCrossEntropyWithLogits;
  const bool index = op == OpId::kGatherV2 || labels || op == OpId::kUnsortedSegmentSum;
  const bool vector = op == OpId::kBiasAdd || labels;
  if (op == OpId::kRange) {  // its input is its output, sized for the attributes
    OutputMetas range;
    return infer_outputs(op, {{&kVector, dtype}}, well_formed_attrs(op), &range).ok();
  }
  std::vector<TensorMeta> in = {{&kSquare, dtype},
                                {vector ? &kVector : &kSquare, index ? DType::kInt32 : dtype}};
  if (op == OpId::kSelectV2) in = {{&kSquare, DType::kBool}, {&kSquare, dtype}, {&kSquare, dtype}};
  // The scatters: two index rows of two values, and an update element for each.
  if (op == OpId::kScatterNd) in = {{&kSquare, DType::kInt32}, {&kVector, dtype}};
  if (op == OpId::kTensorScatterUpdate || op == OpId::kTensorScatterAdd) {
    in = {{&kSquare, dtype}, {&kSquare, DType::kInt32}, {&kVector, dtype}};
  }
  const size_t arity = op_info(op).arity == kVariadic ? 1 : op_info(op).arity;
  while (in.size() < arity) in.push_back({&kSquare, dtype});  // ResourceApplyAdam's slots
  in.resize(arity);
  static const Shape kScalar;
  if (op == OpId::kResourceApplyAdam) in[4] = {&kScalar, apply_adam_lr_dtype(dtype)};  // lr_t
  // The convolutions and pools take (1, 2, 2, 1) images, a 1x1 filter and a 1x1 window;
  // Conv2DBackpropInput's filter comes first.
  static const Shape kImage = Shape::make({1, 2, 2, 1}).value();
  static const Shape kFilter = Shape::make({1, 1, 1, 1}).value();
  for (OpId conv : MT_OP_LIST(MT_CONV_OPS)) {
    if (op != conv) continue;
    for (TensorMeta& t : in) t = {&kImage, dtype};
    if (op == OpId::kConv2D) in[1].shape = &kFilter;
    if (op == OpId::kConv2DBackpropInput) in[0].shape = &kFilter;
  }
  // Batch normalisation: a (1, 2, 2, 1) x (and y_backprop) and statistics of one channel in
  // the statistics' dtype.
  static const Shape kChannel = Shape::make({1}).value();
  for (OpId bn : MT_OP_LIST(MT_BATCH_NORM_OPS)) {
    if (op != bn) continue;
    const int images = op == OpId::kFusedBatchNormV3 ? 1 : 2;
    for (int i = 0; i < 5; ++i) {
      in[i] = i < images ? TensorMeta{&kImage, dtype}
                         : TensorMeta{&kChannel, internal::batch_norm_stats_dtype(dtype)};
    }
  }
  // Layer normalisation: a (2, 2) x (and dy, or the residual), gamma and statistics of two in
  // the statistics' dtype.
  for (OpId ln : MT_OP_LIST(MT_LAYER_NORM_OPS)) {
    if (op != ln) continue;
    const int rows = op == OpId::kLayerNorm ? 1 : 2;
    for (size_t i = rows; i < in.size(); ++i) {
      in[i] = {&kVector, internal::layer_norm_stats_dtype(dtype)};
    }
  }
  // Attention: q, k, v (and do, o) of (1, 2, 2, 2), lse (1, 2, 2) in the statistics' dtype.
  static const Shape kHeads = Shape::make({1, 2, 2, 2}).value();
  static const Shape kLse = Shape::make({1, 2, 2}).value();
  for (OpId attention : MT_OP_LIST(MT_ATTENTION_OPS)) {
    if (op != attention) continue;
    for (TensorMeta& t : in) t = {&kHeads, dtype};
    if (op == OpId::kDotProductAttentionGrad) {
      in[5] = {&kLse, internal::attention_stats_dtype(dtype)};
    }
  }
  OutputMetas out;  // the assignments have no output
  return infer_outputs(op, in, well_formed_attrs(op), &out).ok();
}

TEST(CpuKernelRegistryTest, AgreesWithInferOutput) {
  for (int o = 0; o < kNumOps; ++o) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const OpId op = static_cast<OpId>(o);
      const DType dtype = static_cast<DType>(d);
      EXPECT_EQ(infer_accepts(op, dtype),
                cpu_registry().find(op, DeviceType::kCPU, dtype) != nullptr)
          << op_name(op) << " " << dtype_name(dtype);
    }
  }
}

TEST(CpuKernelRegistryTest, RejectsRegisteringTwice) {
  KernelRegistry registry;
  ASSERT_TRUE(register_cpu_kernels(registry).ok());
  absl::Status again = register_cpu_kernels(registry);
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(), "[_EagerConst] a CPU kernel for float32 is already registered");
}

}  // namespace
}  // namespace mt
