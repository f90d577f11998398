// Conformance of the GPU kernels with the CPU kernels: every (op, dtype) registered on the
// GPU runs on fresh random inputs (broadcasts, sizes 0 and 1, odd sizes, transposes) and
// must match the CPU kernel from the registry within a per-op tolerance: exact for
// integers and bools, a few ulp for element-wise floats, scaled by the summed count for
// reductions and by k for MatMul. bfloat16 and float16 are checked against the CPU's
// float32 kernel on the same (widened) inputs, its result rounded to the 2-byte dtype
// (Note [GPU half tolerances]). Skipped, with the reason, when no GPU is visible.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/cuda/cuda_handles.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_options.h"
#include "kernels/kernel_registry.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt::cuda {
namespace {

using testutil::gpu_registry;

// Returns why no GPU test can run here, or "" when a GPU is visible.
std::string why_no_gpu() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) return absl::StrCat("cudaGetDeviceCount: ", cudaGetErrorString(error));
  return count == 0 ? "cudaGetDeviceCount reports no GPU" : "";
}

// What a test hands kernels as device_state: its own stream, cuBLAS handle and scratch, with
// reduction tickets after the scratch as a logical GPU has them (or without: the reductions
// then take two passes).
class TestGpu {
 public:
  absl::Status init(bool with_scratch, bool with_tickets = true) {
    MT_ASSIGN_OR_RETURN(stream_, Stream::create());
    MT_ASSIGN_OR_RETURN(cublas_, CublasHandle::create(stream_.get()));
    state_.stream = stream_.get();
    state_.cublas = cublas_.get();
    if (with_scratch) {
      MT_ASSIGN_OR_RETURN(scratch_, DeviceBuffer::create(kScratchBytes + kTicketBytes));
      state_.scratch = scratch_.get();
      state_.scratch_bytes = kScratchBytes;
      state_.scratch_mu = &scratch_mu_;
      if (with_tickets) {
        char* tickets = static_cast<char*>(scratch_.get()) + kScratchBytes;
        MT_RETURN_IF_ERROR(cuda_check("cudaMemsetAsync",
                                      cudaMemsetAsync(tickets, 0, kTicketBytes, stream_.get())));
        state_.reduce_tickets = reinterpret_cast<unsigned*>(tickets);
      }
    }
    cudaDeviceGetAttribute(&state_.num_sms, cudaDevAttrMultiProcessorCount, 0);
    return absl::OkStatus();
  }
  GpuState* state() { return &state_; }
  cudaStream_t stream() const { return state_.stream; }

 private:
  Stream stream_;
  CublasHandle cublas_;
  DeviceBuffer scratch_;
  internal::Mutex scratch_mu_;
  BlasLock blas_;
  GpuState state_{.blas = &blas_};
};

absl::Status check(const char* call, cudaError_t error) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(call, ": ", cudaGetErrorString(error)));
}

// A device copy of a host tensor, `shift` bytes past a 256-byte aligned allocation.
struct DeviceTensor {
  DeviceBuffer buffer;
  void* data = nullptr;
};

absl::StatusOr<DeviceTensor> upload(TestGpu& gpu, const HostTensor& t, size_t shift) {
  const size_t bytes = t.shape().num_elements() * dtype_size(t.dtype());
  DeviceTensor d;
  MT_ASSIGN_OR_RETURN(d.buffer, DeviceBuffer::create(bytes + 16));
  d.data = static_cast<char*>(d.buffer.get()) + shift;
  MT_RETURN_IF_ERROR(
      check("cudaMemcpyAsync",
            cudaMemcpyAsync(d.data, t.data(), bytes, cudaMemcpyHostToDevice, gpu.stream())));
  return d;
}

