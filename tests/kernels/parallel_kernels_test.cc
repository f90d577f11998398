// Every CPU kernel family on inputs large enough to be split across threads, at 1, 2 and 7
// threads (odd splits find the bugs): each result is checked against a plain reference
// computed here, and the results at 2 and 7 threads must equal the 1-thread result bit for
// bit (Note [Reduction order] in kernels/cpu/reduction_kernels.cc).
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/wrapping_math.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt {
namespace {

using testutil::as_doubles;

bool same_bytes(const HostTensor& a, const HostTensor& b) {
  const size_t bytes = a.shape().num_elements() * dtype_size(a.dtype());
  return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), bytes) == 0;
}

// Runs `op` at 1, 2 and 7 threads, twice each, and returns the results. Every op gives the
// same bytes twice at one thread count; every op but a float MatMul gives the same bytes at
// every thread count (a float MatMul's tiles may round differently: Note [GEMM tiles]).
std::vector<HostTensor> run_at_thread_counts(OpId op, const std::vector<HostTensor>& inputs,
                                             const OpAttrs& attrs = {}) {
  std::vector<HostTensor> results;
  for (int threads : {1, 2, 7}) {
    cpu::set_intra_op_threads(threads);
    absl::StatusOr<HostTensor> out = run_cpu(op, inputs, attrs);
    absl::StatusOr<HostTensor> again = run_cpu(op, inputs, attrs);
    EXPECT_TRUE(out.ok() && again.ok()) << out.status();
    if (!out.ok() || !again.ok()) break;
    EXPECT_TRUE(same_bytes(*out, *again)) << op_name(op) << " differs between two runs";
    results.push_back(*std::move(out));
  }
  cpu::set_intra_op_threads(testutil::test_intra_op_threads());
  return results;
}

// Runs `op` at 1, 2 and 7 threads; expects equal bytes and returns the 1-thread result.
HostTensor run_at_every_thread_count(OpId op, const std::vector<HostTensor>& inputs,
                                     const OpAttrs& attrs = {}) {
  std::vector<HostTensor> results = run_at_thread_counts(op, inputs, attrs);
  if (results.size() != 3) return HostTensor::uninitialized(S({0}), DType::kFloat32);
  for (size_t i = 1; i < results.size(); ++i) {
    EXPECT_TRUE(same_bytes(results[0], results[i]))
        << op_name(op) << ": the result changes with the thread count";
  }
  return results[0];
}

template <typename T>
HostTensor random_tensor(const Shape& shape, unsigned seed, double low = -4, double high = 4) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<T> values(shape.num_elements());
  for (T& v : values) v = static_cast<T>(dist(gen));
  return HostTensor::make<T>(shape, values);
}

// Returns the flat index into a tensor of shape `in` (right-aligned, broadcast) of output
// element `i` of shape `out`.
int64_t broadcast_index(const Shape& out, const Shape& in, int64_t i) {
  int64_t index = 0, stride = 1;
  for (int d = out.rank() - 1, k = in.rank() - 1; d >= 0; --d, --k) {
    const int64_t coord = i % out.dim(d);
    i /= out.dim(d);
    if (k >= 0) {
      if (in.dim(k) != 1) index += coord * stride;
      stride *= in.dim(k);
    }
  }
  return index;
}

