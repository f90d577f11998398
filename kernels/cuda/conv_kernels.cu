// GPU kernels of Conv2D, its two backprops and the 2-D pools (the rows of MT_CONV_OPS), direct
// loops over the geometry of kernels/conv_geometry.h in NHWC or NCHW. Every kernel is a gather
// (one thread, or for the filter gradient one block, per element written, which it writes
// once: no atomics, so results are deterministic), accumulates in float32 for the 2-byte
// floats (float64 in float64) and rounds once (Note [Half arithmetic on the GPU]). Speed is
// not the aim here: Conv2D and its backprops go to cuDNN first, and these kernels run what
// it cannot take (Note [When cuDNN runs a convolution] in cudnn/cudnn_conv.cc).
#include <cmath>

#include "kernels/conv_geometry.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cudnn/cudnn_conv.h"
#include "kernels/cuda/half_math.h"
#include "kernels/cuda/launch.h"

namespace mt::cuda {
namespace {

using internal::ConvGeometry;

// An element's position in a [batch, h, w, c] tensor of either data format.
struct Coord {
  int64_t n, h, w, c;
};

// Returns the position of flat index `i` of a [batch, h, w, c] tensor in g's data format.
__device__ __forceinline__ Coord coord_of(const ConvGeometry& g, int64_t i, int64_t h, int64_t w,
                                          int64_t c) {
  Coord p;
  if (g.channels_first) {
    p.w = i % w, i /= w, p.h = i % h, i /= h, p.c = i % c, p.n = i / c;
  } else {
    p.c = i % c, i /= c, p.w = i % w, i /= w, p.h = i % h, p.n = i / h;
  }
  return p;
}

// Device copies of ConvGeometry's input_index, output_index and filter_index (host-only
// there); the same formulas.
__device__ __forceinline__ int64_t input_at(const ConvGeometry& g, int64_t n, int64_t h, int64_t w,
                                            int64_t c) {
  return g.channels_first ? ((n * g.in_c + c) * g.in_h + h) * g.in_w + w
                          : ((n * g.in_h + h) * g.in_w + w) * g.in_c + c;
}
__device__ __forceinline__ int64_t output_at(const ConvGeometry& g, int64_t n, int64_t h, int64_t w,
                                             int64_t c) {
  return g.channels_first ? ((n * g.out_c + c) * g.out_h + h) * g.out_w + w
                          : ((n * g.out_h + h) * g.out_w + w) * g.out_c + c;
}
__device__ __forceinline__ int64_t filter_at(const ConvGeometry& g, int64_t kh, int64_t kw,
                                             int64_t ic, int64_t oc) {
  return ((kh * g.filter_w + kw) * g.in_c + ic) * g.out_c + oc;
}

// Returns the input row (column) that output row oh (column ow) reads through tap kh (kw),
// or -1 when it is padding.
__device__ __forceinline__ int64_t row_tap(const ConvGeometry& g, int64_t oh, int64_t kh) {
  const int64_t ih = oh * g.stride_h - g.pad_top + kh * g.dilation_h;
  return ih >= 0 && ih < g.in_h ? ih : -1;
}
__device__ __forceinline__ int64_t col_tap(const ConvGeometry& g, int64_t ow, int64_t kw) {
  const int64_t iw = ow * g.stride_w - g.pad_left + kw * g.dilation_w;
  return iw >= 0 && iw < g.in_w ? iw : -1;
}

// The inverse: returns the output row (column) whose tap kh (kw) reads input row ih (column
// iw), or -1 when none does.
__device__ __forceinline__ int64_t row_window(const ConvGeometry& g, int64_t ih, int64_t kh) {
  const int64_t t = ih + g.pad_top - kh * g.dilation_h;
  return t >= 0 && t % g.stride_h == 0 && t / g.stride_h < g.out_h ? t / g.stride_h : -1;
}
__device__ __forceinline__ int64_t col_window(const ConvGeometry& g, int64_t iw, int64_t kw) {
  const int64_t t = iw + g.pad_left - kw * g.dilation_w;
  return t >= 0 && t % g.stride_w == 0 && t / g.stride_w < g.out_w ? t / g.stride_w : -1;
}

// A pool's taps (its dilation is 1) that read inside the input from output row o: those in
// [tap_begin, tap_end); the loops below take no more steps than the input has rows, whatever
// the window's size.
__device__ __forceinline__ int64_t tap_begin(int64_t o, int64_t stride, int64_t pad) {
  return max(int64_t{0}, pad - o * stride);
}
__device__ __forceinline__ int64_t tap_end(int64_t o, int64_t stride, int64_t pad, int64_t in,
                                           int64_t window) {
  return min(window, in + pad - o * stride);
}
// The taps through which some output row reads input row i: [window_tap_begin,
// window_tap_end), a superset filtered by row_window / col_window.
__device__ __forceinline__ int64_t window_tap_begin(int64_t i, int64_t stride, int64_t pad,
                                                    int64_t out) {
  return max(int64_t{0}, i + pad - (out - 1) * stride);
}
__device__ __forceinline__ int64_t window_tap_end(int64_t i, int64_t pad, int64_t window) {
  return min(window, i + pad + 1);
}

__device__ __forceinline__ int64_t first_thread() {
  return int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t thread_stride() { return int64_t{gridDim.x} * blockDim.x; }

// out[n, oh, ow, oc] = sum of in[n, ih, iw, ic] * filter[kh, kw, ic, oc] over the taps inside
// the input; one thread per output element.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    conv2d_kernel(const T* __restrict__ x, const T* __restrict__ f, T* __restrict__ y,
                  ConvGeometry g, int64_t count) {
  const int64_t x_step = g.channels_first ? g.in_h * g.in_w : 1;  // between channels
  for (int64_t i = first_thread(); i < count; i += thread_stride()) {
    const Coord o = coord_of(g, i, g.out_h, g.out_w, g.out_c);
    Compute<T> acc = 0;
    for (int64_t kh = 0; kh < g.filter_h; ++kh) {
      const int64_t ih = row_tap(g, o.h, kh);
      if (ih < 0) continue;
      for (int64_t kw = 0; kw < g.filter_w; ++kw) {
        const int64_t iw = col_tap(g, o.w, kw);
        if (iw < 0) continue;
        const T* xp = x + input_at(g, o.n, ih, iw, 0);
        const T* fp = f + filter_at(g, kh, kw, 0, o.c);
        for (int64_t ic = 0; ic < g.in_c; ++ic) {
          acc += to_compute(xp[ic * x_step]) * to_compute(fp[ic * g.out_c]);
        }
      }
    }
    y[i] = from_compute<T>(acc);
  }
}

// dx[n, ih, iw, ic] = sum of dy[n, oh, ow, oc] * filter[kh, kw, ic, oc] over the (oh, ow)
// whose taps (kh, kw) read (ih, iw); one thread per dx element.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    conv2d_input_grad(const T* __restrict__ f, const T* __restrict__ dy, T* __restrict__ dx,
                      ConvGeometry g, int64_t count) {
  const int64_t dy_step = g.channels_first ? g.out_h * g.out_w : 1;  // between channels
  for (int64_t i = first_thread(); i < count; i += thread_stride()) {
    const Coord p = coord_of(g, i, g.in_h, g.in_w, g.in_c);
    Compute<T> acc = 0;
    for (int64_t kh = 0; kh < g.filter_h; ++kh) {
      const int64_t oh = row_window(g, p.h, kh);
      if (oh < 0) continue;
      for (int64_t kw = 0; kw < g.filter_w; ++kw) {
        const int64_t ow = col_window(g, p.w, kw);
        if (ow < 0) continue;
        const T* dyp = dy + output_at(g, p.n, oh, ow, 0);
        const T* fp = f + filter_at(g, kh, kw, p.c, 0);
        for (int64_t oc = 0; oc < g.out_c; ++oc) {
          acc += to_compute(dyp[oc * dy_step]) * to_compute(fp[oc]);
        }
      }
    }
    dx[i] = from_compute<T>(acc);
  }
}

// Returns the sum of v over the kThreads threads of the block, to every thread; `partial`
// holds kThreads / 32 values. Every thread of the block must call it.
template <typename C>
__device__ __forceinline__ C block_sum(C v, C* partial) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  __syncthreads();  // the previous call has read `partial`
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = partial[0];
#pragma unroll
  for (int w = 1; w < kThreads / 32; ++w) v += partial[w];
  return v;
}