// Runs `op` on the GPU the way the runtime does: infer, allocate (poisoned), call the
// kernel, then copies the output back. `misalign` shifts every device pointer by one
// element, off the 16-byte alignment of the vectorised paths.
absl::StatusOr<HostTensor> run_gpu(TestGpu& gpu, OpId op, const std::vector<HostTensor>& inputs,
                                   const OpAttrs& attrs, bool misalign = false) {
  std::vector<TensorMeta> metas;
  for (const HostTensor& t : inputs) metas.push_back({&t.shape(), t.dtype()});
  MT_ASSIGN_OR_RETURN(OutputMeta meta, infer_output(op, metas, attrs));
  KernelFn fn = gpu_registry().find(op, DeviceType::kGPU, inputs[0].dtype());
  if (fn == nullptr) return absl::NotFoundError(absl::StrCat("no GPU kernel for ", op_name(op)));
  // One element of each buffer's own dtype (a Cast's input and output differ).
  auto shift = [&](DType dtype) -> size_t { return misalign ? dtype_size(dtype) : 0; };
  std::vector<DeviceTensor> buffers;
  std::vector<TensorArg> args;
  for (const HostTensor& t : inputs) {
    const void* data = op == OpId::kEagerConst ? t.data() : nullptr;  // host memory
    if (op != OpId::kEagerConst && op != OpId::kFill) {
      MT_ASSIGN_OR_RETURN(DeviceTensor d, upload(gpu, t, shift(t.dtype())));
      data = d.data;
      buffers.push_back(std::move(d));
    }
    args.push_back({data, &t.shape(), t.dtype()});
  }
  HostTensor out = HostTensor::uninitialized(meta.shape, meta.dtype);
  MT_ASSIGN_OR_RETURN(DeviceTensor d_out, upload(gpu, out, shift(out.dtype())));
  const KernelContext ctx{args, {d_out.data, &out.shape(), out.dtype()}, &attrs, gpu.state()};
  MT_RETURN_IF_ERROR(fn(ctx));
  const size_t bytes = out.shape().num_elements() * dtype_size(out.dtype());
  MT_RETURN_IF_ERROR(
      check("cudaMemcpyAsync",
            cudaMemcpyAsync(out.data(), d_out.data, bytes, cudaMemcpyDeviceToHost, gpu.stream())));
  MT_RETURN_IF_ERROR(check("cudaStreamSynchronize", cudaStreamSynchronize(gpu.stream())));
  return out;
}

struct Case {  // one call to check: input shapes and attributes
  std::vector<Shape> shapes;
  OpAttrs attrs = OpAttrs();  // explicit, so that GCC 12 takes {.shapes = ...} under -Wextra
};

// Returns a case of `shapes` with default attributes. Built member by member: GCC 12 warns
// that a braced temporary's OpAttrs::axes "may be used uninitialized" when it is moved.
Case shapes_case(std::vector<Shape> shapes) {
  Case c;
  c.shapes = std::move(shapes);
  return c;
}

std::string describe(OpId op, DType dtype, const Case& c) {
  std::string s = absl::StrCat(op_name(op), " ", dtype_name(dtype), " on");
  for (const Shape& shape : c.shapes) absl::StrAppend(&s, " ", shape.to_string());
  const OpAttrs& a = c.attrs;
  if (op == OpId::kCast) absl::StrAppend(&s, " to ", dtype_name(a.dst_dtype));
  return absl::StrCat(s, " axes=[", absl::StrJoin(a.axes, ","), "] all/keep/ta/tb=", a.reduce_all,
                      a.keep_dims, a.transpose_a, a.transpose_b, " value=", a.value.f, "/",
                      a.value.i);
}

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>;

template <typename T>
T random_value(OpId op, std::mt19937_64& rng) {
  if constexpr (std::is_same_v<T, bool>) {
    return (rng() & 1) != 0;
  } else if constexpr (kIsHalf<T>) {
    return T(static_cast<float>(random_value<float>(op, rng)));
  } else if constexpr (std::is_floating_point_v<T>) {
    const double range = op == OpId::kExp ? 10 : 1;
    return static_cast<T>(std::uniform_real_distribution<double>(-range, range)(rng));
  } else {  // the full range: integer arithmetic wraps the same way on both devices
    return std::uniform_int_distribution<T>(std::numeric_limits<T>::lowest())(rng);
  }
}

// Returns random elements; with `specials`, floats also hold NaN, +-inf and -0.
HostTensor random_tensor(OpId op, const Shape& shape, DType dtype, bool specials,
                         std::mt19937_64& rng) {
  HostTensor t = HostTensor::uninitialized(shape, dtype);
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(t.data());
    const int64_t n = shape.num_elements();
    for (int64_t i = 0; i < n; ++i) p[i] = random_value<T>(op, rng);
    if constexpr (std::is_floating_point_v<T> || kIsHalf<T>) {
      constexpr float kInf = std::numeric_limits<float>::infinity();
      const T values[] = {T(std::numeric_limits<float>::quiet_NaN()), T(kInf), T(-kInf), T(-0.f)};
      for (int j = 0; specials && j < 4 && n > 0; ++j) p[rng() % n] = values[j];
    }
  });
  return t;
}

// Whether the op calls a CUDA math function that is a few ulp off (Exp, Log, Pow, ...): the
// rows flagged kCostly.
bool is_transcendental(OpId op) { return op_has_flag(op, kCostly); }