TEST(ParallelKernelsTest, BinaryOpsMatchAPlainLoopWithBroadcasting) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {S({300001}), S({300001})}, {S({517, 263}), S({263})},    {S({517, 1}), S({1, 263})},
      {S({3, 70001}), S({3, 1})}, {S({4, 5, 6007}), S({5, 1})}, {S({1}), S({200003})}};
  for (const auto& [sa, sb] : shapes) {
    HostTensor a = random_tensor<float>(sa, 1), b = random_tensor<float>(sb, 2, 0.5, 4);
    for (OpId op : {OpId::kAddV2, OpId::kSub, OpId::kMul, OpId::kRealDiv}) {
      HostTensor c = run_at_every_thread_count(op, {a, b});
      const std::vector<float> va = a.values<float>(), vb = b.values<float>(),
                               vc = c.values<float>();
      int mismatches = 0;
      for (int64_t i = 0; i < c.shape().num_elements(); ++i) {
        const float x = va[broadcast_index(c.shape(), sa, i)];
        const float y = vb[broadcast_index(c.shape(), sb, i)];
        const float want = op == OpId::kAddV2 ? x + y
                           : op == OpId::kSub ? x - y
                           : op == OpId::kMul ? x * y
                                              : x / y;
        mismatches += vc[i] != want;
      }
      EXPECT_EQ(mismatches, 0) << op_name(op) << " " << sa.to_string() << " " << sb.to_string();
    }
  }
}

TEST(ParallelKernelsTest, IntegerOpsWrapAtEveryThreadCount) {
  const int64_t n = 200003;
  std::vector<int32_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = std::numeric_limits<int32_t>::max() - int32_t(i % 7);
  HostTensor a = HostTensor::make<int32_t>(S({n}), values);
  std::vector<int32_t> sum = run_at_every_thread_count(OpId::kAddV2, {a, a}).values<int32_t>();
  std::vector<int32_t> addn = run_at_every_thread_count(OpId::kAddN, {a, a, a}).values<int32_t>();
  for (int64_t i = 0; i < n; i += 9973) {
    EXPECT_EQ(sum[i], int32_t(uint32_t(values[i]) * 2u)) << i;
    EXPECT_EQ(addn[i], int32_t(uint32_t(values[i]) * 3u)) << i;
  }
}

TEST(ParallelKernelsTest, UnaryOpsMatchTheStandardLibrary) {
  HostTensor x = random_tensor<float>(S({250007}), 3, -100, 100);
  std::vector<float> v = x.values<float>();
  v[5] = -std::numeric_limits<float>::infinity();
  v[6] = std::numeric_limits<float>::quiet_NaN();
  v[7] = -104.f;  // below Eigen's exp clamp (Note [Eigen exp range])
  x = HostTensor::make<float>(x.shape(), v);
  std::vector<float> e = run_at_every_thread_count(OpId::kExp, {x}).values<float>();
  std::vector<float> r = run_at_every_thread_count(OpId::kRelu, {x}).values<float>();
  std::vector<float> a = run_at_every_thread_count(OpId::kAbs, {x}).values<float>();
  std::vector<float> ng = run_at_every_thread_count(OpId::kNeg, {x}).values<float>();
  for (size_t i = 0; i < v.size(); ++i) {
    const float want = std::exp(v[i]);
    if (std::isnan(want) || std::isinf(want)) {
      EXPECT_TRUE(std::isnan(e[i]) == std::isnan(want) && (std::isnan(want) || e[i] == want)) << i;
    } else {
      EXPECT_NEAR(e[i], want, 4e-7 * want + 1e-44f) << "exp(" << v[i] << ")";
    }
    EXPECT_TRUE(r[i] == (v[i] < 0 ? 0.f : v[i]) || std::isnan(v[i])) << i;
    EXPECT_TRUE(a[i] == std::fabs(v[i]) || std::isnan(v[i])) << i;
    EXPECT_TRUE(ng[i] == -v[i] || std::isnan(v[i])) << i;
  }
}

TEST(ParallelKernelsTest, AddNMatchesAPlainSumForEveryInputCount) {
  for (int count : {1, 2, 3, 9}) {
    std::vector<HostTensor> inputs;
    for (int k = 0; k < count; ++k) inputs.push_back(random_tensor<double>(S({130001}), 10 + k));
    std::vector<double> got = run_at_every_thread_count(OpId::kAddN, inputs).values<double>();
    for (int64_t i = 0; i < 130001; i += 101) {
      double want = 0;
      for (const HostTensor& t : inputs) want += static_cast<const double*>(t.data())[i];
      EXPECT_NEAR(got[i], want, 1e-12) << count << " inputs, element " << i;
    }
  }
}