// df[kh, kw, ic, oc] = sum of x[n, ih, iw, ic] * dy[n, oh, ow, oc] over n, oh, ow with the
// tap inside the input; one block per filter element, reduced in the block.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    conv2d_filter_grad(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ df,
                       ConvGeometry g, int64_t count) {
  using C = Compute<T>;
  __shared__ C partial[kThreads / 32];
  const int64_t positions = g.batch * g.out_h * g.out_w;
  for (int64_t e = blockIdx.x; e < count; e += gridDim.x) {  // HWIO: e is the offset in df
    const int64_t oc = e % g.out_c, ic = e / g.out_c % g.in_c;
    const int64_t kw = e / (g.out_c * g.in_c) % g.filter_w;
    const int64_t kh = e / (g.out_c * g.in_c * g.filter_w);
    C acc = 0;
    for (int64_t m = threadIdx.x; m < positions; m += kThreads) {
      const int64_t ow = m % g.out_w, oh = m / g.out_w % g.out_h, n = m / (g.out_w * g.out_h);
      const int64_t ih = row_tap(g, oh, kh), iw = col_tap(g, ow, kw);
      if (ih < 0 || iw < 0) continue;
      acc +=
          to_compute(x[input_at(g, n, ih, iw, ic)]) * to_compute(dy[output_at(g, n, oh, ow, oc)]);
    }
    acc = block_sum(acc, partial);
    if (threadIdx.x == 0) df[e] = from_compute<T>(acc);
  }
}