// Makes the second operand valid where the CPU rejects some values (Note [Integer division
// by zero] in kernels/cpu/binary_kernels.cc): integer divisors are not 0 and integer
// exponents lie in [0, 40].
void make_valid(OpId op, std::vector<HostTensor>& inputs) {
  if (inputs.size() != 2) return;
  visit_dtype(inputs[1].dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      T* p = static_cast<T*>(inputs[1].data());
      for (int64_t i = 0; i < inputs[1].shape().num_elements(); ++i) {
        if (op == OpId::kPow) p[i] = static_cast<T>((p[i] % 41 + 41) % 41);
        if ((op == OpId::kFloorDiv || op == OpId::kFloorMod) && p[i] == 0) p[i] = 1;
      }
    }
  });
}

struct Tolerance {
  double rtol = 0, atol = 0;
};

// Note [GPU half tolerances]: a bfloat16 or float16 result is compared with the CPU's float32
// result on the same inputs, rounded to the 2-byte dtype. Let u be the dtype's unit
// roundoff (half an ulp at 1): 2^-8 for bfloat16 (8 significand bits), 2^-11 for float16
// (11). The GPU computes in float32 and rounds once (Note [Half arithmetic on the GPU] in
// kernels/cuda/half_math.h), so where its float32 value equals the CPU's both round alike;
// where the float32 values differ by d (a different summation order, expf, tensor cores),
// the rounded ones differ by at most d plus one ulp of the result, 2u relative. So every op
// gets rtol 2u (Max and the exact ops need none, but stay within it), and atol d:
// - Sum: count terms in [-1, 1] summed in float32 in any order: 4 x 2^-24 x count;
// - Mean: the same divided by count, and AddN as Sum over its inputs, plus u x count for
//   each pass after the first 64 inputs (the running sum is stored in T between passes);
// - MatMul: k products, exact in float32 (2-byte significands), summed by tensor cores whose
//   float32 accumulation may keep fewer guard bits than an IEEE add: 2^-14 per term, still
//   far below the error of a wrong index (order 1);
// - Exp: expf differs by a few float32 ulp: 8 x 2^-24 relative, added to rtol;
// - Softmax, LogSoftmax: exp per element plus a row sum of `cols` terms in [0, 1] in any
//   order: (8 + cols) x 2^-24, relative for Softmax and absolute for LogSoftmax (|x - max|
//   <= 2 and log(sum) <= log(cols) + 1 for inputs in [-1, 1]), where a Softmax output is at
//   least e^-2 / cols, so the absolute float32 error is below 4 x 2^-24 x (8 + cols);
// - float16 results below 2^-14 are subnormal, with an absolute ulp of 2^-24: atol >= that.
bool is_matmul(OpId op) { return op == OpId::kMatMul || op == OpId::kBatchMatMulV2; }

// Returns k, the inner dimension of a (batch) matrix product whose first input is `a`.
int64_t inner_dim(const HostTensor& a, const OpAttrs& attrs) {
  const int r = a.shape().rank();
  return a.shape().dim(attrs.transpose_a ? r - 2 : r - 1);
}

Tolerance half_tolerance(OpId op, DType dtype, const std::vector<HostTensor>& in,
                         const HostTensor& out, const OpAttrs& attrs) {
  const double u = dtype == DType::kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  const double eps32 = std::ldexp(1.0, -24);  // float32's unit roundoff
  Tolerance tol{2 * u, dtype == DType::kFloat16 ? std::ldexp(1.0, -24) : 0.0};
  if (is_transcendental(op)) tol.rtol += 8 * eps32;
  if (is_matmul(op)) tol.atol += inner_dim(in[0], attrs) * 0x1p-14;
  if (op == OpId::kAddN) {
    const double n = double(in.size());
    const double roundings = n <= 64 ? 0 : std::ceil((n - 64) / 63);  // 63 new inputs a pass
    tol.atol += 4 * eps32 * n + roundings * u * n;
  }
  if (op == OpId::kSum || op == OpId::kMean) {
    const int64_t n_out = out.shape().num_elements();
    const double count = n_out == 0 ? 0 : double(in[0].shape().num_elements()) / n_out;
    tol.atol += 4 * eps32 * (op == OpId::kSum ? count : 1);
  }
  if (op == OpId::kSoftmax || op == OpId::kLogSoftmax) {
    const double cols = double(in[0].shape().dim(in[0].shape().rank() - 1));
    tol.atol += 4 * eps32 * (8 + cols);
  }
  if (op == OpId::kProd) {  // count roundings of a product of factors in [-1, 1], any order
    const int64_t n_out = out.shape().num_elements();
    tol.rtol += 2 * eps32 * (n_out == 0 ? 0 : double(in[0].shape().num_elements()) / n_out);
  }
  return tol;
}

