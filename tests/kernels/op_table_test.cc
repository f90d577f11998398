// The op table (kernels/op_table.h), row by row: every row is well formed, the CPU
// registers exactly its dtypes, the arity is checked before the shape function, a dtype
// outside the row is the op's own error, and every op of the uniform families runs on the
// CPU for every dtype of its row. New rows are covered without touching this file.
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/op_def.h"
#include "kernels/op_id.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::cpu_registry;
using testutil::HostTensor;
using testutil::run_cpu;

std::vector<OpId> all_ops() {
  std::vector<OpId> ops;
  for (int o = 0; o < kNumOps; ++o) ops.push_back(static_cast<OpId>(o));
  return ops;
}

// Returns a (2, 2) tensor of `dtype` holding 1, 2, 3, 4.
HostTensor square(DType dtype) {
  static const Shape kShape = Shape::make({2, 2}).value();
  return visit_dtype(dtype, [](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> values;
    for (float v : {1.f, 2.f, 3.f, 4.f}) values.push_back(static_cast<T>(v));
    return HostTensor::make<T>(kShape, values);
  });
}

TEST(OpTableTest, RowsAreWellFormed) {
  std::set<std::string> names, cc_names;
  for (OpId op : all_ops()) {
    const OpInfo& info = op_info(op);
    SCOPED_TRACE(info.name);
    EXPECT_TRUE(names.insert(info.name).second) << "two rows name " << info.name;
    EXPECT_NE(std::string(info.cc_name), "");
    EXPECT_NE(std::string(info.py_name), "");
    EXPECT_TRUE(info.arity == kVariadic || (info.arity >= 1 && info.arity <= 6));
    EXPECT_NE(info.dtypes, 0u);
    EXPECT_EQ(info.dtypes & ~kAllDTypes, 0u);
    if (op_has_flag(op, kSource)) {
      EXPECT_EQ(info.arity, 1);  // the output's meta
    }
    EXPECT_LT(op_key_input(op), info.arity == kVariadic ? 1 : info.arity);
    // What a gradient reads is said of differentiable rows only; the GPU's dtypes are the
    // row's, or their float part, never more.
    if (!op_has_flag(op, kGrad)) {
      EXPECT_EQ(op_grad_reads_inputs(op), ~0u);
      EXPECT_EQ(op_grad_reads_outputs(op), ~0u);
    }
    EXPECT_EQ(op_gpu_dtypes(op) & ~op_dtypes(op), 0u);
    EXPECT_NE(op_gpu_dtypes(op), 0u);
  }
  EXPECT_EQ(static_cast<int>(names.size()), kNumOps);
}

// The flags of the rows become the masks the tape keeps values by (Note [What a gradient
// reads]) and the dtypes the GPU registers.
TEST(OpTableTest, FlagsSayWhatAGradientReadsAndWhatTheGpuTakes) {
  EXPECT_EQ(op_grad_reads_inputs(OpId::kMatMul), ~0u);  // kGradReadsInputs
  EXPECT_EQ(op_grad_reads_outputs(OpId::kMatMul), 0u);
  EXPECT_EQ(op_grad_reads_inputs(OpId::kRelu), 0u);  // kGradReadsOutputs
  EXPECT_EQ(op_grad_reads_outputs(OpId::kRelu), ~0u);
  EXPECT_EQ(op_grad_reads_inputs(OpId::kAddV2), 0u);  // kGradReadsNoValue
  EXPECT_EQ(op_grad_reads_outputs(OpId::kAddV2), 0u);
  EXPECT_EQ(op_grad_reads_inputs(OpId::kSparseSoftmaxCrossEntropyWithLogits), 0u);
  EXPECT_EQ(op_grad_reads_outputs(OpId::kSparseSoftmaxCrossEntropyWithLogits), 1u << 1);
  EXPECT_EQ(op_grad_reads_inputs(OpId::kMaximum), ~0u);  // no flag: everything
  EXPECT_EQ(op_grad_reads_outputs(OpId::kMaximum), ~0u);
  EXPECT_EQ(op_gpu_dtypes(OpId::kMatMul), kFloatDTypes);
  EXPECT_EQ(op_gpu_dtypes(OpId::kAddV2), op_dtypes(OpId::kAddV2));
}

TEST(OpTableTest, CpuRegistersExactlyTheDtypesOfEachRow) {
  for (OpId op : all_ops()) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dtype = static_cast<DType>(d);
      EXPECT_EQ(cpu_registry().find(op, DeviceType::kCPU, dtype) != nullptr,
                dtype_in(dtype, op_dtypes(op)))
          << op_name(op) << " " << dtype_name(dtype);
    }
  }
}

TEST(OpTableTest, ArityIsCheckedBeforeTheShapeFunction) {
  static const Shape kShape = Shape::make({2, 2}).value();
  for (OpId op : all_ops()) {
    const int arity = op_info(op).arity;
    if (arity == kVariadic) continue;
    std::vector<TensorMeta> metas(arity + 1, TensorMeta{&kShape, DType::kFloat32});
    absl::StatusOr<OutputMeta> out = infer_output(op, metas, {});
    ASSERT_FALSE(out.ok()) << op_name(op);
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(out.status().message(),
              absl::StrCat("[", op_name(op), "] expects ", arity, arity == 1 ? " input" : " inputs",
                           ", got ", arity + 1));
  }
}

TEST(OpTableTest, ADtypeOutsideTheRowIsTheOpsOwnError) {
  static const Shape kShape = Shape::make({2, 2}).value();
  for (OpId op : all_ops()) {
    const int arity = op_info(op).arity == kVariadic ? 2 : op_info(op).arity;
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dtype = static_cast<DType>(d);
      if (dtype_in(dtype, op_dtypes(op))) continue;
      std::vector<TensorMeta> metas(arity, TensorMeta{&kShape, dtype});
      absl::StatusOr<OutputMeta> out = infer_output(op, metas, {});
      ASSERT_FALSE(out.ok()) << op_name(op) << " " << dtype_name(dtype);
      EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(out.status().message()),
                  testing::StartsWith(absl::StrCat("[", op_name(op), "] ")));
    }
  }
}

// The uniform families: every row, every dtype of the row, on a (2, 2) input.
TEST(OpTableTest, EveryElementwiseOpAndReductionRunsOnTheCpuForEachDtypeOfItsRow) {
  const std::vector<OpId> unary = MT_OP_LIST(MT_UNARY_OPS);
  const std::vector<OpId> binary = MT_OP_LIST(MT_BINARY_OPS);
  const std::vector<OpId> reductions = MT_OP_LIST(MT_REDUCTION_OPS);
  for (const std::vector<OpId>* family : {&unary, &binary, &reductions}) {
    for (OpId op : *family) {
      for (int d = 0; d < kNumDTypes; ++d) {
        const DType dtype = static_cast<DType>(d);
        if (!dtype_in(dtype, op_dtypes(op))) continue;
        SCOPED_TRACE(absl::StrCat(op_name(op), " ", dtype_name(dtype)));
        std::vector<HostTensor> inputs(family == &binary ? 2 : 1, square(dtype));
        absl::StatusOr<HostTensor> out = run_cpu(op, inputs);
        ASSERT_TRUE(out.ok()) << out.status();
        if (family != &reductions) {
          EXPECT_EQ(out->shape(), inputs[0].shape());
        }
      }
    }
  }
}

}  // namespace
}  // namespace mt