// A pool window's maximum and its first position in row-major (kh, kw) order; h is -1 for a
// window wholly in the padding.
template <typename C>
struct WindowMax {
  C value;
  int64_t h, w;
};

// Returns the maximum of window (oh, ow) of channel (n, c): the first NaN when there is one
// (as the CPU), else the first of the equal greatest values. Padding never wins.
template <typename T>
__device__ __forceinline__ WindowMax<Compute<T>> window_max(const T* __restrict__ x,
                                                            const ConvGeometry& g, int64_t n,
                                                            int64_t oh, int64_t ow, int64_t c) {
  using C = Compute<T>;
  WindowMax<C> best = {static_cast<C>(-INFINITY), -1, -1};
  const int64_t kh_end = tap_end(oh, g.stride_h, g.pad_top, g.in_h, g.filter_h);
  const int64_t kw_end = tap_end(ow, g.stride_w, g.pad_left, g.in_w, g.filter_w);
  for (int64_t kh = tap_begin(oh, g.stride_h, g.pad_top); kh < kh_end; ++kh) {
    const int64_t ih = row_tap(g, oh, kh);
    if (ih < 0) continue;
    for (int64_t kw = tap_begin(ow, g.stride_w, g.pad_left); kw < kw_end; ++kw) {
      const int64_t iw = col_tap(g, ow, kw);
      if (iw < 0) continue;
      const C v = to_compute(x[input_at(g, n, ih, iw, c)]);
      const bool best_is_nan = best.value != best.value;
      if (best.h < 0 || (!best_is_nan && (v > best.value || v != v))) best = {v, ih, iw};
    }
  }
  return best;
}