// Exact for integers and bools; for floats a few ulp, plus the summation error of the
// reductions (count terms) and MatMul (k terms; k x 2^-10 with TensorFloat-32). Inputs
// with an absolute tolerance lie in [-1, 1], so it needs no scale.
Tolerance tolerance(OpId op, DType dtype, const std::vector<HostTensor>& in, const HostTensor& out,
                    const OpAttrs& attrs) {
  if (op == OpId::kCast) return {};  // every conversion is exact or rounds as the CPU does
  if (dtype == DType::kBFloat16 || dtype == DType::kFloat16) {
    return half_tolerance(op, dtype, in, out, attrs);
  }
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return {};
  const double eps = dtype == DType::kFloat32 ? std::numeric_limits<float>::epsilon()
                                              : std::numeric_limits<double>::epsilon();
  const bool softmax = op == OpId::kSoftmax || op == OpId::kLogSoftmax;
  if (is_transcendental(op) && !softmax) return {8 * eps, 0};  // softmax: its row's sum below
  if (is_matmul(op)) {
    const double k = inner_dim(in[0], attrs);
    const bool tf32 = dtype == DType::kFloat32 && internal::tf32_enabled();
    return {4 * eps, 2 * k * (tf32 ? 1.0 / 1024 : eps)};
  }
  if (op == OpId::kSum || op == OpId::kMean) {
    const int64_t n_out = out.shape().num_elements();
    const double count = n_out == 0 ? 0 : double(in[0].shape().num_elements()) / n_out;
    return {4 * eps, 4 * eps * (op == OpId::kSum ? count : 1)};
  }
  if (op == OpId::kProd) {  // count roundings, in any order: relative
    const int64_t n_out = out.shape().num_elements();
    return {2 * eps * (4 + (n_out == 0 ? 0 : double(in[0].shape().num_elements()) / n_out)), 0};
  }
  if (op == OpId::kSoftmax || op == OpId::kLogSoftmax) {  // Note [GPU half tolerances]
    const double cols = double(in[0].shape().dim(in[0].shape().rank() - 1));
    if (op == OpId::kSoftmax) return {(8 + cols) * eps, 0};
    return {4 * eps, 4 * (8 + cols) * eps};
  }
  return {4 * eps, 0};
}

// Returns `t` converted element by element to `dtype` (bfloat16 and float16 to and from
// float32: widening is exact, narrowing rounds to nearest even).
HostTensor convert(const HostTensor& t, DType dtype) {
  HostTensor out = HostTensor::uninitialized(t.shape(), dtype);
  visit_dtype(t.dtype(), [&](auto from) {
    visit_dtype(dtype, [&](auto to) {
      using From = typename decltype(from)::type;
      using To = typename decltype(to)::type;
      if constexpr (std::is_same_v<From, float> || std::is_same_v<To, float>) {
        const From* src = static_cast<const From*>(t.data());
        To* dst = static_cast<To*>(out.data());
        for (int64_t i = 0; i < t.shape().num_elements(); ++i) {
          dst[i] = static_cast<To>(static_cast<float>(src[i]));
        }
      } else {
        ADD_FAILURE() << "convert: one side must be float32";
      }
    });
  });
  return out;
}

HostTensor widen(const HostTensor& t) { return convert(t, DType::kFloat32); }

template <typename T>
void expect_match(const HostTensor& got, const HostTensor& want, Tolerance tol,
                  const std::string& what) {
  const std::vector<T> g = got.values<T>(), w = want.values<T>();
  int failures = 0;
  for (size_t i = 0; i < g.size() && failures < 5; ++i) {
    bool ok = g[i] == w[i];  // also for infinities
    if constexpr (std::is_floating_point_v<T>) {
      const double error = std::fabs(double(g[i]) - double(w[i]));
      ok = ok || (std::isnan(w[i])
                      ? std::isnan(g[i])
                      : std::isfinite(w[i]) && error <= tol.atol + tol.rtol * std::fabs(w[i]));
    }
    if (!ok) {
      ++failures;
      ADD_FAILURE() << what << ": element " << i << " is " << +g[i] << " on the GPU, " << +w[i]
                    << " on the CPU";
    }
  }
}

// The reference of a bfloat16 or float16 case (Note [GPU half tolerances]): the CPU's float32
// kernel on the widened inputs, its output rounded to `dtype`.
absl::StatusOr<HostTensor> run_cpu_in_float32(OpId op, const std::vector<HostTensor>& inputs,
                                              const OpAttrs& attrs, DType dtype) {
  std::vector<HostTensor> wide;
  for (const HostTensor& t : inputs) wide.push_back(widen(t));
  MT_ASSIGN_OR_RETURN(HostTensor out, testutil::run_cpu(op, wide, attrs));
  return out.dtype() == DType::kFloat32 ? convert(out, dtype) : out;  // comparisons: bool
}

bool is_half(DType dtype) { return dtype == DType::kBFloat16 || dtype == DType::kFloat16; }