// Returns the sum, or the max, of `t` over `axis` of a rank-2 or rank-3 shape, in double;
// with `abs`, the sum of absolute values.
std::vector<double> reference_reduce(const HostTensor& t, int axis, bool max, bool abs = false) {
  const Shape& s = t.shape();
  std::vector<double> v = as_doubles(t);
  if (abs) {
    for (double& x : v) x = std::fabs(x);
  }
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= s.dim(d);
  for (int d = axis + 1; d < s.rank(); ++d) inner *= s.dim(d);
  const int64_t len = s.dim(axis);
  std::vector<double> out(outer * inner, max ? -INFINITY : 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r = 0; r < len; ++r) {
      for (int64_t i = 0; i < inner; ++i) {
        double& acc = out[o * inner + i];
        const double x = v[(o * len + r) * inner + i];
        acc = max ? ((x > acc || x != x || acc != acc) ? (acc != acc ? acc : x) : acc) : acc + x;
      }
    }
  }
  return out;
}

TEST(ParallelKernelsTest, ReductionsMatchADoubleReferenceForEveryLayout) {
  const std::vector<std::pair<Shape, int>> cases = {
      {S({1, 1 << 18}), 1}, {S({300, 1000}), 1}, {S({300, 1000}), 0},   {S({20, 30, 700}), 1},
      {S({3, 200000}), 1},  {S({3, 200000}), 0}, {S({40, 9, 1001}), 0}, {S({40, 9, 1001}), 2}};
  for (const auto& [shape, axis] : cases) {
    HostTensor x = random_tensor<float>(shape, 4);
    OpAttrs attrs;
    attrs.axes = {axis};
    for (OpId op : {OpId::kSum, OpId::kMax, OpId::kMean}) {
      std::vector<double> got = as_doubles(run_at_every_thread_count(op, {x}, attrs));
      std::vector<double> want = reference_reduce(x, axis, op == OpId::kMax);
      const std::vector<double> abs_sum = reference_reduce(x, axis, false, /*abs=*/true);
      ASSERT_EQ(got.size(), want.size());
      const int64_t len = shape.dim(axis);
      for (size_t i = 0; i < got.size(); ++i) {
        // A float32 sum of `len` terms is within (len - 1) * eps * sum |x| of the exact one.
        double tol = op == OpId::kMax ? 0 : (len - 1) * 0x1p-24 * abs_sum[i];
        if (op == OpId::kMean) {
          want[i] /= len;
          tol = tol / len + std::fabs(want[i]) * 0x1p-24;  // the division rounds once more
        }
        ASSERT_NEAR(got[i], want[i], tol)
            << op_name(op) << " " << shape.to_string() << " axis " << axis << " element " << i;
      }
    }
  }
}

TEST(ParallelKernelsTest, MaxPropagatesNaNFromAnyBlock) {
  HostTensor x = random_tensor<float>(S({1 << 19}), 5);
  std::vector<float> v = x.values<float>();
  v[400000] = std::numeric_limits<float>::quiet_NaN();
  x = HostTensor::make<float>(x.shape(), v);
  OpAttrs all;
  all.reduce_all = true;
  EXPECT_TRUE(std::isnan(run_at_every_thread_count(OpId::kMax, {x}, all).values<float>()[0]));
}

TEST(ParallelKernelsTest, CastsEveryPairLikeOneElementAtATime) {
  HostTensor f = random_tensor<float>(S({100003}), 6, -3e9, 3e9);
  std::vector<float> v = f.values<float>();
  v[1] = std::numeric_limits<float>::quiet_NaN();
  v[2] = 0.5f;
  f = HostTensor::make<float>(f.shape(), v);
  for (DType dst : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}) {
    OpAttrs attrs;
    attrs.dst_dtype = dst;
    HostTensor out = run_at_every_thread_count(OpId::kCast, {f}, attrs);
    for (int64_t i = 0; i < 100003; i += 997) {
      // The same cast of one element (the small path, never split) is the reference.
      HostTensor one = HostTensor::make<float>(S({1}), {v[i]});
      absl::StatusOr<HostTensor> want = run_cpu(OpId::kCast, {one}, attrs);
      ASSERT_TRUE(want.ok());
      const size_t size = dtype_size(dst);
      EXPECT_EQ(std::memcmp(static_cast<const char*>(out.data()) + i * size, want->data(), size), 0)
          << "float32 -> " << dtype_name(dst) << " of " << v[i];
    }
  }
}

