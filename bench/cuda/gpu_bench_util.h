#pragma once
// Shared by the runtime-level GPU benchmarks in bench/cuda/ (eager_gpu_benchmark.cu,
// half_precision_benchmark.cc, cublaslt_search_benchmark.cc): the runtime's first GPU, a
// timer of calls on a stream, the median of timings and the card's dense half-precision peak.

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_device.h"
#include "runtime/eager/context.h"
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

// Times calls enqueued on one stream with a pair of CUDA events (device time).
class StreamTimer {
 public:
  explicit StreamTimer(cudaStream_t stream) : stream_(stream) {
    cudaEventCreate(&start_);
    cudaEventCreate(&stop_);
  }
  ~StreamTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  // Returns the microseconds per call of `reps` calls of `body`, waiting for them to end.
  template <typename Body>
  double us_per_call(int reps, Body&& body) {
    cudaEventRecord(start_, stream_);
    for (int i = 0; i < reps; ++i) body();
    cudaEventRecord(stop_, stream_);
    cudaEventSynchronize(stop_);
    float ms = 0;
    cudaEventElapsedTime(&ms, start_, stop_);
    return ms * 1e3 / reps;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// Returns the median of `v` (0 when empty).
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Returns GPU 0's name and its dense bfloat16/float16 tensor-core peak in TFLOP/s (NVIDIA
// datasheets, without sparsity), 0 for a card not listed.
inline double dense_peak_tflops(std::string* name) {
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  *name = prop.name;
  if (name->find("H200") != std::string::npos) return 989;
  if (name->find("H100") != std::string::npos) {
    if (name->find("PCIe") != std::string::npos) return 756;
    if (name->find("NVL") != std::string::npos) return 835;
    return 989;  // SXM ("NVIDIA H100 80GB HBM3")
  }
  if (name->find("A100") != std::string::npos) return 312;
  return 0;
}

}  // namespace mt::bench
