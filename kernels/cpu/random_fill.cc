#include "kernels/cpu/random_fill.h"

#include <algorithm>
#include <type_traits>

#include "core/check.h"
#include "core/half.h"
#include "kernels/cpu/cpu_isa.h"
#include "kernels/cpu/thread_pool.h"

namespace mt::cpu {
namespace {

// Groups per parallel_for range: tens of microseconds of uniform values, more of normal ones.
constexpr int64_t kGrainGroups = 2048;

// Writes the elements [g * G, min((g + 1) * G, n)) of group `g` to `out`.
template <typename T>
void fill_group(RandomDistribution dist, const PhiloxSeed& seed, uint64_t g, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    double values[2];
    internal::random_group(dist, seed, g, values);
    const int64_t count = std::min<int64_t>(2, n - static_cast<int64_t>(g) * 2);
    std::copy_n(values, count, out + g * 2);
  } else {
    float values[4];
    if (dist == RandomDistribution::kUniform && !std::is_same_v<T, float>) {
      internal::uniform_half_group(std::is_same_v<T, bfloat16>, seed, g, values);
    } else {
      internal::random_group(dist, seed, g, values);
    }
    const int64_t count = std::min<int64_t>(4, n - static_cast<int64_t>(g) * 4);
    for (int64_t i = 0; i < count; ++i) out[g * 4 + i] = T(values[i]);
  }
}

// Fills the groups [begin, end).
template <typename T>
void fill_groups(RandomDistribution dist, const PhiloxSeed& seed, T* out, int64_t n, int64_t begin,
                 int64_t end) {
  for (int64_t g = begin; g < end; ++g) fill_group(dist, seed, static_cast<uint64_t>(g), out, n);
}

// fill_groups with the random math inlined and its fused multiply-adds in hardware (at the
// baseline ISA each std::fma is a library call, several times slower). Same bits: an fma
// rounds once either way, and this file is built without contraction (random_math.h).
template <typename T>
__attribute__((target("avx2,fma"), flatten)) void fill_groups_fma(RandomDistribution dist,
                                                                  const PhiloxSeed& seed, T* out,
                                                                  int64_t n, int64_t begin,
                                                                  int64_t end) {
  fill_groups(dist, seed, out, n, begin, end);
}

template <typename T>
void fill(RandomDistribution dist, const PhiloxSeed& seed, T* out, int64_t n) {
  constexpr int64_t kGroup = std::is_same_v<T, double> ? 2 : 4;
  const int64_t groups = (n + kGroup - 1) / kGroup;
  const bool fma = cpu_isa() != CpuIsa::kBaseline;
  parallel_for(groups, kGrainGroups, [&](int64_t begin, int64_t end) {
    if (fma) {
      fill_groups_fma(dist, seed, out, n, begin, end);
    } else {
      fill_groups(dist, seed, out, n, begin, end);
    }
  });
}

}  // namespace

bool random_fill_supports(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kBFloat16 ||
         dtype == DType::kFloat16;
}

void random_fill(RandomDistribution dist, DType dtype, const PhiloxSeed& seed, void* out,
                 int64_t n) {
  MT_CHECK(n >= 0 && (n == 0 || out != nullptr));
  switch (dtype) {
    case DType::kFloat32:
      return fill(dist, seed, static_cast<float*>(out), n);
    case DType::kFloat64:
      return fill(dist, seed, static_cast<double*>(out), n);
    case DType::kBFloat16:
      return fill(dist, seed, static_cast<bfloat16*>(out), n);
    case DType::kFloat16:
      return fill(dist, seed, static_cast<float16*>(out), n);
    default:
      MT_CHECK(random_fill_supports(dtype));
  }
}

void random_fill_uniform_int(DType dtype, const PhiloxSeed& seed, int64_t minval, uint64_t range,
                             void* out, int64_t n) {
  MT_CHECK(n >= 0 && (n == 0 || out != nullptr));
  MT_CHECK(dtype == DType::kInt32 || dtype == DType::kInt64);
  const bool wide = dtype == DType::kInt64;
  MT_CHECK(wide || (range <= (uint64_t{1} << 32) && minval == static_cast<int32_t>(minval)));
  const int64_t group = wide ? 2 : 4;
  parallel_for((n + group - 1) / group, kGrainGroups, [&](int64_t begin, int64_t end) {
    for (int64_t g = begin; g < end; ++g) {
      const int64_t count = std::min(group, n - g * group);
      if (wide) {
        int64_t values[2];
        internal::uniform_int_group(seed, g, minval, range, values);
        std::copy_n(values, count, static_cast<int64_t*>(out) + g * 2);
      } else {
        int32_t values[4];  // a range of 2^32 is the full range, as 0 is
        internal::uniform_int_group(seed, g, static_cast<int32_t>(minval),
                                    static_cast<uint32_t>(range), values);
        std::copy_n(values, count, static_cast<int32_t*>(out) + g * 4);
      }
    }
  });
}

}  // namespace mt::cpu