// Returns how many positions of window (oh, ow) lie inside the input.
__device__ __forceinline__ int64_t window_count(const ConvGeometry& g, int64_t oh, int64_t ow) {
  const int64_t rows =
      tap_end(oh, g.stride_h, g.pad_top, g.in_h, g.filter_h) - tap_begin(oh, g.stride_h, g.pad_top);
  const int64_t cols = tap_end(ow, g.stride_w, g.pad_left, g.in_w, g.filter_w) -
                       tap_begin(ow, g.stride_w, g.pad_left);
  return rows > 0 && cols > 0 ? rows * cols : 0;
}

// One thread per output element; a window wholly in the padding gives -Inf.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    max_pool_kernel(const T* __restrict__ x, T* __restrict__ y, ConvGeometry g, int64_t count) {
  for (int64_t i = first_thread(); i < count; i += thread_stride()) {
    const Coord o = coord_of(g, i, g.out_h, g.out_w, g.out_c);
    const WindowMax<Compute<T>> m = window_max(x, g, o.n, o.h, o.w, o.c);
    // The element itself, not m.value rounded back: a NaN keeps its payload, as on the CPU.
    y[i] = m.h < 0 ? from_compute<T>(m.value) : x[input_at(g, o.n, m.h, m.w, o.c)];
  }
}

// One thread per input element: the sum of dy over the windows whose first maximum it is.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    max_pool_grad(const T* __restrict__ x, const T* __restrict__ dy, T* __restrict__ dx,
                  ConvGeometry g, int64_t count) {
  for (int64_t i = first_thread(); i < count; i += thread_stride()) {
    const Coord p = coord_of(g, i, g.in_h, g.in_w, g.in_c);
    Compute<T> acc = 0;
    const int64_t kh_end = window_tap_end(p.h, g.pad_top, g.filter_h);
    const int64_t kw_end = window_tap_end(p.w, g.pad_left, g.filter_w);
    for (int64_t kh = window_tap_begin(p.h, g.stride_h, g.pad_top, g.out_h); kh < kh_end; ++kh) {
      const int64_t oh = row_window(g, p.h, kh);
      if (oh < 0) continue;
      for (int64_t kw = window_tap_begin(p.w, g.stride_w, g.pad_left, g.out_w); kw < kw_end; ++kw) {
        const int64_t ow = col_window(g, p.w, kw);
        if (ow < 0) continue;
        const WindowMax<Compute<T>> m = window_max(x, g, p.n, oh, ow, p.c);
        if (m.h == p.h && m.w == p.w) acc += to_compute(dy[output_at(g, p.n, oh, ow, p.c)]);
      }
    }
    dx[i] = from_compute<T>(acc);
  }
}

// One thread per output element: the mean over the window's positions inside the input (0
// for a window wholly in the padding).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    avg_pool_kernel(const T* __restrict__ x, T* __restrict__ y, ConvGeometry g, int64_t count) {
  using C = Compute<T>;
  for (int64_t i = first_thread(); i < count; i += thread_stride()) {
    const Coord o = coord_of(g, i, g.out_h, g.out_w, g.out_c);
    C sum = 0;
    const int64_t kh_end = tap_end(o.h, g.stride_h, g.pad_top, g.in_h, g.filter_h);
    const int64_t kw_end = tap_end(o.w, g.stride_w, g.pad_left, g.in_w, g.filter_w);
    for (int64_t kh = tap_begin(o.h, g.stride_h, g.pad_top); kh < kh_end; ++kh) {
      const int64_t ih = row_tap(g, o.h, kh);
      if (ih < 0) continue;
      for (int64_t kw = tap_begin(o.w, g.stride_w, g.pad_left); kw < kw_end; ++kw) {
        const int64_t iw = col_tap(g, o.w, kw);
        if (iw >= 0) sum += to_compute(x[input_at(g, o.n, ih, iw, o.c)]);
      }
    }
    const int64_t n = window_count(g, o.h, o.w);
    y[i] = from_compute<T>(n > 0 ? sum / static_cast<C>(n) : C(0));
  }
}

