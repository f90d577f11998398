#pragma once
// Fills a buffer with random numbers on the CPU, split across the intra-op threads: the
// kernel behind random.uniform, random.normal, random.truncated_normal and their stateless
// forms. Element i depends only on the seed and i (kernels/random_distributions.h), so the
// result is the same for any thread count and bit-identical to the CUDA fill
// (kernels/cuda/random_kernels.h).
//
//   std::vector<float> out(1000);
//   cpu::random_fill(RandomDistribution::kNormal, DType::kFloat32,
//                    stateless_philox_seed(1, 2), out.data(), out.size());
//
// Integers have their own fill, random_fill_uniform_int. The values of random_fill are the
// distribution's standard form ([0, 1), or mean 0 and standard deviation 1); the ops scale
// and shift them as TensorFlow does, with a multiply and then an add in the output dtype,
// each rounded (rnd * (maxval - minval) + minval, rnd * stddev + mean): never a fused
// multiply-add, or the bits differ from TensorFlow's.

#include <cstdint>

#include "core/dtype.h"
#include "kernels/philox.h"
#include "kernels/random_distributions.h"

namespace mt::cpu {

// Returns whether random_fill takes `dtype`: float32, float64, bfloat16 and float16.
bool random_fill_supports(DType dtype);

// Writes n values of `dist` as `dtype` to `out`, from the stream that starts at `seed`
// (element i from group i / G of Note [TensorFlow's random bits]). `out` holds n elements
// of `dtype`, which random_fill_supports (checked). Thread-safe; blocks until done.
void random_fill(RandomDistribution dist, DType dtype, const PhiloxSeed& seed, void* out,
                 int64_t n);

// Writes n uniform integers of `dtype` (int32 or int64, checked) to `out`: minval plus a
// value below `range` (maxval - minval as unsigned, at most 2^32 for int32, checked), or with
// range 0 every value of the dtype (stateless_uniform with minval=maxval=None). As
// TensorFlow's (Stateless)RandomUniformInt. Thread-safe; blocks until done.
void random_fill_uniform_int(DType dtype, const PhiloxSeed& seed, int64_t minval, uint64_t range,
                             void* out, int64_t n);

}  // namespace mt::cpu
