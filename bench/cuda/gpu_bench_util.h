#pragma once
// Shared by the runtime-level GPU benchmarks in bench/cuda/ (eager_gpu_benchmark.cu,
// half_precision_benchmark.cc): the runtime's first GPU and the median of timings.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "runtime/context.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/minitensor.h"

namespace mt::bench {

// Returns GPU:0 as a CudaDevice, or nullptr (and marks the benchmark skipped).
inline internal::CudaDevice* gpu0(benchmark::State& state) {
  if (config::list_physical_devices("GPU").empty()) {
    state.SkipWithError("needs a GPU: none is visible");
    return nullptr;
  }
  internal::Runtime* rt = internal::Context::get().runtime().value();
  for (int i = 0; i < rt->num_devices(); ++i) {
    if (rt->device(i).type() == DeviceType::kGPU) {
      return static_cast<internal::CudaDevice*>(&rt->device(i));
    }
  }
  state.SkipWithError("no GPU device in the runtime");
  return nullptr;
}

// Returns the median of `v` (0 when empty).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace mt::bench
