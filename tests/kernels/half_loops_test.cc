// The vectorised bfloat16 and float16 paths of the CPU kernels (kernels/cpu/isa/half_loops.cc,
// half_convert.h) against the scalar reference they replace: widen each input with
// static_cast<float>, run the float32 kernel, round the result once with H(float). Every
// element must match bit for bit, at lengths around the vector widths, on NaN, infinity,
// subnormal and rounding-tie inputs, at 1, 2 and 7 threads, and at every ISA level this CPU
// runs (ctest runs kernels_test at each; CastMatchesScalarAtEveryIsaLevel calls each level's
// loops directly).
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/thread_pool.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::HostTensor;
using testutil::run_cpu;
using testutil::S;

constexpr int64_t kLengths[] = {0, 1, 15, 16, 17, 1003, 70001};

// Bit patterns every input mixes in: zeros, infinities, quiet and signalling NaNs with
// payloads, subnormals, the largest finite values, and 1 + half an ulp (a tie when added).
template <typename H>
std::vector<uint16_t> special_bits() {
  if constexpr (std::is_same_v<H, bfloat16>) {
    return {0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x7f81, 0xff95, 0x0001, 0x807f,
            0x0080, 0x7f7f, 0xff7f, 0x3f80, 0x3b80, 0x3f81, 0x3c00, 0xc2b0, 0x42b1};
  } else {
    return {0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0xfe01, 0x7c01, 0xfd55, 0x0001, 0x83ff,
            0x0400, 0x7bff, 0xfbff, 0x3c00, 0x1000, 0x3c01, 0x1400, 0xc990, 0x4990};
  }
}

// Returns n values: mostly in [-4, 4), some random bit patterns (any class), and the
// special values at the start, so that short inputs see them too; only values in [-4, 4)
// when `finite`.
template <typename H>
HostTensor mixed_half(int64_t n, unsigned seed, bool finite = false) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> value(-4, 4);
  std::vector<H> v(n);
  const std::vector<uint16_t> special = special_bits<H>();
  for (int64_t i = 0; i < n; ++i) {
    const unsigned pick = gen() % 8;
    if (finite) {
      v[i] = H(value(gen));
    } else if (i < static_cast<int64_t>(special.size())) {
      v[i] = H::from_bits(special[(i + seed) % special.size()]);
    } else if (pick == 0) {
      v[i] = H::from_bits(static_cast<uint16_t>(gen()));
    } else if (pick == 1) {
      v[i] = H::from_bits(special[gen() % special.size()]);
    } else {
      v[i] = H(value(gen));
    }
  }
  return HostTensor::make<H>(S({n}), v);
}

template <typename H>
HostTensor widen_ref(const HostTensor& t) {
  std::vector<float> out;
  for (H v : t.values<H>()) out.push_back(static_cast<float>(v));
  return HostTensor::make<float>(t.shape(), out);
}

template <typename H>
std::vector<uint16_t> narrow_ref(const HostTensor& t) {
  std::vector<uint16_t> out;
  for (float v : t.values<float>()) out.push_back(H(v).bits);
  return out;
}

template <typename H>
std::vector<uint16_t> bits_of(const HostTensor& t) {
  std::vector<uint16_t> out;
  for (H v : t.values<H>()) out.push_back(v.bits);
  return out;
}

template <typename H>
bool is_nan(uint16_t bits) {
  return std::isnan(static_cast<float>(H::from_bits(bits)));
}

template <typename H>
bool is_finite(uint16_t bits) {
  return std::isfinite(static_cast<float>(H::from_bits(bits)));
}

// Returns the index of the first element where the two differ, or -1. Where `any_nan[i]`
// holds, any two NaNs match: IEEE 754 leaves open which NaN a sum of two NaNs returns (an
// input's, or inf - inf's), and the float32 loops' choice follows the compiler's operand order.
template <typename H>
int64_t first_difference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                         const std::vector<bool>& any_nan = {}) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    if (i < any_nan.size() && any_nan[i] && is_nan<H>(a[i]) && is_nan<H>(b[i])) continue;
    return static_cast<int64_t>(i);
  }
  return -1;
}