// The reference of Cast: the CPU's Cast, with bfloat16 and float16 going through float32
// (widened as a source, rounded as a destination), as the GPU kernel converts them.
absl::StatusOr<HostTensor> cast_on_cpu(const HostTensor& in, DType dst) {
  OpAttrs attrs;
  attrs.dst_dtype = is_half(dst) ? DType::kFloat32 : dst;
  MT_ASSIGN_OR_RETURN(
      HostTensor out,
      testutil::run_cpu(OpId::kCast, {is_half(in.dtype()) ? widen(in) : in}, attrs));
  return is_half(dst) ? convert(out, dst) : out;
}

// Runs one case on both devices and compares.
void check_case(TestGpu& gpu, OpId op, DType dtype, const Case& c, bool specials,
                std::mt19937_64& rng, bool misalign = false) {
  std::vector<HostTensor> inputs;
  for (const Shape& shape : c.shapes)
    inputs.push_back(random_tensor(op, shape, dtype, specials, rng));
  make_valid(op, inputs);
  const std::string what =
      describe(op, dtype, c) + (specials ? " with NaN/inf" : "") + (misalign ? " misaligned" : "");
  const bool half_dtype = is_half(dtype);
  absl::StatusOr<HostTensor> want = op == OpId::kCast ? cast_on_cpu(inputs[0], c.attrs.dst_dtype)
                                    : half_dtype ? run_cpu_in_float32(op, inputs, c.attrs, dtype)
                                                 : testutil::run_cpu(op, inputs, c.attrs);
  ASSERT_TRUE(want.ok()) << what << ": " << want.status();
  absl::StatusOr<HostTensor> got = run_gpu(gpu, op, inputs, c.attrs, misalign);
  ASSERT_TRUE(got.ok()) << what << ": " << got.status();
  ASSERT_EQ(got->shape(), want->shape()) << what;
  const Tolerance tol = tolerance(op, dtype, inputs, *want, c.attrs);
  visit_dtype(want->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsHalf<T>) {  // compared as the float32 values they hold
      expect_match<float>(widen(*got), widen(*want), tol, what);
    } else {
      expect_match<T>(*got, *want, tol, what);
    }
  });
}

// The cases of each op family.
using Dims = std::vector<int64_t>;

std::vector<Case> unary_cases() {
  std::vector<Case> cases;
  for (const Dims& d :
       std::vector<Dims>{{}, {0}, {1}, {7}, {3, 5}, {2, 3, 0}, {2, 1, 3, 1, 4, 5}, {1000003}}) {
    cases.push_back(shapes_case({Shape::make(d).value()}));
  }
  return cases;
}

// Equal shapes, one-element operands, broadcasts in every position, empty outputs, a plan
// of rank 6, rows that are multiples of 4 (vectorised) and rows that are not.
std::vector<Case> binary_cases() {
  // clang-format off
  const Dims pairs[][2] = {
      {{}, {}}, {{0}, {0}}, {{1}, {1}}, {{13}, {13}}, {{3, 5}, {3, 5}}, {{}, {4, 7}},
      {{4, 7}, {1}}, {{1, 1}, {3, 5}}, {{3, 1}, {1, 5}}, {{4, 1, 6}, {5, 1}},
      {{2, 3, 4, 5}, {3, 1, 5}}, {{8, 4, 5}, {4, 5}}, {{2, 0, 3}, {1, 3}}, {{0, 3}, {3}},
      {{1025, 3}, {1025, 1}}, {{513, 257}, {257}}, {{1, 1, 3}, {2, 1, 1}}, {{100003}, {100003}},
      {{6, 1, 1, 4, 1, 3}, {1, 5, 2, 1, 7, 1}}, {{3, 1}, {1, 8}}, {{5, 1, 12}, {3, 12}}};
  // clang-format on
  std::vector<Case> cases;
  for (const auto& p : pairs)
    cases.push_back(shapes_case({Shape::make(p[0]).value(), Shape::make(p[1]).value()}));
  return cases;
}

std::vector<Case> add_n_cases() {
  std::vector<Case> cases;
  for (int n : {1, 2, 3, 8, 65, 130}) {
    for (const Shape& s : {S({0}), S({1}), S({7}), S({1001}), S({64, 33})}) {
      cases.push_back(shapes_case(std::vector<Shape>(n, s)));
    }
  }
  return cases;
}

