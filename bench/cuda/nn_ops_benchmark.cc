// GPU kernels of the neural-network ops against their baselines, in the same run, timed
// with CUDA events (median of the iterations): Softmax and LogSoftmax over rows of 4096
// (4096 x 4096, float32 = 64 MiB, and bfloat16) beside a device-to-device memcpy of the
// same bytes (both read the input once and write the output once), with the rates and the
// fraction of memcpy's rate as counters; BatchMatMulV2 of 64 x (512 x 512) x (512 x 512),
// float32 (TensorFloat-32 off) and bfloat16, through the kernel registry beside a raw
// cublasGemmStridedBatchedEx of the same shape on the same handle and math mode, with
// TFLOP/s and the fraction of cuBLAS's rate; LayerNorm, LayerNormGrad and AddLayerNorm of
// 8192 x 768 (GPT-2's activations) beside the same memcpy; causal DotProductAttention and its
// gradient of GPT-2's shape beside the composite (batched products, mask, softmax) through
// the same registry. Skips without a GPU.
//
//   build/gpu-sm90/bench/nn_ops_benchmark --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/cuda/cuda_handles.h"
#include "core/half.h"
#include "kernels/cuda/gpu_state.h"
#include "kernels/kernel_options.h"
#include "kernels/kernel_registry.h"
#include "kernels/op_def.h"