// Runs `op` on the half inputs and, on the same thread count, the float32 kernel on the
// widened inputs; expects the half result to be the float32 one rounded once.
template <typename H>
void expect_rounded_float_result(OpId op, const std::vector<HostTensor>& inputs,
                                 const std::string& what, const std::vector<bool>& any_nan = {},
                                 const OpAttrs& attrs = {}) {
  std::vector<HostTensor> wide;
  for (const HostTensor& t : inputs) wide.push_back(widen_ref<H>(t));
  for (int threads : {1, 2, 7}) {
    cpu::set_intra_op_threads(threads);
    absl::StatusOr<HostTensor> got = run_cpu(op, inputs, attrs);
    absl::StatusOr<HostTensor> want = run_cpu(op, wide, attrs);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
    const std::vector<uint16_t> g = bits_of<H>(*got), w = narrow_ref<H>(*want);
    const int64_t at = first_difference<H>(g, w, any_nan);
    EXPECT_EQ(at, -1) << op_name(op) << " " << what << " at " << threads << " threads: element "
                      << at << " is 0x" << std::hex << (at >= 0 ? g[at] : 0) << ", want 0x"
                      << (at >= 0 ? w[at] : 0);
  }
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
}

// Returns, for each of n output elements, whether two or more of its operands are not
// finite (where first_difference lets any NaN match); operand k of element i is element
// index(k, i) of inputs[k].
template <typename H, typename Index>
std::vector<bool> two_non_finite(const std::vector<HostTensor>& inputs, int64_t n, Index index) {
  std::vector<int> count(n);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<H> values = inputs[k].values<H>();
    for (int64_t i = 0; i < n; ++i) count[i] += !is_finite<H>(values[index(k, i)].bits);
  }
  std::vector<bool> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = count[i] >= 2;
  return out;
}

template <typename H>
class HalfLoopsTest : public ::testing::Test {};
using HalfElementTypes = ::testing::Types<bfloat16, float16>;
TYPED_TEST_SUITE(HalfLoopsTest, HalfElementTypes);

TYPED_TEST(HalfLoopsTest, UnaryOpsRoundTheFloat32ResultOnce) {
  using H = TypeParam;
  for (int64_t n : kLengths) {
    const HostTensor x = mixed_half<H>(n, static_cast<unsigned>(n));
    for (OpId op : {OpId::kExp, OpId::kRelu, OpId::kNeg, OpId::kAbs}) {
      expect_rounded_float_result<H>(op, {x}, "n=" + std::to_string(n));
    }
  }
}

TYPED_TEST(HalfLoopsTest, BinaryOpsRoundTheFloat32ResultOnce) {
  using H = TypeParam;
  for (int64_t n : kLengths) {
    const HostTensor a = mixed_half<H>(n, 1), b = mixed_half<H>(n, 2);
    const HostTensor one = mixed_half<H>(1, 3);
    for (OpId op : {OpId::kAddV2, OpId::kSub, OpId::kMul, OpId::kRealDiv}) {
      const std::string len = "n=" + std::to_string(n);
      expect_rounded_float_result<H>(op, {a, b}, len);
      expect_rounded_float_result<H>(op, {a, one}, len + " by [1]");
      expect_rounded_float_result<H>(op, {one, b}, "[1] by " + len);
    }
  }
}

TYPED_TEST(HalfLoopsTest, BroadcastRowsRoundTheFloat32ResultOnce) {
  using H = TypeParam;
  const HostTensor m = mixed_half<H>(37 * 1003, 4), row = mixed_half<H>(1003, 5);
  const HostTensor matrix = HostTensor::make<H>(S({37, 1003}), m.template values<H>());
  const HostTensor column =
      HostTensor::make<H>(S({37, 1}), mixed_half<H>(37, 6).template values<H>());
  for (OpId op : {OpId::kAddV2, OpId::kMul, OpId::kRealDiv}) {
    expect_rounded_float_result<H>(op, {matrix, row}, "[37, 1003] by [1003]");
    expect_rounded_float_result<H>(op, {matrix, column}, "[37, 1003] by [37, 1]");
  }
}

TYPED_TEST(HalfLoopsTest, AddNSumsInOrderInFloat32AndRoundsOnce) {
  using H = TypeParam;
  for (int64_t n : kLengths) {
    std::vector<HostTensor> inputs;
    for (unsigned k = 0; k < 4; ++k) {
      inputs.push_back(mixed_half<H>(n, 20 + k));
      expect_rounded_float_result<H>(
          OpId::kAddN, inputs, std::to_string(k + 1) + " inputs, n=" + std::to_string(n),
          two_non_finite<H>(inputs, n, [](size_t, int64_t i) { return i; }));
    }
  }
}

TYPED_TEST(HalfLoopsTest, ReductionsRoundTheFloat32ResultOnce) {
  using H = TypeParam;
  for (int64_t n : kLengths) {
    for (bool finite : {true, false}) {
      const HostTensor x = mixed_half<H>(n, 7, finite);
      for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax}) {
        expect_rounded_float_result<H>(op, {x}, "n=" + std::to_string(n), {});
      }
    }
  }
}

