// The CUDA random fill (random_kernels.h): one kernel template per distribution and dtype,
// each thread computing whole groups with the shared code of kernels/random_distributions.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "core/check.h"
#include "core/fault_injection.h"
#include "kernels/cuda/random_kernels.h"

namespace mt::cuda {
namespace {

constexpr int kRandomThreads = 256;
constexpr int64_t kMaxRandomBlocks = int64_t{1} << 20;

// Element storage: float32 and float64 as themselves, the 2-byte types as their bits.
enum class Format { kF32, kF64, kBF16, kF16 };

template <Format kFormat>
using Element = std::conditional_t<kFormat == Format::kF32, float,
                                   std::conditional_t<kFormat == Format::kF64, double, uint16_t>>;

// The vector one group is stored as: 4 floats, 2 doubles or 4 2-byte values.
template <Format kFormat>
using GroupVector = std::conditional_t<kFormat == Format::kF32, float4,
                                       std::conditional_t<kFormat == Format::kF64, double2, uint2>>;

template <Format kFormat>
inline constexpr int kGroupSize = kFormat == Format::kF64 ? 2 : 4;

// Returns the bits of `f` rounded to nearest even in the 2-byte type (exact for uniforms).
template <Format kFormat>
__device__ __forceinline__ uint16_t to_half_bits(float f) {
  if constexpr (kFormat == Format::kBF16) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  } else {
    return __half_as_ushort(__float2half_rn(f));
  }
}

// Computes group `g` as stored elements.
template <Format kFormat, RandomDistribution kDist>
__device__ __forceinline__ void group_elements(const PhiloxSeed& seed, uint64_t g,
                                               Element<kFormat> (&out)[kGroupSize<kFormat>]) {
  if constexpr (kFormat == Format::kF32 || kFormat == Format::kF64) {
    internal::random_group(kDist, seed, g, out);
  } else {
    float values[4];
    if constexpr (kDist == RandomDistribution::kUniform) {
      internal::uniform_half_group(kFormat == Format::kBF16, seed, g, values);
    } else {
      internal::random_group(kDist, seed, g, values);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) out[i] = to_half_bits<kFormat>(values[i]);
  }
}

template <Format kFormat, RandomDistribution kDist>
__global__ void __launch_bounds__(kRandomThreads)
    random_fill_kernel(PhiloxSeed seed, Element<kFormat>* out, int64_t n, int64_t groups,
                       bool vectorized) {
  constexpr int kG = kGroupSize<kFormat>;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t g = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < groups; g += stride) {
    Element<kFormat> values[kG];
    group_elements<kFormat, kDist>(seed, static_cast<uint64_t>(g), values);
    if (vectorized && (g + 1) * kG <= n) {
      GroupVector<kFormat> v;
      static_assert(sizeof v == sizeof values);
      memcpy(&v, values, sizeof v);
      reinterpret_cast<GroupVector<kFormat>*>(out)[g] = v;
    } else {
      for (int64_t i = 0; i < kG && g * kG + i < n; ++i) out[g * kG + i] = values[i];
    }
  }
}

// Returns OK for cudaSuccess, else Internal "[random_fill] cudaLaunchKernel failed: ...".
absl::Status launch_status(cudaError_t error) {
  if (error == cudaSuccess) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("[random_fill] cudaLaunchKernel failed: ", cudaGetErrorString(error)));
}

template <Format kFormat, RandomDistribution kDist>
absl::Status launch(const PhiloxSeed& seed, void* out, int64_t n, cudaStream_t stream) {
  constexpr int kG = kGroupSize<kFormat>;
  const int64_t groups = (n + kG - 1) / kG;
  const auto blocks = static_cast<unsigned>(
      std::clamp<int64_t>((groups + kRandomThreads - 1) / kRandomThreads, 1, kMaxRandomBlocks));
  const bool vectorized = reinterpret_cast<uintptr_t>(out) % sizeof(GroupVector<kFormat>) == 0;
  if (internal::should_fail(internal::FaultSite::kKernelLaunch)) {  // tests only
    return launch_status(cudaErrorLaunchOutOfResources);
  }
  random_fill_kernel<kFormat, kDist><<<blocks, kRandomThreads, 0, stream>>>(
      seed, static_cast<Element<kFormat>*>(out), n, groups, vectorized);
  return launch_status(cudaGetLastError());
}