// One thread per input element: the sum of dy / count over the windows holding it.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    avg_pool_grad(const T* __restrict__ dy, T* __restrict__ dx, ConvGeometry g, int64_t count) {
  using C = Compute<T>;
  for (int64_t i = first_thread(); i < count; i += thread_stride()) {
    const Coord p = coord_of(g, i, g.in_h, g.in_w, g.in_c);
    C acc = 0;
    const int64_t kh_end = window_tap_end(p.h, g.pad_top, g.filter_h);
    const int64_t kw_end = window_tap_end(p.w, g.pad_left, g.filter_w);
    for (int64_t kh = window_tap_begin(p.h, g.stride_h, g.pad_top, g.out_h); kh < kh_end; ++kh) {
      const int64_t oh = row_window(g, p.h, kh);
      if (oh < 0) continue;
      for (int64_t kw = window_tap_begin(p.w, g.stride_w, g.pad_left, g.out_w); kw < kw_end; ++kw) {
        const int64_t ow = col_window(g, p.w, kw);
        if (ow < 0) continue;
        const C n = static_cast<C>(window_count(g, oh, ow));
        acc += to_compute(dy[output_at(g, p.n, oh, ow, p.c)]) / n;
      }
    }
    dx[i] = from_compute<T>(acc);
  }
}

template <typename T>
const T* input(const KernelContext& ctx, int k) {
  return static_cast<const T*>(ctx.inputs[k].data);
}
template <typename T>
T* output(const KernelContext& ctx) {
  return static_cast<T*>(ctx.output.data);
}

// Enqueues `kernel` with one thread per element of the output (nothing when it is empty);
// its last two parameters are the geometry and the element count.
template <typename... Params, typename... Args>
absl::Status launch_per_element(OpId op, const KernelContext& ctx, const ConvGeometry& g,
                                void (*kernel)(Params...), Args... args) {
  const int64_t count = ctx.output.shape->num_elements();
  if (count == 0) return absl::OkStatus();
  return launch(op, gpu_state(ctx), grid_for(count, kThreads), kThreads, kernel, args..., g, count);
}

// Runs `pass` through cuDNN when it takes the call (inputs 0 and 1, the output); true if it did.
absl::StatusOr<bool> by_cudnn(ConvPass pass, const KernelContext& ctx, const ConvGeometry& g) {
  return cudnn_conv(pass, gpu_state(ctx), g, ctx.output.dtype, ctx.inputs[0].data,
                    ctx.inputs[1].data, ctx.output.data);
}

template <typename T>
absl::Status run_conv2d(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kConv2D;
  MT_ASSIGN_OR_RETURN(
      const ConvGeometry g,
      internal::conv_geometry(kOp, *ctx.inputs[0].shape, *ctx.inputs[1].shape, *ctx.attrs));
  MT_ASSIGN_OR_RETURN(const bool done, by_cudnn(ConvPass::kForward, ctx, g));
  if (done) return absl::OkStatus();
  return launch_per_element(kOp, ctx, g, &conv2d_kernel<T>, input<T>(ctx, 0), input<T>(ctx, 1),
                            output<T>(ctx));
}

// Inputs (filter, out_backprop); the output has the input's shape (attrs.dims).
template <typename T>
absl::Status run_conv2d_input_grad(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kConv2DBackpropInput;
  MT_ASSIGN_OR_RETURN(
      const ConvGeometry g,
      internal::conv_geometry(kOp, *ctx.output.shape, *ctx.inputs[0].shape, *ctx.attrs));
  MT_ASSIGN_OR_RETURN(const bool done, by_cudnn(ConvPass::kBackwardInput, ctx, g));
  if (done) return absl::OkStatus();
  return launch_per_element(kOp, ctx, g, &conv2d_input_grad<T>, input<T>(ctx, 0), input<T>(ctx, 1),
                            output<T>(ctx));
}

