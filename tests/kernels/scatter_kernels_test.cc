// CPU kernels of ScatterNd, TensorScatterUpdate and TensorScatterAdd, run through the
// registry: every dtype they take with both index dtypes against a plain reference in
// double (duplicates add, the last update wins), slices of several elements across threads,
// the 2-byte floats' sums, and each shape error and out-of-range row with TensorFlow's
// message (TensorFlow 2.21's, checked by hand).
#include <vector>

#include "gtest/gtest.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::as_doubles;
using testutil::expect_invalid;

OpAttrs shape_attr(std::initializer_list<int64_t> dims) {
  OpAttrs a;
  a.dims = dims;
  return a;
}

template <typename I>
HostTensor idx_tensor(const std::vector<int64_t>& dims, const std::vector<I>& values) {
  return HostTensor::make<I>(Shape::make(dims).value(), values);
}

template <typename T>
class ScatterKernelTest : public ::testing::Test {};
TYPED_TEST_SUITE(ScatterKernelTest, testutil::NumericTypes);

TYPED_TEST(ScatterKernelTest, ScatterNdAddsDuplicatesIntoZeros) {
  using T = TypeParam;
  for (bool wide : {false, true}) {
    // Rows of two indices into (3, 2, 2): slices of 2; row (1, 0) twice.
    const HostTensor idx = wide ? idx_tensor<int64_t>({3, 2}, {1, 0, 2, 1, 1, 0})
                                : HostTensor(idx_tensor<int32_t>({3, 2}, {1, 0, 2, 1, 1, 0}));
    const HostTensor upd = HostTensor::make<T>({3, 2}, {T(1), T(2), T(3), T(4), T(5), T(6)});
    absl::StatusOr<HostTensor> out = run_cpu(OpId::kScatterNd, {idx, upd}, shape_attr({3, 2, 2}));
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(out->shape(), S({3, 2, 2}));
    EXPECT_EQ(as_doubles(*out), (std::vector<double>{0, 0, 0, 0, 6, 8, 0, 0, 0, 0, 3, 4}));
  }
}

TYPED_TEST(ScatterKernelTest, TensorScatterAddAndUpdateStartFromTheTensor) {
  using T = TypeParam;
  const HostTensor tensor = HostTensor::make<T>({4}, {T(1), T(2), T(3), T(4)});
  const HostTensor idx = idx_tensor<int32_t>({3, 1}, {1, 3, 1});
  const HostTensor upd = HostTensor::make<T>({3}, {T(9), T(10), T(11)});
  absl::StatusOr<HostTensor> add = run_cpu(OpId::kTensorScatterAdd, {tensor, idx, upd});
  ASSERT_TRUE(add.ok()) << add.status();
  EXPECT_EQ(as_doubles(*add), (std::vector<double>{1, 22, 3, 14}));
  absl::StatusOr<HostTensor> update = run_cpu(OpId::kTensorScatterUpdate, {tensor, idx, upd});
  ASSERT_TRUE(update.ok()) << update.status();
  EXPECT_EQ(as_doubles(*update), (std::vector<double>{1, 11, 3, 10}));  // the last wins
}