// Batches of equal shape, one side a single matrix (stride 0), both sides broadcasting
// along different dimensions (one call per product), rank 2 with rank 4, empty batches,
// m, n or k of 0, each with every transpose.
std::vector<Case> batch_matmul_cases() {
  std::vector<Case> cases;
  const std::vector<int64_t> batches[][2] = {{{3}, {3}}, {{4}, {}},        {{}, {4}},
                                             {{1}, {5}}, {{2, 1}, {1, 3}}, {{2, 3}, {3}},
                                             {{0}, {0}}, {{2, 0}, {1}},    {{2, 1, 2}, {1, 2, 1}}};
  const int64_t mkn[][3] = {{2, 3, 4}, {17, 33, 9}, {0, 3, 4}, {3, 0, 4}, {3, 4, 0}, {64, 32, 48}};
  for (const auto& bt : batches) {
    for (const auto& d : mkn) {
      for (int t = 0; t < 4; ++t) {
        Case c;
        c.attrs.transpose_a = (t & 1) != 0;
        c.attrs.transpose_b = (t & 2) != 0;
        std::vector<int64_t> a = bt[0], b = bt[1];
        a.insert(a.end(), {c.attrs.transpose_a ? d[1] : d[0], c.attrs.transpose_a ? d[0] : d[1]});
        b.insert(b.end(), {c.attrs.transpose_b ? d[2] : d[1], c.attrs.transpose_b ? d[1] : d[2]});
        c.shapes = {Shape::make(a).value(), Shape::make(b).value()};
        cases.push_back(c);
      }
    }
  }
  return cases;
}

std::vector<Case> matmul_cases() {
  std::vector<Case> cases;
  const int64_t mkn[][3] = {{1, 1, 1},   {2, 3, 4},   {0, 3, 4},  {3, 0, 4},     {3, 4, 0},
                            {17, 33, 9}, {1, 257, 1}, {65, 1, 3}, {128, 64, 256}};
  for (const auto& d : mkn) {
    for (int t = 0; t < 4; ++t) {
      Case c;
      c.attrs.transpose_a = (t & 1) != 0;
      c.attrs.transpose_b = (t & 2) != 0;
      c.shapes = {c.attrs.transpose_a ? S({d[1], d[0]}) : S({d[0], d[1]}),
                  c.attrs.transpose_b ? S({d[2], d[1]}) : S({d[1], d[2]})};
      cases.push_back(c);
    }
  }
  return cases;
}

Case reduce(Shape shape, std::vector<int64_t> axes, bool keep_dims = false, bool all = false) {
  Case c{{std::move(shape)}};
  c.attrs.axes.assign(axes.begin(), axes.end());
  c.attrs.keep_dims = keep_dims;
  c.attrs.reduce_all = all;
  return c;
}

// Full, row, column and middle reductions, size-1 and empty dimensions, keep_dims, splits
// (large inputs to few outputs) and nine alternating dimensions.
std::vector<Case> reduction_cases() {
  // clang-format off
  return {reduce(S({}), {}, false, true), reduce(S({0}), {0}), reduce(S({5}), {0}),
          reduce(S({7, 0}), {1}), reduce(S({0, 7}), {1}), reduce(S({3, 5}), {0}),
          reduce(S({3, 5}), {1}, true), reduce(S({3, 5}), {0, 1}), reduce(S({3, 5}), {}),
          reduce(S({4, 1, 6}), {1}), reduce(S({2, 3, 4, 5}), {1, 3}),
          reduce(S({2, 3, 4, 5}), {0, 2}, true), reduce(S({2, 3, 4, 5}), {-1}),
          reduce(S({2, 3, 4, 5}), {}, false, true), reduce(S({1000003}), {}, true, true),
          reduce(S({3, 100003}), {1}), reduce(S({100003, 3}), {0}),
          reduce(S({64, 1000, 5}), {1}), reduce(S({33, 65}), {0}), reduce(S({33, 65}), {1}),
          reduce(S({2, 3, 2, 3, 2, 3, 2, 3, 2}), {0, 2, 4, 6, 8})};
  // clang-format on
}

// Rows of every register configuration (one warp per row, a block per row, 16-byte packs
// or single elements when the row length breaks the packs' alignment), the three-pass long
// rows, and empty dimensions (Note [Softmax in registers] in kernels/cuda/nn_kernels.cu).
std::vector<Case> softmax_cases() {
  std::vector<Case> cases;
  for (const Shape& s : {S({1}), S({7}), S({0, 5}), S({5, 0}), S({3, 5}), S({2, 3, 33}),
                         S({64, 128}), S({9, 500}), S({17, 1000}), S({4, 513}), S({9, 4096}),
                         S({5, 8192}), S({3, 8195}), S({3, 10000}), S({2, 100003})}) {
    cases.push_back({{s}});
  }
  return cases;
}

std::vector<Case> fill_cases() {
  std::vector<Case> cases;
  const double floats[] = {0.0, -0.0, 1.5, -3.25};
  const int64_t ints[] = {0, -1, 7, -123456};
  for (int i = 0; i < 4; ++i) {
    for (const Shape& s : {S({}), S({0}), S({1}), S({7}), S({1001, 3})}) {
      Case c{{s}};
      c.attrs.value = {floats[i], ints[i], i % 2 == 1};
      cases.push_back(c);
    }
  }
  return cases;
}