TEST(ParallelKernelsTest, FillAndIdentityWriteEveryElement) {
  OpAttrs attrs;
  attrs.value.f = 2.5;
  std::vector<float> filled =
      run_at_every_thread_count(OpId::kFill, {HostTensor::meta({1000, 301}, DType::kFloat32)},
                                attrs)
          .values<float>();
  EXPECT_EQ(std::count(filled.begin(), filled.end(), 2.5f), 301000);
  HostTensor x = random_tensor<int64_t>(S({500001}), 7, -1e12, 1e12);
  EXPECT_EQ(run_at_every_thread_count(OpId::kIdentity, {x}).values<int64_t>(), x.values<int64_t>());
}

template <typename T>
void expect_product(const std::vector<double>& got, const std::vector<T>& va,
                    const std::vector<T>& vb, int64_t m, int64_t n, int64_t k, bool ta, bool tb);

template <typename T>
void expect_matmul_matches(int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  HostTensor a = random_tensor<T>(ta ? S({k, m}) : S({m, k}), 8, -100, 100);
  HostTensor b = random_tensor<T>(tb ? S({n, k}) : S({k, n}), 9, -100, 100);
  OpAttrs attrs;
  attrs.transpose_a = ta;
  attrs.transpose_b = tb;
  std::vector<HostTensor> results = run_at_thread_counts(OpId::kMatMul, {a, b}, attrs);
  ASSERT_EQ(results.size(), 3u);
  const std::vector<T> va = a.values<T>(), vb = b.values<T>();
  for (const HostTensor& result : results) {
    if constexpr (std::is_integral_v<T>) {
      EXPECT_TRUE(same_bytes(result, results[0]));
    }
    expect_product(as_doubles(result), va, vb, m, n, k, ta, tb);
  }
}

template <typename T>
void expect_product(const std::vector<double>& got, const std::vector<T>& va,
                    const std::vector<T>& vb, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  ASSERT_EQ(static_cast<int64_t>(got.size()), m * n);
  for (int64_t i = 0; i < m; i += 7) {
    for (int64_t j = 0; j < n; j += 5) {
      using Acc = std::conditional_t<std::is_integral_v<T>, cpu::ComputeType<T>, double>;
      Acc want = 0;
      for (int64_t p = 0; p < k; ++p) {
        want += Acc(va[ta ? p * m + i : i * k + p]) * Acc(vb[tb ? j * k + p : p * n + j]);
      }
      const double expected = static_cast<double>(static_cast<T>(want));
      const double tol = std::is_floating_point_v<T>
                             ? (std::is_same_v<T, float> ? 1e-6 : 1e-14) * 100 * 100 * k
                             : 0;
      ASSERT_NEAR(got[i * n + j], expected, tol)
          << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb << " at " << i << "," << j;
    }
  }
}

TEST(ParallelKernelsTest, MatMulTilesMatchAPlainProductForEveryTranspose) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      expect_matmul_matches<float>(257, 131, 67, ta, tb);
      expect_matmul_matches<float>(1, 500, 300, ta, tb);
      expect_matmul_matches<float>(300, 1, 200, ta, tb);
      expect_matmul_matches<int32_t>(129, 97, 80, ta, tb);
    }
  }
  expect_matmul_matches<double>(200, 203, 150, false, false);
  expect_matmul_matches<int64_t>(111, 121, 131, true, false);
}

}  // namespace
}  // namespace mt