TEST(ScatterKernelTest, TensorScatterUpdateTakesBool) {
  const HostTensor tensor = HostTensor::make<bool>({3}, {false, false, true});
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kTensorScatterUpdate,
              {tensor, idx_tensor<int64_t>({1, 1}, {0}), HostTensor::make<bool>({1}, {true})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(as_doubles(*out), (std::vector<double>{1, 0, 1}));
}

TEST(ScatterKernelTest, WideSlicesAcrossThreadsMatchDouble) {
  // 40 rows (every slice of 8 five times) of 20000 elements each.
  const int64_t rows = 40, slice = 20000;
  std::vector<int32_t> idx(rows);
  std::vector<double> upd(rows * slice), want(8 * slice, 0.0);
  for (int64_t n = 0; n < rows; ++n) {
    idx[n] = static_cast<int32_t>((n * 3) % 8);
    for (int64_t j = 0; j < slice; ++j) {
      upd[n * slice + j] = static_cast<double>((n + j) % 13) - 6;
      want[idx[n] * slice + j] += upd[n * slice + j];
    }
  }
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kScatterNd,
              {idx_tensor<int32_t>({rows, 1}, idx), HostTensor::make<double>({rows, slice}, upd)},
              shape_attr({8, slice}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<double>(), want);
}

TEST(ScatterKernelTest, TwoByteFloatsAddInFloat32AndRoundEachSum) {
  // 1 + 0.0004 rounds back to 1 in float16, and so does every sum after it.
  const HostTensor upd =
      HostTensor::make<float16>({3}, {float16(1.f), float16(0.0004f), float16(0.0004f)});
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kScatterNd, {idx_tensor<int32_t>({3, 1}, {0, 0, 0}), upd}, shape_attr({1}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(as_doubles(*out), (std::vector<double>{1.0}));
}

TEST(ScatterKernelTest, EmptyCallsWriteWhatTheyHave) {
  absl::StatusOr<HostTensor> none =
      run_cpu(OpId::kScatterNd, {idx_tensor<int32_t>({0, 1}, {}), HostTensor::make<float>({0}, {})},
              shape_attr({3}));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(as_doubles(*none), (std::vector<double>{0, 0, 0}));
  absl::StatusOr<HostTensor> empty = run_cpu(
      OpId::kTensorScatterAdd, {HostTensor::make<float>({0}, {}), idx_tensor<int64_t>({0, 1}, {}),
                                HostTensor::make<float>({0}, {})});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape(), S({0}));
}

TEST(ScatterKernelTest, RowsOutsideTheOutputAreTensorFlowsError) {
  auto message = [](absl::StatusOr<HostTensor> r) {
    return r.ok() ? std::string("ok") : std::string(r.status().message());
  };
  const HostTensor two = HostTensor::make<float>({2}, {1.f, 2.f});
  EXPECT_EQ(message(run_cpu(OpId::kScatterNd, {idx_tensor<int32_t>({2, 1}, {1, 5}), two},
                            shape_attr({4}))),
            "[ScatterNd] indices[1] = [5] does not index into shape [4]");
  EXPECT_EQ(message(run_cpu(OpId::kScatterNd, {idx_tensor<int64_t>({2, 1}, {1, -1}), two},
                            shape_attr({4}))),
            "[ScatterNd] indices[1] = [-1] does not index into shape [4]");
  EXPECT_EQ(message(run_cpu(OpId::kTensorScatterUpdate,
                            {HostTensor::make<float>({2, 2}, {1, 2, 3, 4}),
                             idx_tensor<int32_t>({2, 2}, {0, 1, 1, 2}), two})),
            "[TensorScatterUpdate] indices[1] = [1, 2] does not index into shape [2,2]");
  EXPECT_EQ(message(run_cpu(OpId::kTensorScatterAdd, {HostTensor::make<float>({4}, {1, 2, 3, 4}),
                                                      idx_tensor<int32_t>({2, 1}, {1, 5}), two})),
            "[TensorScatterAdd] indices[1] = [5] does not index into shape [4]");
}

TEST(ScatterKernelTest, ShapeErrorsAreTensorFlows) {
  const Shape idx21 = S({2, 1}), idx13 = S({1, 3}), idx11 = S({1, 1}), idx2 = S({2});
  const Shape v2 = S({2}), v3 = S({3}), v1 = S({1}), m23 = S({2, 3});
  const Shape scalar = S({}), m22 = S({2, 2}), v4 = S({4}), e0 = S({0}), idx10 = S({1, 0});
  const DType f = DType::kFloat32, i = DType::kInt32;
  auto nd = [](const Shape& indices, DType dtype, const Shape& updates,
               std::initializer_list<int64_t> shape) {
    return infer_output(OpId::kScatterNd, {{&indices, dtype}, {&updates, DType::kFloat32}},
                        shape_attr(shape));
  };
  expect_invalid(nd(idx21, f, v2, {4}), "[ScatterNd] indices must be int32 or int64, got float32");
  expect_invalid(nd(idx21, i, v2, {-1}), "[ScatterNd] Dimension -1 must be >= 0");
  expect_invalid(nd(idx21, i, v2, {}), "[ScatterNd] Output must be at least 1-D, got shape: []");
  expect_invalid(nd(scalar, i, v2, {4}),
                 "[ScatterNd] Indices shape must have rank at least one. Found:[]");
  expect_invalid(nd(idx11, i, v1, {0}),
                 "[ScatterNd] Indices and updates specified for empty output.  indices shape: "
                 "[1,1]");
  expect_invalid(nd(idx21, i, v3, {3}),
                 "[ScatterNd] Dimensions [0,1) of indices[shape=[2,1]] must match dimensions "
                 "[0,1) of updates[shape=[3]]");
  expect_invalid(nd(idx21, i, m23, {3, 2}),
                 "[ScatterNd] Dimensions [1,2) of input[shape=[3,2]] must match dimensions "
                 "[1,2) of updates[shape=[2,3]]");
  expect_invalid(nd(idx13, i, v1, {3, 2}),
                 "[ScatterNd] Dimensions [3,2) of input[shape=[3,2]] must match dimensions "
                 "[1,1) of updates[shape=[1]]");
  expect_invalid(nd(idx2, i, v2, {4}),
                 "[ScatterNd] Dimensions [2,1) of input[shape=[4]] must match dimensions [0,1) "
                 "of updates[shape=[2]]");
  auto ts = [](const Shape& tensor, const Shape& indices, const Shape& updates,
               DType updates_dtype = DType::kFloat32) {
    return infer_output(
        OpId::kTensorScatterUpdate,
        {{&tensor, DType::kFloat32}, {&indices, DType::kInt32}, {&updates, updates_dtype}},
        OpAttrs());
  };
  expect_invalid(ts(v4, idx21, v3),
                 "[TensorScatterUpdate] Outer dimensions of indices and update must match. "
                 "Indices shape: [2,1], updates shape:[3]");
  expect_invalid(ts(scalar, idx11, v1),
                 "[TensorScatterUpdate] Inner dimensions of output shape must match inner "
                 "dimensions of updates shape. Output: [] updates: [1]");
  expect_invalid(ts(m22, S({1, 1}), S({1, 3})),
                 "[TensorScatterUpdate] The inner 1 dimensions of output.shape=[2,2] must match "
                 "the inner 1 dimensions of updates.shape=[1,3]");
  expect_invalid(ts(e0, idx11, v1),
                 "[TensorScatterUpdate] Indices and updates specified for empty output shape");
  expect_invalid(ts(m22, idx10, m22),
                 "[TensorScatterUpdate] Indices and updates specified for empty output shape");
  expect_invalid(ts(v4, idx21, v2, DType::kInt32),
                 "[TensorScatterUpdate] dtypes differ: float32 vs int32");
  const Shape bools = S({2});
  absl::StatusOr<OutputMeta> add = infer_output(
      OpId::kTensorScatterAdd,
      {{&bools, DType::kBool}, {&idx21, DType::kInt32}, {&bools, DType::kBool}}, OpAttrs());
  ASSERT_FALSE(add.ok());
  EXPECT_EQ(add.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt
