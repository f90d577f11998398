// The CPU kernels on bfloat16 and float16, at 1, 2 and 7 threads, against a reference
// computed in double from the same (exactly widened) inputs.
//
// Note [Half tolerances]: each kernel computes in float32 and rounds once to H (Note [Half
// kernels on the CPU]). Rounding to H is off by at most its unit roundoff u relative:
// bfloat16 keeps 8 significand bits, u = 2^-8 (about 0.0039); float16 keeps 11, u = 2^-11
// (about 0.00049); near zero, a result below H's smallest normal is off by at most half its
// smallest subnormal. A float32 sum of n terms adds at most (n - 1) * 2^-24 * sum |x|.
// AddV2, Sub, Mul and RealDiv round exactly once (float32 holds more than 2p + 2 bits of an
// H with p bits), so they must equal H(float(x op y)) bit for bit; Neg, Abs, Relu, Max,
// Fill, Identity and the casts are exact too.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

template <typename H>
struct Precision;
template <>
struct Precision<bfloat16> {
  static constexpr double kUnitRoundoff = 0x1p-8;     // 8 significand bits
  static constexpr double kHalfSubnormal = 0x1p-134;  // half the smallest subnormal, 2^-133
};
template <>
struct Precision<float16> {
  static constexpr double kUnitRoundoff = 0x1p-11;   // 11 significand bits
  static constexpr double kHalfSubnormal = 0x1p-25;  // half the smallest subnormal, 2^-24
};

// Returns the largest error of rounding `want` to H (Note [Half tolerances]).
template <typename H>
double rounding_error(double want) {
  return std::fabs(want) * Precision<H>::kUnitRoundoff + Precision<H>::kHalfSubnormal;
}

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  const size_t bytes = a.shape().num_elements() * dtype_size(a.dtype());
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), bytes) == 0;
}

// Runs `op` at 1, 2 and 7 threads and returns the 1-thread result. Every op but MatMul must
// give the same bytes at each (a float32 MatMul's tiles may round differently: Note [GEMM
// tiles]); for MatMul the caller checks the 1-thread result and the others are not compared.
HostTensor run_threads(OpId op, const std::vector<HostTensor>& inputs, const OpAttrs& attrs = {}) {
  std::vector<HostTensor> results;
  for (int threads : {1, 2, 7}) {
    cpu::set_intra_op_threads(threads);
    absl::StatusOr<HostTensor> out = run_cpu(op, inputs, attrs);
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) break;
    results.push_back(*std::move(out));
  }
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
  if (results.size() != 3) return HostTensor::uninitialized(S({0}), DType::kFloat32);
  if (op != OpId::kMatMul) {
    EXPECT_TRUE(same_bytes(results[0], results[1]) && same_bytes(results[0], results[2]))
        << op_name(op) << ": the result changes with the thread count";
  }
  return results[0];
}

template <typename H>
HostTensor random_half(const Shape& shape, unsigned seed, double low = -4, double high = 4) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(static_cast<float>(low), static_cast<float>(high));
  std::vector<H> values(shape.num_elements());
  for (H& v : values) v = H(dist(gen));
  return HostTensor::make<H>(shape, values);
}

template <typename H>
std::vector<float> widen(const HostTensor& t) {
  std::vector<float> out;
  for (H v : t.values<H>()) out.push_back(static_cast<float>(v));
  return out;
}

template <typename H>
class HalfKernelsTest : public ::testing::Test {};
using HalfTypes = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(HalfKernelsTest, HalfTypes);

TYPED_TEST(HalfKernelsTest, BinaryOpsRoundTheFloatResultOnceWithBroadcasting) {
  using H = TypeParam;
  const Shape sa = S({517, 263}), sb = S({263});
  HostTensor a = random_half<H>(sa, 1), b = random_half<H>(sb, 2, 0.5, 4);
  const std::vector<float> va = widen<H>(a), vb = widen<H>(b);
  for (OpId op : {OpId::kAddV2, OpId::kSub, OpId::kMul, OpId::kRealDiv}) {
    const std::vector<H> c = run_threads(op, {a, b}).template values<H>();
    ASSERT_EQ(c.size(), va.size());
    int mismatches = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      const float x = va[i], y = vb[i % 263];
      const float want = op == OpId::kAddV2 ? x + y
                         : op == OpId::kSub ? x - y
                         : op == OpId::kMul ? x * y
                                            : x / y;
      mismatches += c[i].bits != H(want).bits;
    }
    EXPECT_EQ(mismatches, 0) << op_name(op);
  }
}

TYPED_TEST(HalfKernelsTest, UnaryOpsMatchTheStandardLibrary) {
  using H = TypeParam;
  HostTensor x = random_half<H>(S({250007}), 3, -8, 8);  // exp stays finite in float16
  std::vector<H> v = x.values<H>();
  v[5] = H(-std::numeric_limits<float>::infinity());
  v[6] = H(std::numeric_limits<float>::quiet_NaN());
  x = HostTensor::make<H>(x.shape(), v);
  const std::vector<float> in = widen<H>(x);
  const std::vector<H> e = run_threads(OpId::kExp, {x}).template values<H>();
  const std::vector<H> r = run_threads(OpId::kRelu, {x}).template values<H>();
  const std::vector<H> a = run_threads(OpId::kAbs, {x}).template values<H>();
  const std::vector<H> n = run_threads(OpId::kNeg, {x}).template values<H>();
  for (size_t i = 0; i < in.size(); ++i) {
    const double want = std::exp(static_cast<double>(in[i]));
    const float got = static_cast<float>(e[i]);
    if (std::isnan(in[i])) {
      EXPECT_TRUE(std::isnan(got)) << i;
    } else {  // float32 exp's own error, about 4e-7 relative, then one rounding to H
      EXPECT_NEAR(got, want, rounding_error<H>(want) + 4e-7 * want) << "exp(" << in[i] << ")";
    }
    EXPECT_TRUE(static_cast<float>(r[i]) == (in[i] < 0 ? 0.f : in[i]) || std::isnan(in[i])) << i;
    EXPECT_TRUE(static_cast<float>(a[i]) == std::fabs(in[i]) || std::isnan(in[i])) << i;
    EXPECT_TRUE(static_cast<float>(n[i]) == -in[i] || std::isnan(in[i])) << i;
  }
}

TYPED_TEST(HalfKernelsTest, AddNSumsInFloatAndRoundsOnce) {
  using H = TypeParam;
  std::vector<HostTensor> inputs;
  for (int k = 0; k < 9; ++k) inputs.push_back(random_half<H>(S({130001}), 10 + k));
  const std::vector<H> got = run_threads(OpId::kAddN, inputs).template values<H>();
  for (int64_t i = 0; i < 130001; i += 101) {
    double want = 0, abs_sum = 0;
    for (const HostTensor& t : inputs) {
      const double x = static_cast<float>(t.values<H>()[i]);
      want += x;
      abs_sum += std::fabs(x);
    }
    EXPECT_NEAR(static_cast<float>(got[i]), want, 8 * 0x1p-24 * abs_sum + rounding_error<H>(want))
        << "element " << i;
  }
}

TYPED_TEST(HalfKernelsTest, ReductionsAccumulateInFloat) {
  using H = TypeParam;
  const Shape shape = S({3, 200000});
  HostTensor x = random_half<H>(shape, 4);
  const std::vector<float> v = widen<H>(x);
  for (int axis : {0, 1}) {
    OpAttrs attrs;
    attrs.axes = {axis};
    const int64_t len = shape.dim(axis), other = shape.dim(1 - axis);
    for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax}) {
      const std::vector<H> got = run_threads(op, {x}, attrs).template values<H>();
      ASSERT_EQ(static_cast<int64_t>(got.size()), other);
      for (int64_t o = 0; o < other; o += (other > 100 ? 997 : 1)) {
        double sum = 0, abs_sum = 0, max = -INFINITY;
        for (int64_t r = 0; r < len; ++r) {
          const double e = v[axis == 1 ? o * len + r : r * other + o];
          sum += e;
          abs_sum += std::fabs(e);
          max = std::max(max, e);
        }
        const double float_error = (len - 1) * 0x1p-24 * abs_sum;  // Note [Half tolerances]
        const float g = static_cast<float>(got[o]);
        if (op == OpId::kMax) {
          EXPECT_EQ(g, max) << "axis " << axis << " element " << o;
        } else if (op == OpId::kSum) {
          EXPECT_NEAR(g, sum, float_error + rounding_error<H>(sum)) << axis << " " << o;
        } else {
          const double mean = sum / len;
          EXPECT_NEAR(g, mean, float_error / len + rounding_error<H>(mean)) << axis << " " << o;
        }
      }
    }
  }
}