// The unary shapes, each cast to every dtype.
std::vector<Case> cast_cases() {
  std::vector<Case> cases;
  for (const Case& u : unary_cases()) {
    for (int d = 0; d < kNumDTypes; ++d) {
      Case c = u;
      c.attrs.dst_dtype = static_cast<DType>(d);
      cases.push_back(c);
    }
  }
  return cases;
}

std::vector<Case> cases_for(OpId op) {
  if (op == OpId::kFill) return fill_cases();
  if (op == OpId::kCast) return cast_cases();
  if (op == OpId::kMatMul) return matmul_cases();
  if (op == OpId::kBatchMatMulV2) return batch_matmul_cases();
  if (op == OpId::kAddN) return add_n_cases();
  if (op == OpId::kSoftmax || op == OpId::kLogSoftmax) return softmax_cases();
  if (op == OpId::kSum || op == OpId::kMean || op == OpId::kMax || op == OpId::kMin ||
      op == OpId::kProd || op == OpId::kAny || op == OpId::kAll) {
    return reduction_cases();
  }
  return op_info(op).arity == 2 ? binary_cases() : unary_cases();
}

class ConformanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = why_no_gpu();
    if (!why.empty()) GTEST_SKIP() << "GPU conformance tests need a GPU: " << why;
    const absl::Status status = gpu_.init(/*with_scratch=*/true);
    ASSERT_TRUE(status.ok()) << status;
  }
  void TearDown() override { internal::set_tf32_enabled(false); }

  // Runs every case of every GPU-registered dtype of `op`; counts the pairs run.
  void check_op(OpId op, bool misalign = false) {
    for (int d = 0; d < kNumDTypes; ++d) {
      const DType dtype = static_cast<DType>(d);
      if (gpu_registry().find(op, DeviceType::kGPU, dtype) == nullptr) continue;
      ++pairs_;
      for (const Case& c : cases_for(op)) {
        check_case(gpu_, op, dtype, c, /*specials=*/false, rng_, misalign);
        const bool floats = is_floating(dtype);
        // Prod: a product that overflows to inf meets a zero (NaN) or not (inf) depending
        // on the order of the factors, which differs between the devices.
        if (floats && !is_matmul(op) && op != OpId::kFill && op != OpId::kProd) {
          check_case(gpu_, op, dtype, c, /*specials=*/true, rng_, misalign);
        }
      }
    }
  }

  TestGpu gpu_;
  std::mt19937_64 rng_{std::random_device{}()};
  int pairs_ = 0;
};