namespace mt::cuda {
namespace {

// One stream, cuBLAS handle and scratch for the whole run, as a logical device has.
struct BenchGpu {
  std::string error;  // why the benchmarks cannot run; empty when they can
  Stream stream;
  CublasHandle cublas;
  DeviceBuffer scratch;
  BlasLock blas;
  internal::Mutex scratch_mu;
  GpuState state;
  KernelRegistry registry;
};

BenchGpu& bench_gpu() {
  static BenchGpu* gpu = [] {
    auto* g = new BenchGpu;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      g->error = e != cudaSuccess ? cudaGetErrorString(e) : "no GPU visible";
      return g;
    }
    absl::StatusOr<Stream> s = Stream::create();
    absl::StatusOr<CublasHandle> h =
        s.ok() ? CublasHandle::create(s->get()) : absl::StatusOr<CublasHandle>(s.status());
    absl::StatusOr<DeviceBuffer> b = DeviceBuffer::create(kScratchBytes + kTicketBytes);
    absl::Status status = register_cuda_kernels(g->registry);
    for (const absl::Status& st : {s.status(), h.status(), b.status(), status}) {
      if (!st.ok() && g->error.empty()) g->error = std::string(st.message());
    }
    if (!g->error.empty()) return g;
    g->stream = *std::move(s);
    g->cublas = *std::move(h);
    g->scratch = *std::move(b);
    g->state = {.physical_device = 0,
                .stream = g->stream.get(),
                .cublas = g->cublas.get(),
                .blas = &g->blas,
                .scratch = g->scratch.get(),
                .scratch_bytes = kScratchBytes,
                .scratch_mu = &g->scratch_mu};
    cudaDeviceGetAttribute(&g->state.num_sms, cudaDevAttrMultiProcessorCount, 0);
    return g;
  }();
  return *gpu;
}

// Returns the milliseconds `enqueue` takes on the stream, timed with events.
double time_ms(BenchGpu& gpu, const std::function<void()>& enqueue) {
  static Event start = *Event::create(), stop = *Event::create();
  cudaEventRecord(start.get(), gpu.stream.get());
  enqueue();
  cudaEventRecord(stop.get(), gpu.stream.get());
  cudaEventSynchronize(stop.get());
  float ms = 0;
  cudaEventElapsedTime(&ms, start.get(), stop.get());
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Returns a device buffer of `n` random values of `dtype` (float32 or bfloat16) in [-4, 4).
DeviceBuffer random_values(DType dtype, size_t n) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> f(n);
  for (float& x : f) x = dist(rng);
  DeviceBuffer d = *DeviceBuffer::create(n * dtype_size(dtype));
  if (dtype == DType::kBFloat16) {
    std::vector<bfloat16> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = bfloat16(f[i]);
    cudaMemcpy(d.get(), h.data(), n * sizeof(bfloat16), cudaMemcpyHostToDevice);
  } else {
    cudaMemcpy(d.get(), f.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  }
  return d;
}

// Times `ours` once per benchmark iteration and `baseline` as many times after, and
// reports the median of each as counters.
void run_against(benchmark::State& state, BenchGpu& gpu, const std::function<void()>& ours,
                 const std::function<void()>& baseline) {
  time_ms(gpu, ours);  // warm up both
  time_ms(gpu, baseline);
  std::vector<double> ours_ms, base_ms;
  for (auto _ : state) {
    ours_ms.push_back(time_ms(gpu, ours));
    state.SetIterationTime(ours_ms.back() / 1e3);
  }
  for (size_t i = 0; i < ours_ms.size(); ++i) base_ms.push_back(time_ms(gpu, baseline));
  state.counters["ours_ms"] = median(ours_ms);
  state.counters["baseline_ms"] = median(base_ms);
}

// Softmax (LogSoftmax with state.range(1)) of 4096 x 4096 float32 (dtype 0) or bfloat16
// (dtype 1) against a memcpy of the input's bytes into another buffer.
void BM_Softmax(benchmark::State& state) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  const DType dtype = state.range(0) == 0 ? DType::kFloat32 : DType::kBFloat16;
  const OpId op = state.range(1) == 0 ? OpId::kSoftmax : OpId::kLogSoftmax;
  constexpr int64_t kRows = 4096, kCols = 4096;
  const Shape shape = Shape::make({kRows, kCols}).value();
  const size_t bytes = kRows * kCols * dtype_size(dtype);
  DeviceBuffer in = random_values(dtype, kRows * kCols);
  DeviceBuffer out = *DeviceBuffer::create(bytes), copy = *DeviceBuffer::create(bytes);
  const TensorArg args[1] = {{in.get(), &shape, dtype}};
  const OpAttrs attrs;
  const KernelContext ctx{args, {out.get(), &shape, dtype}, &attrs, &gpu.state};
  KernelFn fn = gpu.registry.find(op, DeviceType::kGPU, dtype);
  bool failed = false;
  run_against(
      state, gpu, [&] { failed |= !fn(ctx).ok(); },
      [&] {
        cudaMemcpyAsync(copy.get(), in.get(), bytes, cudaMemcpyDeviceToDevice, gpu.stream.get());
      });
  if (failed) return state.SkipWithError("kernel failed");
  const double moved = 2.0 * bytes;  // read once, written once, by both
  const double rate = moved / (state.counters["ours_ms"] / 1e3);
  const double copy_rate = moved / (state.counters["baseline_ms"] / 1e3);
  state.SetLabel(dtype_name(dtype));
  state.SetBytesProcessed(int64_t(moved) * state.iterations());
  state.counters["GBps"] = rate / 1e9;
  state.counters["memcpy_GBps"] = copy_rate / 1e9;
  state.counters["fraction_of_memcpy"] = rate / copy_rate;
}
BENCHMARK(BM_Softmax)
    ->ArgNames({"dtype", "log"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Iterations(50)
    ->Repetitions(3)
    ->Unit(benchmark::kMillisecond);

// LayerNorm (op 0), LayerNormGrad (op 1) or AddLayerNorm (op 2) over rows of 768, 8192 x 768
// float32 (dtype 0) or bfloat16 (dtype 1), gamma and beta float32, against a memcpy of x's
// bytes. The bytes moved are the tensors' (LayerNorm: x read, y written; LayerNormGrad: dy
// and x read, dx written; AddLayerNorm: x and the residual read, y and the sum written; with
// gamma, beta and the statistics), so fraction_of_memcpy is the rate's ratio to memcpy's
// (issue 38 asks for 0.8).
void BM_LayerNorm(benchmark::State& state) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  const DType dtype = state.range(0) == 0 ? DType::kFloat32 : DType::kBFloat16;
  const OpId ops[] = {OpId::kLayerNorm, OpId::kLayerNormGrad, OpId::kAddLayerNorm};
  const OpId op = ops[state.range(1)];
  constexpr int64_t kRows = 8 * 1024, kCols = 768;
  constexpr DType kF32 = DType::kFloat32;
  const Shape shape = Shape::make({kRows, kCols}).value();
  const Shape rows = Shape::make({kRows}).value(), cols = Shape::make({kCols}).value();
  const size_t bytes = kRows * kCols * dtype_size(dtype);
  DeviceBuffer x = random_values(dtype, kRows * kCols), dy = random_values(dtype, kRows * kCols);
  DeviceBuffer gamma = random_values(kF32, kCols), beta = random_values(kF32, kCols);
  DeviceBuffer y = *DeviceBuffer::create(bytes), copy = *DeviceBuffer::create(bytes);
  DeviceBuffer mean = *DeviceBuffer::create(kRows * 4), inv = *DeviceBuffer::create(kRows * 4);
  DeviceBuffer dgamma = *DeviceBuffer::create(kCols * 4), dbeta = *DeviceBuffer::create(kCols * 4);
  OpAttrs attrs;
  attrs.axis = -1;
  attrs.epsilon = 1e-5;
  const TensorArg x_arg{x.get(), &shape, dtype}, dy_arg{dy.get(), &shape, dtype};
  const TensorArg gamma_arg{gamma.get(), &cols, kF32}, beta_arg{beta.get(), &cols, kF32};
  const TensorArg mean_arg{mean.get(), &rows, kF32}, inv_arg{inv.get(), &rows, kF32};
  const MutableTensorArg y_out{y.get(), &shape, dtype}, sum_out{copy.get(), &shape, dtype};
  const MutableTensorArg mean_out{mean.get(), &rows, kF32}, inv_out{inv.get(), &rows, kF32};
  const TensorArg forward_in[] = {x_arg, gamma_arg, beta_arg};
  const MutableTensorArg forward_out[] = {y_out, mean_out, inv_out};
  const TensorArg grad_in[] = {dy_arg, x_arg, gamma_arg, mean_arg, inv_arg};
  const MutableTensorArg grad_out[] = {
      y_out, {dgamma.get(), &cols, kF32}, {dbeta.get(), &cols, kF32}};
  const TensorArg add_in[] = {x_arg, dy_arg, gamma_arg, beta_arg};  // dy as the residual
  const MutableTensorArg add_out[] = {y_out, sum_out, mean_out, inv_out};
  const KernelContext contexts[] = {{forward_in, y_out, &attrs, &gpu.state, forward_out},
                                    {grad_in, y_out, &attrs, &gpu.state, grad_out},
                                    {add_in, y_out, &attrs, &gpu.state, add_out}};
  KernelFn fn = gpu.registry.find(op, DeviceType::kGPU, dtype);
  // The statistics LayerNormGrad reads.
  bool failed = !gpu.registry.find(OpId::kLayerNorm, DeviceType::kGPU, dtype)(contexts[0]).ok();
  run_against(
      state, gpu, [&] { failed |= !fn(contexts[state.range(1)]).ok(); },
      [&] {
        cudaMemcpyAsync(copy.get(), x.get(), bytes, cudaMemcpyDeviceToDevice, gpu.stream.get());
      });
  if (failed) return state.SkipWithError("kernel failed");
  const double params = 2.0 * kCols * 4, stats = 2.0 * kRows * 4;
  const double moved = (op == OpId::kLayerNorm       ? 2.0
                        : op == OpId::kLayerNormGrad ? 3.0
                                                     : 4.0) *
                           bytes +
                       params + stats;
  const double rate = moved / (state.counters["ours_ms"] / 1e3);
  const double copy_rate = 2.0 * bytes / (state.counters["baseline_ms"] / 1e3);
  state.SetLabel(absl::StrCat(dtype_name(dtype), " ", op_name(op)));
  state.SetBytesProcessed(int64_t(moved) * state.iterations());
  state.counters["GBps"] = rate / 1e9;
  state.counters["memcpy_GBps"] = copy_rate / 1e9;
  state.counters["fraction_of_memcpy"] = rate / copy_rate;
}
BENCHMARK(BM_LayerNorm)
    ->ArgNames({"dtype", "op"})
    ->ArgsProduct({{0, 1}, {0, 1, 2}})
    ->UseManualTime()
    ->Iterations(100)
    ->Repetitions(3)
    ->Unit(benchmark::kMillisecond);

// One kernel call through the registry: `op` on `in`, writing `out` (every output).
struct Call {
  OpId op;
  DType dtype;
  std::vector<TensorArg> in;
  std::vector<MutableTensorArg> out;
  OpAttrs attrs;
  bool run(BenchGpu& gpu) const {
    const KernelContext ctx{in, out[0], &attrs, &gpu.state, out};
    KernelFn fn = gpu.registry.find(op, DeviceType::kGPU, dtype);
    return fn != nullptr && fn(ctx).ok();
  }
};

// Causal self-attention of GPT-2's shape (batch 8, 12 heads of 64, 1024 tokens), float32
// (dtype 0, TensorFloat-32 off) or bfloat16 (dtype 1): the fused DotProductAttention (pass 0)
// or DotProductAttentionGrad (pass 1) against the composite it replaces, through the same
// registry on heads-first tensors (no transposes) with the scale folded into q: forward,
// BatchMatMulV2 (q k^T), AddV2 of a 0 / -inf causal mask, Softmax and BatchMatMulV2 (P v);
// backward, from P, dv = P^T do, dP = do v^T, dS = P (dP - sum(dP P)) (Mul, Sum, Sub, Mul),
// dq = dS k and dk = dS^T q. TFLOP/s count the products causal attention needs (half the
// scores: 2 products forward, 4 backward), for both.
void BM_Attention(benchmark::State& state) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  const DType dtype = state.range(0) == 0 ? DType::kFloat32 : DType::kBFloat16;
  const bool backward = state.range(1) == 1;
  internal::set_tf32_enabled(false);
  constexpr int64_t kB = 8, kH = 12, kT = 1024, kD = 64;
  constexpr DType kF32 = DType::kFloat32;
  const int64_t n = kB * kH * kT * kD, scores = kB * kH * kT * kT;
  const Shape tokens = Shape::make({kB, kT, kH, kD}).value();  // the fused op's layout
  const Shape heads = Shape::make({kB, kH, kT, kD}).value();
  const Shape lse_shape = Shape::make({kB, kH, kT}).value();
  const Shape square = Shape::make({kB, kH, kT, kT}).value(),
              mask_shape = Shape::make({kT, kT}).value();
  const Shape rows = Shape::make({kB, kH, kT, 1}).value();
  DeviceBuffer q = random_values(dtype, n), k = random_values(dtype, n),
               v = random_values(dtype, n);
  DeviceBuffer d_o = random_values(dtype, n), o = *DeviceBuffer::create(n * dtype_size(dtype));
  DeviceBuffer composite_o = *DeviceBuffer::create(n * dtype_size(dtype));
  DeviceBuffer dq = *DeviceBuffer::create(n * dtype_size(dtype));
  DeviceBuffer dk = *DeviceBuffer::create(n * dtype_size(dtype));
  DeviceBuffer dv = *DeviceBuffer::create(n * dtype_size(dtype));
  DeviceBuffer lse = *DeviceBuffer::create(kB * kH * kT * 4);
  std::vector<DeviceBuffer> big;  // S then P; dP; S + mask, then dP P and dS; dP - sum
  for (int i = 0; i < 4; ++i) big.push_back(*DeviceBuffer::create(scores * dtype_size(dtype)));
  DeviceBuffer row_sums = *DeviceBuffer::create(kB * kH * kT * dtype_size(dtype));
  std::vector<float> mask_host(kT * kT);
  for (int64_t i = 0; i < kT; ++i) {
    for (int64_t j = 0; j < kT; ++j) mask_host[i * kT + j] = j <= i ? 0.f : -INFINITY;
  }
  DeviceBuffer mask = *DeviceBuffer::create(kT * kT * dtype_size(dtype));
  if (dtype == DType::kBFloat16) {
    std::vector<bfloat16> h(mask_host.begin(), mask_host.end());
    cudaMemcpy(mask.get(), h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  } else {
    cudaMemcpy(mask.get(), mask_host.data(), mask_host.size() * 4, cudaMemcpyHostToDevice);
  }
  auto in = [&](const DeviceBuffer& b, const Shape& s, DType t) {
    return TensorArg{b.get(), &s, t};
  };
  auto out = [&](DeviceBuffer& b, const Shape& s, DType t) {
    return MutableTensorArg{b.get(), &s, t};
  };
  OpAttrs causal;
  causal.scale = 1 / std::sqrt(double{kD});
  causal.causal = true;
  OpAttrs adj_x, adj_y, plain, last;
  adj_x.transpose_a = true, adj_y.transpose_b = true;
  last.axes = {-1}, last.keep_dims = true;
  const Call forward{OpId::kDotProductAttention,
                     dtype,
                     {in(q, tokens, dtype), in(k, tokens, dtype), in(v, tokens, dtype)},
                     {out(o, tokens, dtype), out(lse, lse_shape, kF32)},
                     causal};
  const Call grad{OpId::kDotProductAttentionGrad,
                  dtype,
                  {in(d_o, tokens, dtype), in(q, tokens, dtype), in(k, tokens, dtype),
                   in(v, tokens, dtype), in(o, tokens, dtype), in(lse, lse_shape, kF32)},
                  {out(dq, tokens, dtype), out(dk, tokens, dtype), out(dv, tokens, dtype)},
                  causal};
  DeviceBuffer &s = big[0], &dp = big[1], &prod = big[2], &ds = big[3];
  const TensorArg q_in = in(q, heads, dtype), k_in = in(k, heads, dtype),
                  v_in = in(v, heads, dtype);
  const TensorArg do_in = in(d_o, heads, dtype), p_in = in(s, square, dtype);
  const std::vector<Call> composite_forward = {
      {OpId::kBatchMatMulV2, dtype, {q_in, k_in}, {out(s, square, dtype)}, adj_y},
      {OpId::kAddV2,
       dtype,
       {in(s, square, dtype), in(mask, mask_shape, dtype)},
       {out(prod, square, dtype)},
       plain},
      {OpId::kSoftmax, dtype, {in(prod, square, dtype)}, {out(s, square, dtype)}, plain},
      {OpId::kBatchMatMulV2, dtype, {p_in, v_in}, {out(composite_o, heads, dtype)}, plain}};
  const std::vector<Call> composite_backward = {
      {OpId::kBatchMatMulV2, dtype, {p_in, do_in}, {out(dv, heads, dtype)}, adj_x},
      {OpId::kBatchMatMulV2, dtype, {do_in, v_in}, {out(dp, square, dtype)}, adj_y},
      {OpId::kMul, dtype, {in(dp, square, dtype), p_in}, {out(prod, square, dtype)}, plain},
      {OpId::kSum, dtype, {in(prod, square, dtype)}, {out(row_sums, rows, dtype)}, last},
      {OpId::kSub,
       dtype,
       {in(dp, square, dtype), in(row_sums, rows, dtype)},
       {out(ds, square, dtype)},
       plain},
      {OpId::kMul, dtype, {p_in, in(ds, square, dtype)}, {out(prod, square, dtype)}, plain},
      {OpId::kBatchMatMulV2,
       dtype,
       {in(prod, square, dtype), k_in},
       {out(dq, heads, dtype)},
       plain},
      {OpId::kBatchMatMulV2,
       dtype,
       {in(prod, square, dtype), q_in},
       {out(dk, heads, dtype)},
       adj_x}};
  bool failed = !forward.run(gpu);  // o and lse for the gradient; P in s for the composite's
  for (const Call& c : composite_forward) failed |= !c.run(gpu);
  run_against(
      state, gpu, [&] { failed |= !(backward ? grad : forward).run(gpu); },
      [&] {
        for (const Call& c : backward ? composite_backward : composite_forward)
          failed |= !c.run(gpu);
      });
  if (failed) return state.SkipWithError("kernel failed");
  const double flops = 2.0 * 0.5 * scores * kD * (backward ? 4 : 2);
  state.SetLabel(absl::StrCat(dtype_name(dtype), backward ? " backward" : " forward"));
  state.counters["TFLOPs"] = flops / (state.counters["ours_ms"] / 1e3) / 1e12;
  state.counters["composite_TFLOPs"] = flops / (state.counters["baseline_ms"] / 1e3) / 1e12;
  state.counters["speedup"] = state.counters["baseline_ms"] / state.counters["ours_ms"];
}
BENCHMARK(BM_Attention)
    ->ArgNames({"dtype", "backward"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->UseManualTime()
    ->Iterations(20)
    ->Repetitions(3)
    ->Unit(benchmark::kMillisecond);

// BatchMatMulV2 of `batch` x n^3 float32 (dtype 0) or bfloat16 (dtype 1) against raw
// cublasGemmStridedBatchedEx.
void BM_BatchMatMul(benchmark::State& state) {
  BenchGpu& gpu = bench_gpu();
  if (!gpu.error.empty()) return state.SkipWithError(("no GPU: " + gpu.error).c_str());
  const DType dtype = state.range(0) == 0 ? DType::kFloat32 : DType::kBFloat16;
  const int64_t batch = state.range(1), n = state.range(2);
  internal::set_tf32_enabled(false);  // as libtorch's default, for the peer's figure
  const Shape shape = Shape::make({batch, n, n}).value();
  DeviceBuffer a = random_values(dtype, batch * n * n), b = random_values(dtype, batch * n * n);
  DeviceBuffer c = *DeviceBuffer::create(batch * n * n * dtype_size(dtype));
  const TensorArg args[2] = {{a.get(), &shape, dtype}, {b.get(), &shape, dtype}};
  const OpAttrs attrs;
  const KernelContext ctx{args, {c.get(), &shape, dtype}, &attrs, &gpu.state};
  KernelFn fn = gpu.registry.find(OpId::kBatchMatMulV2, DeviceType::kGPU, dtype);
  const cudaDataType_t type = dtype == DType::kFloat32 ? CUDA_R_32F : CUDA_R_16BF;
  const float one = 1, zero = 0;
  const long long stride = n * n;
  bool failed = false;
  run_against(
      state, gpu, [&] { failed |= !fn(ctx).ok(); },
      [&] {  // the math mode the kernel left on the handle, as it sets it
        cublasGemmStridedBatchedEx(gpu.cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
                                   b.get(), type, n, stride, a.get(), type, n, stride, &zero,
                                   c.get(), type, n, stride, batch, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT);
      });
  if (failed) return state.SkipWithError("kernel failed");
  const double flops = 2.0 * batch * n * n * n;
  state.SetLabel(dtype_name(dtype));
  state.counters["TFLOPs"] = flops / (state.counters["ours_ms"] / 1e3) / 1e12;
  state.counters["cublas_TFLOPs"] = flops / (state.counters["baseline_ms"] / 1e3) / 1e12;
  state.counters["fraction_of_cublas"] = state.counters["baseline_ms"] / state.counters["ours_ms"];
}
BENCHMARK(BM_BatchMatMul)
    ->ArgNames({"dtype", "batch", "n"})
    ->Args({0, 64, 512})
    ->Args({1, 64, 512})
    ->UseManualTime()
    ->Iterations(50)
    ->Repetitions(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mt::cuda

BENCHMARK_MAIN();
