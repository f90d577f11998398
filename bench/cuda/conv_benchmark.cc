// Conv2D, Conv2DBackpropInput and Conv2DBackpropFilter through the runtime (mt::nn::conv2d
// and its backprops on GPU tensors: placement, allocation, the filter's layout change and
// cuDNN) beside raw cuDNN on the same stream with the algorithm the runtime chose, its
// filter already in cuDNN's layout, in the same run. The CIFAR ConvNet's layer shapes
// (bench/convnet_train_step.py), NHWC, 3x3 SAME, batch 128; float32 with TensorFloat-32
// (as PyTorch's cuDNN default) and bfloat16. Counters: microseconds per call of each and
// the runtime's rate as a fraction of raw cuDNN's. Skips without a GPU or cuDNN.
//
//   build/gpu-sm90/bench/conv_benchmark --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/cuda/gpu_bench_util.h"
#include "kernels/cuda/cudnn/cudnn_conv.h"
#include "kernels/cuda/cudnn/cudnn_library.h"
#include "kernels/kernel_options.h"

namespace mt::bench {
namespace {

using cuda::ConvPass;

struct Descriptors {
  const cuda::CudnnLibrary* l;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    l->destroy_tensor(x), l->destroy_tensor(y), l->destroy_filter(w), l->destroy_conv(conv);
  }
};

// args: pass (0 forward, 1 input gradient, 2 filter gradient), dtype (0 float32, 1
// bfloat16), image size, input channels, output channels.
void BM_Conv2D(benchmark::State& state) {
  internal::CudaDevice* gpu = gpu0(state);
  if (gpu == nullptr) return;
  absl::StatusOr<const cuda::CudnnLibrary*> library = cuda::cudnn_library();
  if (!library.ok()) return state.SkipWithError(std::string(library.status().message()).c_str());
  const cuda::CudnnLibrary& l = **library;
  const auto pass = static_cast<ConvPass>(state.range(0));
  const DType dtype = state.range(1) == 0 ? DType::kFloat32 : DType::kBFloat16;
  const int n = 128, hw = static_cast<int>(state.range(2));
  const int c = static_cast<int>(state.range(3)), k = static_cast<int>(state.range(4));
  internal::set_tf32_enabled(true);
  DeviceScope on("/GPU:0");
  const Tensor x = cast(random::normal({n, hw, hw, c}), dtype);
  const Tensor f = cast(random::normal({3, 3, c, k}), dtype);
  const Tensor dy = cast(random::normal({n, hw, hw, k}), dtype);
  nn::Conv2DOptions o;
  o.padding = Padding::kSame;
  const auto ours = [&] {
    switch (pass) {
      case ConvPass::kForward:
        return nn::conv2d(x, f, o);
      case ConvPass::kBackwardInput:
        return nn::conv2d_backprop_input({n, hw, hw, c}, f, dy, o);
      default:
        return nn::conv2d_backprop_filter(x, {3, 3, c, k}, dy, o);
    }
  };
  static_cast<void>(ours());  // plans the shape, loads cuDNN
  if (!gpu->synchronize().ok()) return state.SkipWithError("the first call failed");
  const int algorithm = cuda::last_cudnn_algorithm(pass);
  if (algorithm < 0) return state.SkipWithError("cuDNN did not take the shape");

  // Raw cuDNN on the device's stream, with the filter (or its gradient) in KRSC.
  cudaStream_t stream = gpu->stream();
  cudnnHandle_t handle = nullptr;
  l.create(&handle);
  l.set_stream(handle, stream);
  Descriptors d{&l};
  const cudnnDataType_t type = dtype == DType::kFloat32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_BFLOAT16;
  l.create_tensor(&d.x), l.create_tensor(&d.y), l.create_filter(&d.w), l.create_conv(&d.conv);
  l.set_tensor_4d(d.x, CUDNN_TENSOR_NHWC, type, n, c, hw, hw);
  l.set_tensor_4d(d.y, CUDNN_TENSOR_NHWC, type, n, k, hw, hw);
  l.set_filter_4d(d.w, type, CUDNN_TENSOR_NHWC, k, c, 3, 3);
  l.set_conv_2d(d.conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  l.set_math_type(d.conv, dtype == DType::kFloat32 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH);
  const size_t elem = dtype_size(dtype);
  cuda::DeviceBuffer bx = *cuda::DeviceBuffer::create(size_t{1} * n * hw * hw * c * elem);
  cuda::DeviceBuffer by = *cuda::DeviceBuffer::create(size_t{1} * n * hw * hw * k * elem);
  cuda::DeviceBuffer bw = *cuda::DeviceBuffer::create(size_t{9} * c * k * elem);
  cudaMemsetAsync(bx.get(), 0, size_t{1} * n * hw * hw * c * elem, stream);
  cudaMemsetAsync(by.get(), 0, size_t{1} * n * hw * hw * k * elem, stream);
  cudaMemsetAsync(bw.get(), 0, size_t{9} * c * k * elem, stream);
  const cuda::DeviceBuffer work = *cuda::DeviceBuffer::create(cuda::kCudnnWorkspaceBytes);
  const size_t work_bytes = cuda::kCudnnWorkspaceBytes - size_t{9} * c * k * elem;
  const float one = 1, zero = 0;
  cudnnStatus_t failed = CUDNN_STATUS_SUCCESS;
  const auto raw = [&] {
    cudnnStatus_t s;
    switch (pass) {
      case ConvPass::kForward:
        s = l.forward(handle, &one, d.x, bx.get(), d.w, bw.get(), d.conv,
                      static_cast<cudnnConvolutionFwdAlgo_t>(algorithm), work.get(), work_bytes,
                      &zero, d.y, by.get());
        break;
      case ConvPass::kBackwardInput:
        s = l.backward_data(handle, &one, d.w, bw.get(), d.y, by.get(), d.conv,
                            static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm), work.get(),
                            work_bytes, &zero, d.x, bx.get());
        break;
      default:
        s = l.backward_filter(handle, &one, d.x, bx.get(), d.y, by.get(), d.conv,
                              static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm), work.get(),
                              work_bytes, &zero, d.w, bw.get());
    }
    if (s != CUDNN_STATUS_SUCCESS) failed = s;
  };
  StreamTimer timer(stream);
  constexpr int kReps = 50;
  timer.us_per_call(5, raw);
  std::vector<double> ours_us, raw_us;
  for (auto _ : state) {
    ours_us.push_back(timer.us_per_call(kReps, [&] { benchmark::DoNotOptimize(ours()); }));
    raw_us.push_back(timer.us_per_call(kReps, raw));
    state.SetIterationTime(ours_us.back() * 1e-6);
  }
  l.destroy(handle);
  if (failed != CUDNN_STATUS_SUCCESS) return state.SkipWithError(l.error_string(failed));
  state.SetLabel(dtype_name(dtype));
  state.counters["algorithm"] = algorithm;
  state.counters["ours_us"] = median(ours_us);
  state.counters["cudnn_us"] = median(raw_us);
  state.counters["fraction_of_cudnn"] = median(raw_us) / median(ours_us);
}
BENCHMARK(BM_Conv2D)
    ->ArgNames({"pass", "bf16", "hw", "c", "k"})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {32}, {32}, {32}})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {16}, {64}, {64}})
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {8}, {128}, {128}})
    ->UseManualTime()
    ->Iterations(5)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mt::bench

BENCHMARK_MAIN();