// Inputs (input, out_backprop); the output has the filter's shape (attrs.dims).
template <typename T>
absl::Status run_conv2d_filter_grad(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kConv2DBackpropFilter;
  MT_ASSIGN_OR_RETURN(const ConvGeometry g, internal::conv_geometry(kOp, *ctx.inputs[0].shape,
                                                                    *ctx.output.shape, *ctx.attrs));
  const int64_t count = ctx.output.shape->num_elements();
  if (count == 0) return absl::OkStatus();
  MT_ASSIGN_OR_RETURN(const bool done, by_cudnn(ConvPass::kBackwardFilter, ctx, g));
  if (done) return absl::OkStatus();
  return launch(kOp, gpu_state(ctx), grid_for(count, 1), kThreads, &conv2d_filter_grad<T>,
                input<T>(ctx, 0), input<T>(ctx, 1), output<T>(ctx), g, count);
}

template <typename T>
absl::Status run_max_pool(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kMaxPool;
  MT_ASSIGN_OR_RETURN(const ConvGeometry g,
                      internal::pool_geometry(kOp, *ctx.inputs[0].shape, *ctx.attrs));
  return launch_per_element(kOp, ctx, g, &max_pool_kernel<T>, input<T>(ctx, 0), output<T>(ctx));
}

// Inputs (orig_input, orig_output, grad); the windows' maxima are found again in orig_input.
template <typename T>
absl::Status run_max_pool_grad(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kMaxPoolGrad;
  MT_ASSIGN_OR_RETURN(const ConvGeometry g,
                      internal::pool_geometry(kOp, *ctx.inputs[0].shape, *ctx.attrs));
  return launch_per_element(kOp, ctx, g, &max_pool_grad<T>, input<T>(ctx, 0), input<T>(ctx, 2),
                            output<T>(ctx));
}

template <typename T>
absl::Status run_avg_pool(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kAvgPool;
  MT_ASSIGN_OR_RETURN(const ConvGeometry g,
                      internal::pool_geometry(kOp, *ctx.inputs[0].shape, *ctx.attrs));
  return launch_per_element(kOp, ctx, g, &avg_pool_kernel<T>, input<T>(ctx, 0), output<T>(ctx));
}

// Input (grad); the output has the original input's shape (attrs.dims).
template <typename T>
absl::Status run_avg_pool_grad(const KernelContext& ctx) {
  constexpr OpId kOp = OpId::kAvgPoolGrad;
  MT_ASSIGN_OR_RETURN(const ConvGeometry g,
                      internal::pool_geometry(kOp, *ctx.output.shape, *ctx.attrs));
  return launch_per_element(kOp, ctx, g, &avg_pool_grad<T>, input<T>(ctx, 0), output<T>(ctx));
}

}  // namespace

// Registers run<T> as the kernel of row `Name` for the float dtypes.
#define MT_CONV_GPU_KERNELS(Name, run)                                                       \
  MT_OP_KERNELS(Name) {                                                                      \
    return add_gpu_kernels(registry, OpId::k##Name, FloatTypes{}, [](auto tag) -> KernelFn { \
      return &run<typename decltype(tag)::type>;                                             \
    });                                                                                      \
  }
MT_CONV_GPU_KERNELS(Conv2D, run_conv2d)
MT_CONV_GPU_KERNELS(Conv2DBackpropInput, run_conv2d_input_grad)
MT_CONV_GPU_KERNELS(Conv2DBackpropFilter, run_conv2d_filter_grad)
MT_CONV_GPU_KERNELS(MaxPool, run_max_pool)
MT_CONV_GPU_KERNELS(MaxPoolGrad, run_max_pool_grad)
MT_CONV_GPU_KERNELS(AvgPool, run_avg_pool)
MT_CONV_GPU_KERNELS(AvgPoolGrad, run_avg_pool_grad)
#undef MT_CONV_GPU_KERNELS

}  // namespace mt::cuda
