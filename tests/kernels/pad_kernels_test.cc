// CPU kernels of Pad, PadV2, MirrorPad and MirrorPadGrad, run through the registry: values
// TensorFlow 2.21 gives for the same calls (each dtype family), a plain reference over many
// shapes, zero-sized dimensions, and each error with TensorFlow's message.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/pad.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::as_doubles;
using testutil::HostTensor;
using testutil::run_cpu;
using testutil::S;

OpAttrs pads(std::vector<int64_t> flat, bool symmetric = false, double value = 0) {
  OpAttrs a;
  a.dims.assign(flat.begin(), flat.end());
  a.symmetric = symmetric;
  a.value = Scalar{value, static_cast<int64_t>(value), value != 0};
  return a;
}

HostTensor one_to_six() { return HostTensor::make<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6}); }

std::vector<double> run(OpId op, const HostTensor& x, const OpAttrs& attrs, Shape* shape) {
  absl::StatusOr<HostTensor> out = run_cpu(op, {x}, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  *shape = out->shape();
  return as_doubles(*out);
}

TEST(PadKernelTest, PadsAsTensorFlowDoes) {
  Shape shape;
  // tf.pad(x, [[1, 0], [0, 2]])
  EXPECT_EQ(run(OpId::kPad, one_to_six(), pads({1, 0, 0, 2}), &shape),
            (std::vector<double>{0, 0, 0, 0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 0, 0}));
  EXPECT_EQ(shape, S({3, 5}));
  // tf.pad(x, [[0, 1], [2, 1]], mode="REFLECT")
  EXPECT_EQ(run(OpId::kMirrorPad, one_to_six(), pads({0, 1, 2, 1}), &shape),
            (std::vector<double>{3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(shape, S({3, 6}));
  // tf.pad(x, [[2, 1], [1, 3]], mode="SYMMETRIC")
  EXPECT_EQ(run(OpId::kMirrorPad, one_to_six(), pads({2, 1, 1, 3}, true), &shape),
            (std::vector<double>{4, 4, 5, 6, 6, 5, 4, 1, 1, 2, 3, 3, 2, 1, 1, 1, 2, 3,
                                 3, 2, 1, 4, 4, 5, 6, 6, 5, 4, 4, 4, 5, 6, 6, 5, 4}));
  EXPECT_EQ(shape, S({5, 7}));
}

TEST(PadKernelTest, PadV2WritesItsConstantInTheDtype) {
  // tf.pad([True, False], [[1, 2]], constant_values=True)
  absl::StatusOr<HostTensor> b =
      run_cpu(OpId::kPadV2, {HostTensor::make<bool>({2}, {true, false})}, pads({1, 2}, false, 1));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->values<bool>(), (std::vector<bool>{true, true, false, true, true}));
  // tf.pad(bfloat16 [1.5, 2.5], [[1, 1]], constant_values=0.1): 0.1 rounds to 0.10009765625
  const HostTensor h = HostTensor::make<bfloat16>({2}, {bfloat16(1.5f), bfloat16(2.5f)});
  Shape shape;
  EXPECT_EQ(run(OpId::kPadV2, h, pads({1, 1}, false, 0.1), &shape),
            (std::vector<double>{0.10009765625, 1.5, 2.5, 0.10009765625}));
  // A float64 constant keeps its bits; an integer one is the integer part.
  const HostTensor d = HostTensor::make<double>({1}, {2});
  EXPECT_EQ(run(OpId::kPadV2, d, pads({0, 1}, false, 0.1), &shape), (std::vector<double>{2, 0.1}));
  EXPECT_EQ(run(OpId::kPadV2, one_to_six(), pads({0, 0, 0, 1}, false, -7), &shape),
            (std::vector<double>{1, 2, 3, -7, 4, 5, 6, -7}));
}

TEST(PadKernelTest, MirrorPadGradSumsWhatWasCopiedAsTensorFlowDoes) {
  std::vector<float> g10, g20;
  for (int i = 1; i <= 20; ++i) (i <= 10 ? g10 : g20).push_back(static_cast<float>(i));
  g20.insert(g20.begin(), g10.begin(), g10.end());
  const HostTensor a = HostTensor::make<float>({2, 5}, g10),
                   b = HostTensor::make<float>({4, 5}, g20);
  Shape shape;
  // tf.raw_ops.MirrorPadGrad of range(1, 11) as [2, 5] and of range(1, 21) as [4, 5].
  EXPECT_EQ(run(OpId::kMirrorPadGrad, a, pads({0, 0, 1, 1}), &shape),
            (std::vector<double>{2, 9, 4, 7, 24, 9}));
  EXPECT_EQ(shape, S({2, 3}));
  EXPECT_EQ(run(OpId::kMirrorPadGrad, a, pads({0, 0, 2, 1}, true), &shape),
            (std::vector<double>{5, 10, 15, 25}));
  EXPECT_EQ(run(OpId::kMirrorPadGrad, b, pads({1, 1, 2, 1}, true), &shape),
            (std::vector<double>{20, 35, 60, 95}));
  EXPECT_EQ(run(OpId::kMirrorPadGrad, b, pads({1, 0, 1, 1}), &shape),
            (std::vector<double>{7, 24, 9, 14, 48, 18, 17, 54, 19}));
  EXPECT_EQ(shape, S({3, 3}));
}

// Every element of a MirrorPad of a 3-D iota, in both modes, against the index formula in
// plain loops; MirrorPadGrad of ones counts how often each element was copied.
TEST(PadKernelTest, MirrorPadAndItsGradientMatchAReference) {
  std::vector<int64_t> iota(2 * 3 * 4);
  for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int64_t>(i);
  const HostTensor x = HostTensor::make<int64_t>({2, 3, 4}, iota);
  const int64_t n[3] = {2, 3, 4};
  for (bool symmetric : {false, true}) {
    const std::vector<int64_t> flat = {1, 0, 2, symmetric ? 3 : 2, 3, 1};
    absl::StatusOr<HostTensor> out = run_cpu(OpId::kMirrorPad, {x}, pads(flat, symmetric));
    ASSERT_TRUE(out.ok()) << out.status();
    const Shape& s = out->shape();
    ASSERT_EQ(s, S({3, n[1] + 2 + flat[3], 8}));
    const std::vector<int64_t> got = out->values<int64_t>();
    std::vector<int64_t> copies(iota.size(), 0);
    for (int64_t i = 0; i < s.dim(0); ++i) {
      for (int64_t j = 0; j < s.dim(1); ++j) {
        for (int64_t k = 0; k < s.dim(2); ++k) {
          const int64_t a = internal::mirror_source(i, 1, n[0], symmetric);
          const int64_t b = internal::mirror_source(j, 2, n[1], symmetric);
          const int64_t c = internal::mirror_source(k, 3, n[2], symmetric);
          EXPECT_EQ(got[(i * s.dim(1) + j) * s.dim(2) + k], (a * 3 + b) * 4 + c);
          ++copies[(a * 3 + b) * 4 + c];
        }
      }
    }
    const HostTensor ones = HostTensor::make<int64_t>(s, std::vector<int64_t>(s.num_elements(), 1));
    absl::StatusOr<HostTensor> grad = run_cpu(OpId::kMirrorPadGrad, {ones}, pads(flat, symmetric));
    ASSERT_TRUE(grad.ok()) << grad.status();
    EXPECT_EQ(grad->values<int64_t>(), copies);
  }
}

TEST(PadKernelTest, HandlesZeroSizedDimensionsAndScalars) {
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kPad, {HostTensor::make<float>({2, 0}, {})}, pads({0, 0, 1, 0}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<float>(), (std::vector<float>{0, 0}));
  out = run_cpu(OpId::kMirrorPad, {HostTensor::make<float>({2, 0}, {})}, pads({1, 1, 0, 0}, true));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->shape(), S({4, 0}));
  out = run_cpu(OpId::kMirrorPad, {HostTensor::make<float>({}, {3})}, pads({}));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<float>(), (std::vector<float>{3}));
}

TEST(PadKernelTest, RejectsBadPaddingsWithTensorFlowsMessages) {
  const Shape m = S({2, 3}), g = S({2, 5});
  const auto infer = [](OpId op, const Shape& s, const OpAttrs& a, DType t = DType::kFloat32) {
    return infer_output(op, {{&s, t}}, a);
  };
  testutil::expect_invalid(infer(OpId::kPad, m, pads({1, 1, -1, 0})),
                           "[Pad] Paddings must be non-negative: -1 0");
  testutil::expect_invalid(infer(OpId::kPadV2, m, pads({1, 1})),
                           "[PadV2] The first dimension of paddings must be the rank of "
                           "inputs[1,2] [2,3]");
  testutil::expect_invalid(infer(OpId::kMirrorPad, m, pads({0, 0, 1, 1, 0, 0})),
                           "[MirrorPad] The first dimension of paddings must be the rank of "
                           "inputs[3,2], [2,3]");
  testutil::expect_invalid(infer(OpId::kPad, m, pads({1, 1, 1})),
                           "[Pad] paddings must be a matrix with 2 columns: got 3 values");
  testutil::expect_invalid(infer(OpId::kMirrorPad, m, pads({1, 1, 3, 0})),
                           "[MirrorPad] paddings must be less than the dimension size: 3, 0 not "
                           "less than 3");
  testutil::expect_invalid(infer(OpId::kMirrorPad, m, pads({1, 1, 4, 0}, true)),
                           "[MirrorPad] paddings must be no greater than the dimension size: 4, "
                           "0 greater than 3");
  testutil::expect_invalid(infer(OpId::kMirrorPad, m, pads({1, 1, -1, 2})),
                           "[MirrorPad] paddings must be non-negative: -1 2");
  testutil::expect_invalid(infer(OpId::kMirrorPadGrad, g, pads({0, 0, 3, 3})),
                           "[MirrorPadGrad] Total paddings must be less than the input "
                           "dimension size: 6 was not less than 5");
  testutil::expect_invalid(infer(OpId::kMirrorPadGrad, g, pads({0, 0, 2, 1})),
                           "[MirrorPadGrad] paddings must be less than the output dimension "
                           "size: 2, 1 not less than 2");
  testutil::expect_invalid(infer(OpId::kMirrorPadGrad, g, pads({0, 0, 3, 1}, true)),
                           "[MirrorPadGrad] paddings must be no greater than the output "
                           "dimension size: 3, 1 greater than 1");
  testutil::expect_invalid(infer(OpId::kMirrorPadGrad, g, pads({0, 0, -1, 1})),
                           "[MirrorPadGrad] Paddings must be non-negative: -1, 1");
  testutil::expect_invalid(
      infer(OpId::kPad, S({1, 1, 1, 1, 1, 1, 1}), pads(std::vector<int64_t>(14))),
      "[Pad] Only ranks up to 6 supported: [1,1,1,1,1,1,1]");
  testutil::expect_invalid(infer(OpId::kPad, m, pads({0, 0, int64_t{1} << 62, int64_t{1} << 62})),
                           "[Pad] the paddings of dimension 1 overflow int64");
  absl::StatusOr<OutputMeta> six =
      infer(OpId::kMirrorPad, S({2, 2, 2, 2, 2, 2}), pads(std::vector<int64_t>(12)));
  ASSERT_FALSE(six.ok());
  EXPECT_EQ(six.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(six.status().message(), "[MirrorPad] inputs rank not in [0,5]: 6");
  absl::StatusOr<OutputMeta> b = infer(OpId::kMirrorPadGrad, g, pads({0, 0, 1, 1}), DType::kBool);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mt
