// Printing bfloat16 and float16 tensors. Every expected string is TensorFlow 2's str() of
// tf.constant(values, dtype=...) with the "tf.Tensor(" wrapper and the ", shape=..." tail
// cut (minitensor adds both the same way for every dtype), pasted verbatim.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "gtest/gtest.h"
#include "runtime/eager/tensor_format.h"

namespace mt::internal {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename H>
std::string format(const std::vector<float>& values, const std::vector<int64_t>& dims) {
  std::vector<H> narrowed;
  for (float v : values) narrowed.push_back(H(v));
  return format_values(narrowed.data(), dtype_of<H>(), Shape::make(dims).value());
}

template <typename H>
std::string format_scalar(float value) {
  const H h(value);
  return format_values(&h, dtype_of<H>(), Shape());
}

TEST(HalfFormatTest, PrintsBfloat16AsTensorFlowDoes) {
  EXPECT_EQ(format<bfloat16>({1.5f, 2.25f}, {2}), "[1.5 2.25]");
  EXPECT_EQ(format<bfloat16>({0.1f, 1e-5f, 3.f}, {3}), "[0.100098 1.00136e-05 3]");
  EXPECT_EQ(format<bfloat16>({kNan, kInf, -kInf, -1.5f, 0.f, -0.f}, {6}),
            "[nan inf -inf -1.5 0 -0]");
  EXPECT_EQ(format<bfloat16>({1e9f, 1.f}, {2}), "[9.98244e+08 1]");
  EXPECT_EQ(format<bfloat16>({1, 2, 3, 4}, {2, 2}), "[[1 2]\n [3 4]]");
  EXPECT_EQ(format_scalar<bfloat16>(0.1f), "0.100098");
  EXPECT_EQ(format<bfloat16>(std::vector<float>(30, 0.5f), {30}),
            "[0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5\n"
            " 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5]");
}

TEST(HalfFormatTest, SummarisesLongBfloat16Tensors) {
  std::vector<float> values(2000);
  for (int i = 0; i < 2000; ++i) values[i] = static_cast<float>(i);
  EXPECT_EQ(format<bfloat16>(values, {2000}), "[0 1 2 ... 2000 2000 2000]");
  EXPECT_EQ(format<float16>(values, {2000}),
            "[0.000e+00 1.000e+00 2.000e+00 ... 1.997e+03 1.998e+03 1.999e+03]");
}

TEST(HalfFormatTest, PrintsFloat16AsNumPyDoes) {
  EXPECT_EQ(format<float16>({0.1f, 2.f, 3.f}, {3}), "[0.1 2.  3. ]");
  EXPECT_EQ(format<float16>({0.1f, 70000.f, kNan}, {3}), "[0.1 inf nan]");
  EXPECT_EQ(format<float16>({1e-5f, 100.f}, {2}), "[1.e-05 1.e+02]");
  EXPECT_EQ(format<float16>({1000.f, 1.f}, {2}), "[1.e+03 1.e+00]");
  EXPECT_EQ(format<float16>({-2.5f, 1e-3f, 12.25f}, {3}), "[-2.500e+00  1.000e-03  1.225e+01]");
  EXPECT_EQ(format_scalar<float16>(0.1f), "0.1");
  EXPECT_EQ(format_scalar<float16>(1000.f), "1e+03");
  EXPECT_EQ(format_scalar<float16>(999.f), "999.0");
}

}  // namespace
}  // namespace mt::internal