// Runs of every layout of Note [Reduction layout]: long runs summed as partials, rows that
// start at every alignment, kept columns, and reduced dimensions on both sides of a kept one.
TYPED_TEST(HalfLoopsTest, ReductionsOverAxesRoundTheFloat32ResultOnce) {
  using H = TypeParam;
  const struct {
    Shape shape;
    std::vector<int64_t> axes;
  } cases[] = {{S({300001}), {0}},       {S({2, 140001}), {1}},     {S({37, 1003}), {1}},
               {S({37, 1003}), {0}},     {S({5, 7, 1003}), {0, 2}}, {S({5, 7, 1003}), {1}},
               {S({3, 1, 1003}), {0, 1}}};
  for (const auto& c : cases) {
    OpAttrs attrs;
    attrs.axes.assign(c.axes.begin(), c.axes.end());
    for (bool finite : {true, false}) {
      const HostTensor x = HostTensor::make<H>(
          c.shape, mixed_half<H>(c.shape.num_elements(), 8, finite).template values<H>());
      for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax}) {
        expect_rounded_float_result<H>(op, {x}, c.shape.to_string(), {}, attrs);
      }
    }
  }
}

// Float32 bit patterns: a sweep of the whole range plus the rounding ties and overflow edges
// of bfloat16 (low 16 bits 0x8000) and float16 (65504, 65519.99, 65520).
std::vector<float> float_patterns() {
  std::vector<uint32_t> bits = {0x3f808000, 0x3f818000, 0xbf808000, 0x477fe000, 0x477fefff,
                                0x477ff000, 0x33000000, 0x33000001, 0x387fc000, 0x38800000,
                                0x7f7fffff, 0x7f800001, 0xff800001, 0x7fbfffff, 0x00000001};
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) bits.push_back(static_cast<uint32_t>(b));
  std::vector<float> out(bits.size());
  std::memcpy(out.data(), bits.data(), bits.size() * sizeof(float));
  return out;
}

TYPED_TEST(HalfLoopsTest, CastsFromFloat32RoundAsCoreHalfDoes) {
  using H = TypeParam;
  const std::vector<float> values = float_patterns();
  const HostTensor x = HostTensor::make<float>(S({static_cast<int64_t>(values.size())}), values);
  OpAttrs attrs;
  attrs.dst_dtype = dtype_of<H>();
  for (int threads : {1, 2, 7}) {
    cpu::set_intra_op_threads(threads);
    absl::StatusOr<HostTensor> got = run_cpu(OpId::kCast, {x}, attrs);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(first_difference<H>(bits_of<H>(*got), narrow_ref<H>(x)), -1) << threads << " threads";
  }
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
}

TYPED_TEST(HalfLoopsTest, CastsToFloat32KeepEveryBit) {
  using H = TypeParam;
  std::vector<H> all(65536 + 17);  // every bit pattern, then an odd tail
  for (size_t i = 0; i < all.size(); ++i) all[i] = H::from_bits(static_cast<uint16_t>(i));
  const HostTensor x = HostTensor::make<H>(S({static_cast<int64_t>(all.size())}), all);
  OpAttrs attrs;
  attrs.dst_dtype = DType::kFloat32;
  absl::StatusOr<HostTensor> got = run_cpu(OpId::kCast, {x}, attrs);
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<float> f = got->values<float>();
  for (size_t i = 0; i < all.size(); ++i) {
    const float want = static_cast<float>(all[i]);  // a signalling NaN stays signalling
    ASSERT_EQ(std::memcmp(&f[i], &want, sizeof(float)), 0) << "bits 0x" << std::hex << all[i].bits;
  }
}

// Each level's loops directly, whatever level this process runs at.
TYPED_TEST(HalfLoopsTest, CastMatchesScalarAtEveryIsaLevel) {
  using H = TypeParam;
  const int d = static_cast<int>(dtype_of<H>()), f32 = static_cast<int>(DType::kFloat32);
  const std::vector<float> values = float_patterns();
  for (int level = 0; level <= static_cast<int>(cpu::CpuIsa::kAvx512); ++level) {
    const cpu::CpuLoops* loops = cpu::cpu_loops_for(level);
    if (loops == nullptr) continue;  // this CPU cannot run it
    for (int64_t n : kLengths) {
      std::vector<H> half(n);
      loops->cast[f32][d](values.data(), half.data(), n);
      std::vector<float> back(n);
      loops->cast[d][f32](half.data(), back.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(half[i].bits, H(values[i]).bits) << loops->isa << " n=" << n << " at " << i;
        const float want = static_cast<float>(half[i]);
        ASSERT_EQ(std::memcmp(&back[i], &want, sizeof(float)), 0) << loops->isa << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace mt
