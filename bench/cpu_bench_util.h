#pragma once
// Shared by the CPU kernel benchmark and its libtorch peer (bench/peer/): the sizes both
// measure, the bytes each op moves, and the --threads=N flag, so the two programs report
// the same names and units and scripts/cpu-bench-table.py can set them side by side.
//
// Bandwidth counts every byte an op must read plus every byte it must write once.

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace mt::bench {

inline constexpr int64_t kBigElements = int64_t{16} << 20;  // reduce_sum, exp, cast: 16M
inline constexpr int64_t kAddNElements = int64_t{1} << 20;  // add_n: 8 x 1M
inline constexpr int kAddNInputs = 8;
inline constexpr int64_t kBroadcastRows = 4096, kBroadcastCols = 4096;  // [4096,4096]+[4096]
// Conv2D and its gradients: a CIFAR-sized layer, a batch of 128 32x32 images through a 3x3
// SAME filter, as many channels out as in (the benchmark's argument), NHWC float32.
inline constexpr int64_t kConvBatch = 128, kConvSize = 32, kConvWindow = 3;

// The pools of that layer: a 2x2 window at strides 2, VALID, over its input.
inline constexpr int64_t kPoolWindow = 2;

// Returns the bytes of that layer's input with `channels` channels (float32): a pool's
// output and the output's gradient are a quarter of it. A pool reads its input and writes
// its output once; MaxPoolGrad reads the input and the output's gradient and writes the
// input's; AvgPoolGrad reads the output's gradient and writes the input's.
inline int64_t pool_input_bytes(int64_t channels) {
  return kConvBatch * kConvSize * kConvSize * channels * 4;
}

// Returns the floating-point operations of one pass of that layer with `channels` channels:
// two per multiply-add, the SAME padding's taps counted as if they were not padding.
inline double conv_flops(int64_t channels) {
  return 2.0 * kConvBatch * kConvSize * kConvSize * kConvWindow * kConvWindow * channels * channels;
}

// Returns `n` floats uniform in [-1, 1) from a fixed seed.
inline std::vector<float> random_floats(int64_t n, unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Removes --threads=N from argv and returns N (0 when absent: every core).
inline int take_threads_flag(int* argc, char** argv) {
  int threads = 0;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      threads = std::atoi(argv[i] + 10);
    } else {
      argv[out++] = argv[i];
    }
  }
  *argc = out;
  return threads;
}

}  // namespace mt::bench