template <Format kFormat>
absl::Status launch_format(RandomDistribution dist, const PhiloxSeed& seed, void* out, int64_t n,
                           cudaStream_t stream) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return launch<kFormat, RandomDistribution::kUniform>(seed, out, n, stream);
    case RandomDistribution::kNormal:
      return launch<kFormat, RandomDistribution::kNormal>(seed, out, n, stream);
    case RandomDistribution::kTruncatedNormal:
      return launch<kFormat, RandomDistribution::kTruncatedNormal>(seed, out, n, stream);
  }
  MT_CHECK(false);
  return absl::OkStatus();
}

// Uniform integers: 4 int32 or 2 int64 a group, stored as one 16-byte vector when aligned.
template <typename T>
__global__ void __launch_bounds__(kRandomThreads)
    uniform_int_kernel(PhiloxSeed seed, T* out, int64_t n, int64_t groups, T minval,
                       std::make_unsigned_t<T> range, bool vectorized) {
  constexpr int kG = 16 / sizeof(T);
  using Vector = std::conditional_t<sizeof(T) == 4, int4, longlong2>;
  const int64_t stride = int64_t{gridDim.x} * blockDim.x;
  for (int64_t g = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; g < groups; g += stride) {
    T values[kG];
    internal::uniform_int_group(seed, static_cast<uint64_t>(g), minval, range, values);
    if (vectorized && (g + 1) * kG <= n) {
      Vector v;
      memcpy(&v, values, sizeof v);
      reinterpret_cast<Vector*>(out)[g] = v;
    } else {
      for (int64_t i = 0; i < kG && g * kG + i < n; ++i) out[g * kG + i] = values[i];
    }
  }
}

template <typename T>
absl::Status launch_uniform_int(const PhiloxSeed& seed, int64_t minval, uint64_t range, void* out,
                                int64_t n, cudaStream_t stream) {
  constexpr int64_t kG = 16 / sizeof(T);
  const int64_t groups = (n + kG - 1) / kG;
  const auto blocks = static_cast<unsigned>(
      std::clamp<int64_t>((groups + kRandomThreads - 1) / kRandomThreads, 1, kMaxRandomBlocks));
  if (internal::should_fail(internal::FaultSite::kKernelLaunch)) {  // tests only
    return launch_status(cudaErrorLaunchOutOfResources);
  }
  uniform_int_kernel<T><<<blocks, kRandomThreads, 0, stream>>>(
      seed, static_cast<T*>(out), n, groups, static_cast<T>(minval),
      static_cast<std::make_unsigned_t<T>>(range), reinterpret_cast<uintptr_t>(out) % 16 == 0);
  return launch_status(cudaGetLastError());
}

}  // namespace

absl::Status launch_random_fill(RandomDistribution dist, DType dtype, const PhiloxSeed& seed,
                                void* out, int64_t n, cudaStream_t stream) {
  MT_CHECK(n >= 0);
  if (n == 0) return absl::OkStatus();
  switch (dtype) {
    case DType::kFloat32:
      return launch_format<Format::kF32>(dist, seed, out, n, stream);
    case DType::kFloat64:
      return launch_format<Format::kF64>(dist, seed, out, n, stream);
    case DType::kBFloat16:
      return launch_format<Format::kBF16>(dist, seed, out, n, stream);
    case DType::kFloat16:
      return launch_format<Format::kF16>(dist, seed, out, n, stream);
    default:
      MT_CHECK(false);
  }
  return absl::OkStatus();
}

absl::Status launch_random_fill_uniform_int(DType dtype, const PhiloxSeed& seed, int64_t minval,
                                            uint64_t range, void* out, int64_t n,
                                            cudaStream_t stream) {
  MT_CHECK(n >= 0);
  MT_CHECK(dtype == DType::kInt32 || dtype == DType::kInt64);
  const bool wide = dtype == DType::kInt64;
  MT_CHECK(wide || (range <= (uint64_t{1} << 32) && minval == static_cast<int32_t>(minval)));
  if (n == 0) return absl::OkStatus();
  if (wide) return launch_uniform_int<int64_t>(seed, minval, range, out, n, stream);
  return launch_uniform_int<int32_t>(seed, minval, range, out, n, stream);
}

}  // namespace mt::cuda