TEST_F(ConformanceTest, EveryGpuKernelMatchesTheCpu) {
  // The array ops and the random ops take attributes these cases do not set (a permutation,
  // a Philox key): tests/runtime/cuda/gpu_array_ops_test.cc and gpu_random_test.cc compare
  // them with the CPU through the runtime.
  // ArgMax, ArgMin, BiasAdd and SparseSoftmaxCrossEntropyWithLogits take inputs of their
  // own shapes and dtypes: tests/runtime/cuda/gpu_index_nn_ops_test.cc compares them.
  std::vector<OpId> skipped = MT_OP_LIST(MT_ARRAY_OPS);
  for (OpId op : MT_OP_LIST(MT_RANDOM_OPS)) skipped.push_back(op);
  for (OpId op : MT_OP_LIST(MT_ARG_OPS)) skipped.push_back(op);
  skipped.push_back(OpId::kBiasAdd);
  skipped.push_back(OpId::kSparseSoftmaxCrossEntropyWithLogits);
  // The variables' ops write into their input or run no kernel, and UnsortedSegmentSum takes
  // integer ids: tests/runtime/cuda/gpu_training_test.cc compares them through the runtime.
  for (OpId op : MT_OP_LIST(MT_RESOURCE_OPS)) skipped.push_back(op);
  skipped.push_back(OpId::kUnsortedSegmentSum);
  // The convolutions and pools take 4-D inputs and windows: tests/runtime/cuda/gpu_conv_test.cc.
  for (OpId op : MT_OP_LIST(MT_CONV_OPS)) skipped.push_back(op);
  // Range reads its bounds from attributes: gpu_array_ops_test.cc compares it.
  skipped.push_back(OpId::kRange);
  // Batch normalisation takes 4-D x and per-channel statistics:
  // tests/runtime/cuda/gpu_batch_norm_test.cc.
  for (OpId op : MT_OP_LIST(MT_BATCH_NORM_OPS)) skipped.push_back(op);
  // Layer normalisation takes gamma, beta and statistics of x's trailing and leading axes:
  // tests/runtime/cuda/gpu_layer_norm_test.cc.
  for (OpId op : MT_OP_LIST(MT_LAYER_NORM_OPS)) skipped.push_back(op);
  // Attention takes rank-4 q, k and v and a statistics input: gpu_attention_test.cc.
  for (OpId op : MT_OP_LIST(MT_ATTENTION_OPS)) skipped.push_back(op);
  // ClipByValue takes three inputs: gpu_array_ops_test.cc compares it (and Gelu's
  // approximate form, which these cases leave off).
  skipped.push_back(OpId::kClipByValue);
  for (int o = 0; o < kNumOps; ++o) {
    const OpId op = static_cast<OpId>(o);
    if (std::find(skipped.begin(), skipped.end(), op) == skipped.end()) check_op(op);
  }
  // Data ops and Cast on all 7 dtypes, MatMul on the 4 float ones, 7 ops on the 6 numeric
  // ones, RealDiv and Exp on the 4 float ones, 3 reductions on the 6 numeric ones; issue
  // 19's 9 numeric ops, 7 float ones and 3 logical ones on bool; Softmax and LogSoftmax on
  // the 4 float ones, BatchMatMulV2 on the 4 float ones, Min and Prod on the 6 numeric ones,
  // Any and All on bool; Equal and NotEqual on all 7, the 4 orderings on the 6 numeric ones;
  // StopGradient on all 7; Erf, Sin and Cos on the 4 float ones; Gelu on the 4 float ones.
  EXPECT_EQ(pairs_, 4 * 7 + 4 + 7 * 6 + 2 * 4 + 3 * 6 + 9 * 6 + 7 * 4 + 3 + 2 * 4 + 4 + 2 * 6 + 2 +
                        2 * 7 + 4 * 6 + 7 + 3 * 4 + 4)
      << "(op, dtype) pairs run on the GPU";
}

TEST_F(ConformanceTest, MisalignedPointersTakeTheScalarPath) {
  for (OpId op : {OpId::kFill, OpId::kNeg, OpId::kExp, OpId::kAddV2, OpId::kAddN, OpId::kSum,
                  OpId::kCast, OpId::kSoftmax}) {
    check_op(op, /*misalign=*/true);
  }
}

TEST_F(ConformanceTest, MatMulWithTensorFloat32StaysWithinItsTolerance) {
  internal::set_tf32_enabled(true);
  check_op(OpId::kMatMul);
  check_op(OpId::kBatchMatMulV2);
}

// Sizes below one Vec, around one, within one block and over many blocks with elements left
// over (Note [One-pass full reduction] in kernels/cuda/reduce_all.h).
constexpr int64_t kFullReductionSizes[] = {1, 7, 9, 4099, 1000003, 4194307};

TEST_F(ConformanceTest, FullReductionsTakeOnePassAndLeaveTheTicketsAtZero) {
  for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax, OpId::kMin, OpId::kProd}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                        DType::kBFloat16, DType::kFloat16}) {
      for (int64_t n : kFullReductionSizes) {
        // Twice each: a ticket counter left behind by the first would break the second.
        check_case(gpu_, op, dtype, reduce(S({n}), {}, false, true), false, rng_);
        check_case(gpu_, op, dtype, reduce(S({n}), {}, false, true), is_floating(dtype), rng_);
      }
    }
  }
  unsigned tickets = 1;
  ASSERT_EQ(
      cudaMemcpy(&tickets, gpu_.state()->reduce_tickets, sizeof(tickets), cudaMemcpyDeviceToHost),
      cudaSuccess);
  EXPECT_EQ(tickets, 0u);
}

TEST_F(ConformanceTest, FullReductionsWithoutTicketsTakeTwoPasses) {
  TestGpu no_tickets;
  ASSERT_TRUE(no_tickets.init(/*with_scratch=*/true, /*with_tickets=*/false).ok());
  for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax}) {
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      for (int64_t n : kFullReductionSizes) {
        check_case(no_tickets, op, dtype, reduce(S({n}), {}, false, true), false, rng_);
      }
    }
  }
}

TEST_F(ConformanceTest, ReductionsWithoutScratchUseOnePass) {
  TestGpu bare;
  ASSERT_TRUE(bare.init(/*with_scratch=*/false).ok());
  for (OpId op : {OpId::kSum, OpId::kMean, OpId::kMax}) {
    for (DType dtype : {DType::kFloat32, DType::kInt64, DType::kBFloat16}) {
      for (const Case& c : reduction_cases()) check_case(bare, op, dtype, c, false, rng_);
    }
  }
}

}  // namespace
}  // namespace mt::cuda