TYPED_TEST(HalfKernelsTest, MatMulAccumulatesInFloat) {
  using H = TypeParam;
  const int64_t m = 67, k = 300, n = 45;
  HostTensor a = random_half<H>(S({m, k}), 5, -1, 1), b = random_half<H>(S({k, n}), 6, -1, 1);
  const std::vector<float> va = widen<H>(a), vb = widen<H>(b);
  const std::vector<H> c = run_threads(OpId::kMatMul, {a, b}).template values<H>();
  ASSERT_EQ(static_cast<int64_t>(c.size()), m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, abs_sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        want += double{va[i * k + p]} * vb[p * n + j];
        abs_sum += std::fabs(double{va[i * k + p]} * vb[p * n + j]);
      }
      EXPECT_NEAR(static_cast<float>(c[i * n + j]), want,
                  k * 0x1p-24 * abs_sum + rounding_error<H>(want))
          << i << "," << j;
    }
  }
}

TYPED_TEST(HalfKernelsTest, FillIdentityAndCastsAreExact) {
  using H = TypeParam;
  OpAttrs fill;
  fill.value.f = 2.5;
  const std::vector<H> filled =
      run_threads(OpId::kFill, {HostTensor::meta({1000, 301}, dtype_of<H>())}, fill)
          .template values<H>();
  EXPECT_EQ(std::count_if(filled.begin(), filled.end(), [](H h) { return h.bits == H(2.5f).bits; }),
            301000);
  HostTensor x = random_half<H>(S({100003}), 7, -300, 300);
  EXPECT_TRUE(same_bytes(run_threads(OpId::kIdentity, {x}), x));
  OpAttrs to_float;
  to_float.dst_dtype = DType::kFloat32;
  EXPECT_EQ(run_threads(OpId::kCast, {x}, to_float).template values<float>(), widen<H>(x));
  OpAttrs to_int;
  to_int.dst_dtype = DType::kInt32;
  const std::vector<int32_t> ints =
      run_threads(OpId::kCast, {x}, to_int).template values<int32_t>();
  const std::vector<float> wide = widen<H>(x);
  for (size_t i = 0; i < wide.size(); i += 97) EXPECT_EQ(ints[i], static_cast<int32_t>(wide[i]));
}

// Rounds float32 values to H with the Cast kernel.
template <typename H>
std::vector<uint16_t> cast_bits(const std::vector<float>& values) {
  OpAttrs attrs;
  attrs.dst_dtype = dtype_of<H>();
  absl::StatusOr<HostTensor> out =
      run_cpu(OpId::kCast, {HostTensor::make<float>({int64_t(values.size())}, values)}, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  std::vector<uint16_t> bits;
  if (out.ok()) {
    for (H h : out->template values<H>()) bits.push_back(h.bits);
  }
  return bits;
}

TEST(HalfCastTest, RoundsFloat32ToNearestEvenAndOverflowsToInf) {
  const float kInf = std::numeric_limits<float>::infinity();
  // float16: 65504 is the largest finite value; 65520 is halfway to the next (2^16), which
  // rounds to even: inf. 2^-25 is halfway between 0 and the smallest subnormal: 0.
  EXPECT_EQ(cast_bits<float16>({65504.f, 65519.f, 65520.f, 1e9f, -1e9f, 0x1p-24f, 0x1p-25f}),
            (std::vector<uint16_t>{0x7bff, 0x7bff, 0x7c00, 0x7c00, 0xfc00, 0x0001, 0x0000}));
  // bfloat16: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even is 1.
  EXPECT_EQ(cast_bits<bfloat16>({1.f + 0x1p-8f, 1.f + 3 * 0x1p-8f, kInf, 3.4e38f}),
            (std::vector<uint16_t>{0x3f80, 0x3f82, 0x7f80, 0x7f80}));
  const std::vector<uint16_t> nan = cast_bits<float16>({std::nanf("")});
  ASSERT_EQ(nan.size(), 1u);
  EXPECT_TRUE((nan[0] & 0x7c00) == 0x7c00 && (nan[0] & 0x3ff) != 0) << nan[0];
}

TEST(HalfCastTest, NonFiniteToIntegerFollowsTheFloatRules) {
  // docs/bad-input.md: NaN becomes 0, out-of-range values saturate.
  const float kInf = std::numeric_limits<float>::infinity();
  const HostTensor h = HostTensor::make<float16>(
      {4}, {float16(std::nanf("")), float16(kInf), float16(-kInf), float16(-2.75f)});
  OpAttrs attrs;
  attrs.dst_dtype = DType::kInt32;
  absl::StatusOr<HostTensor> out = run_cpu(OpId::kCast, {h}, attrs);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->values<int32_t>(),
            (std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(),
                                  std::numeric_limits<int32_t>::lowest(), -2}));
}

}  // namespace
}  // namespace mt
