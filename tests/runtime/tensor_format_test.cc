#include "runtime/eager/tensor_format.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "gtest/gtest.h"

namespace mt::internal {
namespace {

// Every expected string below is NumPy 2.4's str() of the same values, pasted verbatim;
// the NumPy expression that produced it is in the comment above each check.

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Shape make_shape(const std::vector<int64_t>& dims) {
  return Shape::make(absl::MakeConstSpan(dims)).value();
}

template <typename T>
std::string format(const std::vector<T>& values, const std::vector<int64_t>& dims) {
  return format_values(values.data(), dtype_of<T>(), make_shape(dims));
}

std::string format_bools(const std::vector<uint8_t>& values, const std::vector<int64_t>& dims) {
  return format_values(values.data(), DType::kBool, make_shape(dims));
}

template <typename T>
std::string format_scalar(T value) {
  return format_values(&value, dtype_of<T>(), Shape());
}

// Returns 0, 1, ..., n - 1 scaled by `scale`, like np.arange(n) * scale.
template <typename T>
std::vector<T> arange(int64_t n, T scale = 1) {
  std::vector<T> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<T>(i) * scale;
  return values;
}

TEST(FormatValuesTest, PrintsFloatScalarsLikeNumpyScalars) {
  // str(np.array(22.0, np.float32)), str(np.array(1.5)), str(np.array(-0.0))
  EXPECT_EQ(format_scalar(22.0f), "22.0");
  EXPECT_EQ(format_scalar(1.5), "1.5");
  EXPECT_EQ(format_scalar(-0.0), "-0.0");
}

TEST(FormatValuesTest, PrintsFloat32ScalarAtFloat32Precision) {
  // str(np.array(0.1, np.float32)), str(np.array(1/3, np.float32))
  EXPECT_EQ(format_scalar(0.1f), "0.1");
  EXPECT_EQ(format_scalar(1.0f / 3.0f), "0.33333334");
}

TEST(FormatValuesTest, PrintsLargeAndTinyScalarsInScientificForm) {
  // str(np.array(x)) for 1e20, 1e-5, 1.5e-5, 1e16, 1e15 + 0.3
  EXPECT_EQ(format_scalar(1e20), "1e+20");
  EXPECT_EQ(format_scalar(1e-5), "1e-05");
  EXPECT_EQ(format_scalar(1.5e-5), "1.5e-05");
  EXPECT_EQ(format_scalar(1e16), "1e+16");
  EXPECT_EQ(format_scalar(1e15 + 0.3), "1000000000000000.2");
}

TEST(FormatValuesTest, UsesFloat32ScalarCutoffs) {
  // str(np.array(x, np.float32)) for 1e6, 123456.7, 1e-4; str(np.array(1e6)), np.array(1e-4)
  EXPECT_EQ(format_scalar(1e6f), "1e+06");
  EXPECT_EQ(format_scalar(123456.7f), "123456.7");
  EXPECT_EQ(format_scalar(1e-4f), "1e-04");
  EXPECT_EQ(format_scalar(1e6), "1000000.0");
  EXPECT_EQ(format_scalar(1e-4), "0.0001");
}

TEST(FormatValuesTest, PrintsNonFiniteScalars) {
  // str(np.array(np.nan)), str(np.array(np.inf, np.float32)), str(np.array(-np.inf))
  EXPECT_EQ(format_scalar(kNan), "nan");
  EXPECT_EQ(format_scalar(static_cast<float>(kInf)), "inf");
  EXPECT_EQ(format_scalar(-kInf), "-inf");
}

TEST(FormatValuesTest, PrintsIntAndBoolScalars) {
  // str(np.array(3, np.int32)), str(np.array(-7)), str(np.array(True)), str(np.array(False))
  EXPECT_EQ(format_scalar(int32_t{3}), "3");
  EXPECT_EQ(format_scalar(int64_t{-7}), "-7");
  uint8_t t = 1, f = 0;
  EXPECT_EQ(format_values(&t, DType::kBool, Shape()), "True");
  EXPECT_EQ(format_values(&f, DType::kBool, Shape()), "False");
}

TEST(FormatValuesTest, PrintsIntegralFloatsWithBareDecimalPoint) {
  // str(np.array([[22, 28], [49, 64]], np.float32))
  EXPECT_EQ(format<float>({22, 28, 49, 64}, {2, 2}), "[[22. 28.]\n [49. 64.]]");
}

TEST(FormatValuesTest, AlignsDecimalPoints) {
  // str(np.array([1.5, 2.25])), str(np.array([-1.5, 2, 3.125, 100]))
  EXPECT_EQ(format<double>({1.5, 2.25}, {2}), "[1.5  2.25]");
  EXPECT_EQ(format<double>({-1.5, 2, 3.125, 100}, {4}), "[ -1.5     2.      3.125 100.   ]");
}

TEST(FormatValuesTest, PrintsFloat32ArrayAtFloat32Precision) {
  // str(np.array([0.1, 0.2, 0.3], np.float32))
  EXPECT_EQ(format<float>({0.1f, 0.2f, 0.3f}, {3}), "[0.1 0.2 0.3]");
}

TEST(FormatValuesTest, RoundsToEightFractionDigits) {
  // str(np.array([1/3, 2/3])), str(np.array([0.1 + 0.2, 1.0]))
  EXPECT_EQ(format<double>({1.0 / 3, 2.0 / 3}, {2}), "[0.33333333 0.66666667]");
  EXPECT_EQ(format<double>({0.1 + 0.2, 1.0}, {2}), "[0.3 1. ]");
}

TEST(FormatValuesTest, RoundsHalfwayDigitsToEven) {
  // str(np.array([0.001953125, 0.005859375, 1.0]))  (exact binary ties at digit 9)
  EXPECT_EQ(format<double>({0.001953125, 0.005859375, 1.0}, {3}),
            "[0.00195312 0.00585938 1.        ]");
}

TEST(FormatValuesTest, PrintsNegativeZero) {
  // str(np.array([-0.0, 1.0])), str(np.array([-0.0, 0.0], np.float32))
  EXPECT_EQ(format<double>({-0.0, 1.0}, {2}), "[-0.  1.]");
  EXPECT_EQ(format<float>({-0.0f, 0.0f}, {2}), "[-0.  0.]");
}

TEST(FormatValuesTest, PadsNanAndInfToCommonWidth) {
  // str(np.array([np.nan, 1.5, -np.inf])), str(np.array([np.inf, 0.25, 10.0]))
  EXPECT_EQ(format<double>({kNan, 1.5, -kInf}, {3}), "[ nan  1.5 -inf]");
  EXPECT_EQ(format<double>({kInf, 0.25, 10.0}, {3}), "[  inf  0.25 10.  ]");
}

TEST(FormatValuesTest, PrintsArrayOfOnlyNonFiniteValues) {
  // str(np.array([np.nan, np.inf])), str(np.array([np.nan, -np.inf], np.float32))
  EXPECT_EQ(format<double>({kNan, kInf}, {2}), "[nan inf]");
  EXPECT_EQ(format<float>({static_cast<float>(kNan), static_cast<float>(-kInf)}, {2}),
            "[ nan -inf]");
}

TEST(FormatValuesTest, SwitchesToScientificWhenRatioExceedsThousand) {
  // str(np.array([1.0, 2000.0])), str(np.array([1.0, 1000.0]))
  EXPECT_EQ(format<double>({1.0, 2000.0}, {2}), "[1.e+00 2.e+03]");
  EXPECT_EQ(format<double>({1.0, 1000.0}, {2}), "[   1. 1000.]");
}

TEST(FormatValuesTest, SwitchesToScientificForTinyValues) {
  // str(np.array([1e-5, 0.5])), str(np.array([1e-4, 1e-3], np.float32)), np.array([0.0, 0.0])
  EXPECT_EQ(format<double>({1e-5, 0.5}, {2}), "[1.e-05 5.e-01]");
  EXPECT_EQ(format<float>({1e-4f, 1e-3f}, {2}), "[0.0001 0.001 ]");
  EXPECT_EQ(format<double>({0.0, 0.0}, {2}), "[0. 0.]");
}

TEST(FormatValuesTest, SwitchesToScientificAtDTypeDependentMaximum) {
  // str(np.array([1e6, 1e5], np.float32)), str(np.array([1e6, 1e5])), np.array([1e8, 1e6])
  EXPECT_EQ(format<float>({1e6f, 1e5f}, {2}), "[1.e+06 1.e+05]");
  EXPECT_EQ(format<double>({1e6, 1e5}, {2}), "[1000000.  100000.]");
  EXPECT_EQ(format<double>({1e8, 1e6}, {2}), "[1.e+08 1.e+06]");
}

TEST(FormatValuesTest, PadsScientificMantissasWithExactDigits) {
  // str(np.array([1e-5, 1.2345678], np.float32)), str(np.array([-1.5e10, 2.0, np.nan]))
  EXPECT_EQ(format<float>({1e-5f, 1.2345678f}, {2}), "[9.9999997e-06 1.2345678e+00]");
  EXPECT_EQ(format<double>({-1.5e10, 2.0, kNan}, {3}), "[-1.5e+10  2.0e+00      nan]");
}

TEST(FormatValuesTest, WidensThreeDigitExponents) {
  // str(np.array([1e-300, 1e300, 5.0]))
  EXPECT_EQ(format<double>({1e-300, 1e300, 5.0}, {3}), "[1.e-300 1.e+300 5.e+000]");
}

TEST(FormatValuesTest, RightAlignsIntegers) {
  // str(np.array([1, -20, 300], np.int32))
  EXPECT_EQ(format<int32_t>({1, -20, 300}, {3}), "[  1 -20 300]");
}

TEST(FormatValuesTest, PrintsInt64Extremes) {
  // str(np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min, 0]))
  EXPECT_EQ(format<int64_t>(
                {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), 0}, {3}),
            "[ 9223372036854775807 -9223372036854775808                    0]");
}

TEST(FormatValuesTest, PadsTrueToWidthOfFalse) {
  // str(np.array([True, False])), str(np.array([[True, True], [False, True]]))
  EXPECT_EQ(format_bools({1, 0}, {2}), "[ True False]");
  EXPECT_EQ(format_bools({1, 1, 0, 1}, {2, 2}), "[[ True  True]\n [False  True]]");
}

TEST(FormatValuesTest, TreatsAnyNonZeroByteAsTrue) {
  // str(np.array([True, True, False]))
  EXPECT_EQ(format_bools({1, 7, 0}, {3}), "[ True  True False]");
}

TEST(FormatValuesTest, PrintsSingleElementArrays) {
  // str(np.array([5], np.int32)), str(np.array([[[2.5]]]))
  EXPECT_EQ(format<int32_t>({5}, {1}), "[5]");
  EXPECT_EQ(format<double>({2.5}, {1, 1, 1}), "[[[2.5]]]");
}

TEST(FormatValuesTest, SeparatesRank3BlocksWithBlankLine) {
  // str(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
  EXPECT_EQ(format(arange<int32_t>(24), {2, 3, 4}),
            "[[[ 0  1  2  3]\n"
            "  [ 4  5  6  7]\n"
            "  [ 8  9 10 11]]\n"
            "\n"
            " [[12 13 14 15]\n"
            "  [16 17 18 19]\n"
            "  [20 21 22 23]]]");
}

TEST(FormatValuesTest, SeparatesRank4BlocksWithTwoBlankLines) {
  // str(np.arange(16.0).reshape(2, 2, 2, 2))
  EXPECT_EQ(format(arange<double>(16), {2, 2, 2, 2}),
            "[[[[ 0.  1.]\n"
            "   [ 2.  3.]]\n"
            "\n"
            "  [[ 4.  5.]\n"
            "   [ 6.  7.]]]\n"
            "\n"
            "\n"
            " [[[ 8.  9.]\n"
            "   [10. 11.]]\n"
            "\n"
            "  [[12. 13.]\n"
            "   [14. 15.]]]]");
}

TEST(FormatValuesTest, WrapsLongRowsAtSeventyFiveColumns) {
  // str(np.arange(30, dtype=np.int64)), str(np.arange(20.0) * (1 / 7))
  EXPECT_EQ(format(arange<int64_t>(30), {30}),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
            " 24 25 26 27 28 29]");
  EXPECT_EQ(format(arange<double>(20, 1.0 / 7), {20}),
            "[0.         0.14285714 0.28571429 0.42857143 0.57142857 0.71428571\n"
            " 0.85714286 1.         1.14285714 1.28571429 1.42857143 1.57142857\n"
            " 1.71428571 1.85714286 2.         2.14285714 2.28571429 2.42857143\n"
            " 2.57142857 2.71428571]");
}

TEST(FormatValuesTest, IndentsWrappedRowsOfMatrix) {
  // str((np.arange(36.0) * 1.25).reshape(2, 18))
  EXPECT_EQ(format(arange<double>(36, 1.25), {2, 18}),
            "[[ 0.    1.25  2.5   3.75  5.    6.25  7.5   8.75 10.   11.25 12.5  13.75\n"
            "  15.   16.25 17.5  18.75 20.   21.25]\n"
            " [22.5  23.75 25.   26.25 27.5  28.75 30.   31.25 32.5  33.75 35.   36.25\n"
            "  37.5  38.75 40.   41.25 42.5  43.75]]");
}

TEST(FormatValuesTest, WrapsScientificValuesInRank3) {
  // str((np.arange(1, 25, dtype=np.float32) * np.float32(1e5)).reshape(2, 1, 12))
  std::vector<float> values = arange<float>(25, 1e5f);
  values.erase(values.begin());
  EXPECT_EQ(format(values, {2, 1, 12}),
            "[[[1.0e+05 2.0e+05 3.0e+05 4.0e+05 5.0e+05 6.0e+05 7.0e+05 8.0e+05\n"
            "   9.0e+05 1.0e+06 1.1e+06 1.2e+06]]\n"
            "\n"
            " [[1.3e+06 1.4e+06 1.5e+06 1.6e+06 1.7e+06 1.8e+06 1.9e+06 2.0e+06\n"
            "   2.1e+06 2.2e+06 2.3e+06 2.4e+06]]]");
}

TEST(FormatValuesTest, DoesNotSummariseThousandElements) {
  // '...' in str(np.arange(1000, dtype=np.int32).reshape(10, 100)) is False
  EXPECT_EQ(format(arange<int32_t>(1000), {10, 100}).find("..."), std::string::npos);
}

TEST(FormatValuesTest, SummarisesVectorOverThousandElements) {
  // str(np.arange(1001, dtype=np.int64))
  EXPECT_EQ(format(arange<int64_t>(1001), {1001}), "[   0    1    2 ...  998  999 1000]");
}

TEST(FormatValuesTest, SummarisesOnlyLongAxes) {
  // str(np.arange(2000, dtype=np.float32).reshape(2, 1000))
  EXPECT_EQ(format(arange<float>(2000), {2, 1000}),
            "[[0.000e+00 1.000e+00 2.000e+00 ... 9.970e+02 9.980e+02 9.990e+02]\n"
            " [1.000e+03 1.001e+03 1.002e+03 ... 1.997e+03 1.998e+03 1.999e+03]]");
}

TEST(FormatValuesTest, SummarisesEveryAxisOfLargeCube) {
  // str(np.arange(8000, dtype=np.int32).reshape(20, 20, 20))
  EXPECT_EQ(format(arange<int32_t>(8000), {20, 20, 20}),
            "[[[   0    1    2 ...   17   18   19]\n"
            "  [  20   21   22 ...   37   38   39]\n"
            "  [  40   41   42 ...   57   58   59]\n"
            "  ...\n"
            "  [ 340  341  342 ...  357  358  359]\n"
            "  [ 360  361  362 ...  377  378  379]\n"
            "  [ 380  381  382 ...  397  398  399]]\n"
            "\n"
            " [[ 400  401  402 ...  417  418  419]\n"
            "  [ 420  421  422 ...  437  438  439]\n"
            "  [ 440  441  442 ...  457  458  459]\n"
            "  ...\n"
            "  [ 740  741  742 ...  757  758  759]\n"
            "  [ 760  761  762 ...  777  778  779]\n"
            "  [ 780  781  782 ...  797  798  799]]\n"
            "\n"
            " [[ 800  801  802 ...  817  818  819]\n"
            "  [ 820  821  822 ...  837  838  839]\n"
            "  [ 840  841  842 ...  857  858  859]\n"
            "  ...\n"
            "  [1140 1141 1142 ... 1157 1158 1159]\n"
            "  [1160 1161 1162 ... 1177 1178 1179]\n"
            "  [1180 1181 1182 ... 1197 1198 1199]]\n"
            "\n"
            " ...\n"
            "\n"
            " [[6800 6801 6802 ... 6817 6818 6819]\n"
            "  [6820 6821 6822 ... 6837 6838 6839]\n"
            "  [6840 6841 6842 ... 6857 6858 6859]\n"
            "  ...\n"
            "  [7140 7141 7142 ... 7157 7158 7159]\n"
            "  [7160 7161 7162 ... 7177 7178 7179]\n"
            "  [7180 7181 7182 ... 7197 7198 7199]]\n"
            "\n"
            " [[7200 7201 7202 ... 7217 7218 7219]\n"
            "  [7220 7221 7222 ... 7237 7238 7239]\n"
            "  [7240 7241 7242 ... 7257 7258 7259]\n"
            "  ...\n"
            "  [7540 7541 7542 ... 7557 7558 7559]\n"
            "  [7560 7561 7562 ... 7577 7578 7579]\n"
            "  [7580 7581 7582 ... 7597 7598 7599]]\n"
            "\n"
            " [[7600 7601 7602 ... 7617 7618 7619]\n"
            "  [7620 7621 7622 ... 7637 7638 7639]\n"
            "  [7640 7641 7642 ... 7657 7658 7659]\n"
            "  ...\n"
            "  [7940 7941 7942 ... 7957 7958 7959]\n"
            "  [7960 7961 7962 ... 7977 7978 7979]\n"
            "  [7980 7981 7982 ... 7997 7998 7999]]]");
}

TEST(FormatValuesTest, SizesSummaryFromPrintedCornersOnly) {
  // a = np.full(2000, 2.5); a[1000] = 1e12; str(a)
  std::vector<double> floats(2000, 2.5);
  floats[1000] = 1e12;
  EXPECT_EQ(format(floats, {2000}), "[2.5 2.5 2.5 ... 2.5 2.5 2.5]");
  // a = np.ones(2000, np.int32); a[1000] = 123456; str(a)
  std::vector<int32_t> ints(2000, 1);
  ints[1000] = 123456;
  EXPECT_EQ(format(ints, {2000}), "[1 1 1 ... 1 1 1]");
}

TEST(FormatValuesTest, PrintsEmptyArraysAsBrackets) {
  // str(np.zeros((0,))), str(np.zeros((2, 0))), str(np.zeros((0, 3), np.int32))
  EXPECT_EQ(format<double>({}, {0}), "[]");
  EXPECT_EQ(format<double>({}, {2, 0}), "[]");
  EXPECT_EQ(format<int32_t>({}, {0, 3}), "[]");
  EXPECT_EQ(format_bools({}, {3, 0, 2}), "[]");
}

}  // namespace
}  // namespace mt::internal
