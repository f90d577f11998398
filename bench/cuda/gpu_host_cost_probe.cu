// What GPU work costs the host (issue 24: the scalar bookkeeping's 512 x 512 MatMul took
// 13-14 µs of host time on an H100 where an elementwise op takes 4). First the driver calls a
// copy of a tensor to the GPU is made of, each the median host time of one call: an event
// created and destroyed, recorded, queried before and after it completes, and a 4-byte
// copy from pinned memory. Then, for a float32 product of n x n by n x n and each n,
// the median host time of one call, the device time per call (calls back to back, events
// around them) and the number of kernels one call enqueues (counted by capturing it in a
// CUDA graph), for:
//   launch      an empty kernel (the launch floor)
//   sgemm       cublasSgemm, cuBLAS's default workspace
//   sgemm+ws    cublasSgemm with a workspace set on the handle (cublasSetWorkspace)
//   lt          cublasLtMatmul with the heuristic's first algorithm, found once per shape
//   mt          mt::matmul on GPU:0
// Raw CUDA except the last row. Prints "needs a GPU" and exits 0 without one.
//
//   gpu_host_cost_probe [--calls=2000]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "runtime/minitensor.h"

namespace {

__global__ void empty_kernel() {}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Figures {
  double host_us, device_us;
  int kernels;
};

// Times `call` on `stream`: its median host time over `calls` calls (the stream drained
// every 100), its device time per call, and the kernels one call enqueues.
Figures measure(cudaStream_t stream, int calls, const std::function<void()>& call) {
  for (int i = 0; i < 20; ++i) call();
  cudaStreamSynchronize(stream);
  std::vector<double> ns;
  for (int i = 0; i < calls; ++i) {
    const int64_t t0 = now_ns();
    call();
    ns.push_back(static_cast<double>(now_ns() - t0));
    if (i % 100 == 99) cudaStreamSynchronize(stream);
  }
  std::sort(ns.begin(), ns.end());
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a, stream);
  for (int i = 0; i < 200; ++i) call();
  cudaEventRecord(b, stream);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  int kernels = -1;
  cudaGraph_t graph;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    call();
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess) {
      size_t count = 0;
      cudaGraphGetNodes(graph, nullptr, &count);
      kernels = static_cast<int>(count);
      cudaGraphDestroy(graph);
    }
  }
  cudaGetLastError();
  return {ns[ns.size() / 2] / 1e3, ms * 1e3 / 200, kernels};
}

void print(const char* name, int n, const Figures& f) {
  std::printf("%-10s n=%-5d host %7.2f us   device %8.2f us   nodes %d\n", name, n, f.host_us,
              f.device_us, f.kernels);
}

int run(int calls) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("needs a GPU\n");
    return 0;
  }
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetStream(handle, stream);
  cublasLtHandle_t lt;
  cublasLtCreate(&lt);
  const size_t workspace_bytes = size_t{32} << 20;
  void* workspace = nullptr;
  cudaMalloc(&workspace, workspace_bytes);

  {
    std::vector<cudaEvent_t> events(calls);
    std::vector<double> create, record, query_pending, destroy, query_done, copy;
    float* pinned = nullptr;
    float* device = nullptr;
    cudaMallocHost(&pinned, sizeof(float));
    cudaMalloc(&device, sizeof(float));
    auto time = [](std::vector<double>& into, auto&& call) {
      const int64_t t0 = now_ns();
      call();
      into.push_back(static_cast<double>(now_ns() - t0));
    };
    for (int i = 0; i < calls; ++i) {
      time(create, [&] { cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming); });
      for (int k = 0; k < 20; ++k) empty_kernel<<<1, 32, 0, stream>>>();  // keep it pending
      time(record, [&] { cudaEventRecord(events[i], stream); });
      time(query_pending, [&] { cudaEventQuery(events[i]); });
      time(copy,
           [&] { cudaMemcpyAsync(device, pinned, sizeof(float), cudaMemcpyHostToDevice, stream); });
      cudaStreamSynchronize(stream);
      time(query_done, [&] { cudaEventQuery(events[i]); });
      time(destroy, [&] { cudaEventDestroy(events[i]); });
    }
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2] / 1e3;
    };
    std::printf(
        "event: create %.2f us, record %.2f, query pending %.2f, query done %.2f, "
        "destroy %.2f; 4-byte pinned copy in %.2f us\n",
        med(create), med(record), med(query_pending), med(query_done), med(destroy), med(copy));
    cudaFreeHost(pinned);
    cudaFree(device);
  }
  print("launch", 0, measure(stream, calls, [&] { empty_kernel<<<1, 32, 0, stream>>>(); }));
  for (int n : {64, 256, 512, 1024}) {
    float *a, *b, *c;
    cudaMalloc(&a, sizeof(float) * n * n);
    cudaMalloc(&b, sizeof(float) * n * n);
    cudaMalloc(&c, sizeof(float) * n * n);
    cudaMemset(a, 0, sizeof(float) * n * n);
    cudaMemset(b, 0, sizeof(float) * n * n);
    const float one = 1, zero = 0;
    auto sgemm = [&] {
      cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n);
    };
    print("sgemm", n, measure(stream, calls, sgemm));
    cublasSetWorkspace(handle, workspace, workspace_bytes);
    print("sgemm+ws", n, measure(stream, calls, sgemm));
    cublasSetStream(handle, stream);  // resets the workspace to cuBLAS's own

    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t layout;
    cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, n, n, n);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                         &workspace_bytes, sizeof(workspace_bytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasLtMatmulAlgoGetHeuristic(lt, desc, layout, layout, layout, layout, pref, 1, &result,
                                   &found);
    if (found > 0) {
      print("lt", n, measure(stream, calls, [&] {
              cublasLtMatmul(lt, desc, &one, b, layout, a, layout, &zero, c, layout, c, layout,
                             &result.algo, workspace, workspace_bytes, stream);
            }));
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(layout);
    cublasLtMatmulDescDestroy(desc);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);

    mt::Tensor x, w, y;
    {
      mt::DeviceScope gpu("/GPU:0");
      x = mt::random::stateless_uniform({n, n}, {1, 1}, -1, 1);
      w = mt::random::stateless_uniform({n, n}, {2, 1}, -1, 1);
    }
    std::vector<double> ns;
    for (int i = 0; i < calls + 20; ++i) {
      mt::DeviceScope gpu("/GPU:0");
      const int64_t t0 = now_ns();
      y = mt::matmul(x, w);
      if (i >= 20) ns.push_back(static_cast<double>(now_ns() - t0));
      if (i % 100 == 99) (void)mt::reduce_sum(y).to_vector<float>();
    }
    std::sort(ns.begin(), ns.end());
    std::printf("%-10s n=%-5d host %7.2f us\n", "mt", n, ns[ns.size() / 2] / 1e3);
  }
  cudaFree(workspace);
  cublasLtDestroy(lt);
  cublasDestroy(handle);
  cudaStreamDestroy(stream);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int calls = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--calls=", 8) == 0) calls = std::atoi(argv[i] + 8);
  }
  return run(std::max(calls, 100));
}
