// CPU kernels of the convolutions and pools (MT_CONV_OPS; Note [Convolutions] in
// kernels/conv_shape.cc). Each op of float32 (and of the 2-byte floats, widened to float32)
// goes to oneDNN's primitives where it takes the call (onednn_conv.h, Note [When oneDNN runs
// a convolution], Note [oneDNN's pools]); the rest (float64, calls oneDNN does not take), and
// every call in a build without oneDNN or with MT_ONEDNN_CONV=0, run here: products of
// patches (Note [Convolution as a product]) or direct loops over the geometry
// (kernels/conv_geometry.h), split across threads by output element (no two threads write
// one element), accumulating in the element type (float32 for bfloat16 and float16, through
// widened_kernel). NHWC reads filters and writes outputs along the channels, which the
// compiler vectorises; NCHW uses the same loops through the geometry's index functions.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/status.h"
#include "kernels/conv_geometry.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/onednn_conv.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cpu/widened_kernel.h"

namespace mt::cpu {
namespace {

using internal::ConvGeometry;

// Work per thread chunk: about this many multiply-adds.
constexpr int64_t kGrainWork = 1 << 15;

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kGrainWork / std::max<int64_t>(work_per_item, 1));
}

// The input row of output row `o` and window offset `k`, or -1 for padding.
inline int64_t source(int64_t o, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                      int64_t size) {
  const int64_t i = o * stride - pad + k * dilation;
  return i >= 0 && i < size ? i : -1;
}

// The output row that reads input row `i` at window offset `k`, or -1.
inline int64_t reader(int64_t i, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                      int64_t out_size) {
  const int64_t t = i + pad - k * dilation;
  if (t < 0 || t % stride != 0) return -1;
  const int64_t o = t / stride;
  return o < out_size ? o : -1;
}

// Note [Convolution as a product]: where oneDNN does not take a call (Note [When oneDNN
// runs a convolution]), float32 and float64 in NHWC run as GEMMs of the patches. Row p of
// the patch matrix holds, for output position p = (n, oh, ow), the input values its taps
// read in (kh, kw, ic) order (zero for padding); an HWIO filter flattened to
// [filter_h * filter_w * in_c, out_c] has its rows in the same order, and their product is
// the output's [positions, out_c] rows. The patches are made a chunk of positions at a time
// (at most kPatchElements values), so memory stays bounded. Conv2DBackpropFilter is the
// transposed product, patches^T times the output's gradient, summed over the chunks, and
// Conv2DBackpropInput the output's gradient times the filter transposed, added back into
// the input's places (col2im).
constexpr int64_t kPatchElements = int64_t{1} << 22;

// Fills rows [p0, p0 + rows) of the patch matrix (`cols` = filter_h * filter_w * in_c).
template <typename T>
void fill_patches(const ConvGeometry& g, const T* x, int64_t p0, int64_t rows, int64_t cols,
                  T* patches) {
  parallel_for(rows, grain_for(cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t p = p0 + r;
      const int64_t ow = p % g.out_w, oh = p / g.out_w % g.out_h, n = p / (g.out_w * g.out_h);
      T* row = patches + r * cols;
      for (int64_t kh = 0; kh < g.filter_h; ++kh) {
        const int64_t ih = source(oh, kh, g.stride_h, g.dilation_h, g.pad_top, g.in_h);
        for (int64_t kw = 0; kw < g.filter_w; ++kw) {
          const int64_t iw = source(ow, kw, g.stride_w, g.dilation_w, g.pad_left, g.in_w);
          T* dst = row + (kh * g.filter_w + kw) * g.in_c;
          if (ih < 0 || iw < 0) {
            std::fill(dst, dst + g.in_c, T(0));
          } else {
            const T* src = x + g.input_index(n, ih, iw, 0);
            std::copy(src, src + g.in_c, dst);
          }
        }
      }
    }
  });
}

// Whether the GEMM path takes this call: NHWC, float or double, work to share, and patches
// of its smallest chunk (`rows` positions) within kPatchElements.
template <typename T>
bool use_patches(const ConvGeometry& g, int64_t rows) {
  constexpr bool kFloating = std::is_same_v<T, float> || std::is_same_v<T, double>;
  const int64_t cols = g.filter_h * g.filter_w * g.in_c;
  return kFloating && !g.channels_first && g.in_c > 0 && g.out_c > 0 &&
         g.batch * g.out_h * g.out_w > 0 && rows * cols <= kPatchElements;
}

// Note [Padding never multiplies]: the direct loops skip a tap that falls in the padding,
// as TensorFlow's kernels do, so an infinite or NaN weight there adds nothing. The patch
// matrix holds a zero for it instead, and zero times an infinity is NaN; so do oneDNN's
// im2col implementations (its direct JIT kernels skip the tap, but which one runs depends on
// the shape, layout and ISA level). So where some tap falls in the padding and the value that
// multiplies the padding (the filter, or the output's gradient for the filter's gradient) is
// not all finite, the call takes the direct loops. Conv2DBackpropInput's col2im drops the
// padded taps' products itself; oneDNN's never gave NaN there in our tests, but a pass over
// the filter is cheap, so it asks the same of the filter before oneDNN takes the call.
inline bool reads_padding(const ConvGeometry& g) {
  const auto outside = [](int64_t out, int64_t filter, int64_t stride, int64_t dilation,
                          int64_t pad, int64_t in) {
    return out > 0 && (pad > 0 || (out - 1) * stride + (filter - 1) * dilation - pad >= in);
  };
  return outside(g.out_h, g.filter_h, g.stride_h, g.dilation_h, g.pad_top, g.in_h) ||
         outside(g.out_w, g.filter_w, g.stride_w, g.dilation_w, g.pad_left, g.in_w);
}

// Whether no value is an infinity or a NaN, whose exponent bits are all ones: comparing bits
// vectorises, three times faster than std::isfinite (a pass over dy is in every filter
// gradient over padding).
template <typename T>
bool all_finite(const T* v, int64_t n) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  constexpr Bits kExponent = static_cast<Bits>(sizeof(T) == 4 ? 0x7f800000u : 0x7ff0000000000000u);
  std::atomic<bool> finite{true};
  parallel_for(n, 1 << 16, [&](int64_t begin, int64_t end) {
    Bits special = 0;
    for (int64_t i = begin; i < end; ++i) {
      Bits bits;
      std::memcpy(&bits, v + i, sizeof(bits));
      special |= (bits & kExponent) == kExponent;
    }
    if (special != 0) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load(std::memory_order_relaxed);
}

// Whether a product path may take the call (Note [Padding never multiplies]): `multiplier`
// holds the n values that would multiply the padding.
template <typename T>
bool products_allowed(const ConvGeometry& g, const T* multiplier, int64_t n) {
  return !reads_padding(g) || all_finite(multiplier, n);
}

int64_t filter_elements(const ConvGeometry& g) {
  return g.filter_h * g.filter_w * g.in_c * g.out_c;
}

// Whether oneDNN may take a convolution or pool of T: float32 (onednn_conv.h knows the
// rest). The 2-byte floats reach it widened to float32 (Note [When oneDNN runs a
// convolution]).
template <typename T>
bool onednn_may_take() {
  return std::is_same_v<T, float> && onednn_conv_enabled();
}

// Runs the call of `op` through oneDNN (onednn_conv.h) when T is float32; false when it did
// not.
template <typename T>
absl::StatusOr<bool> by_onednn(OpId op, const ConvGeometry& g, const KernelContext& ctx) {
  if constexpr (std::is_same_v<T, float>) {
    absl::InlinedVector<const void*, 3> inputs;
    for (const TensorArg& input : ctx.inputs) inputs.push_back(input.data);
    return onednn_conv(op, g, dtype_of<T>(), inputs, ctx.output.data);
  } else {
    return false;
  }
}

template <typename T>
void conv2d_by_patches(const ConvGeometry& g, const T* x, const T* f, T* y) {
  const int64_t cols = g.filter_h * g.filter_w * g.in_c;
  const int64_t positions = g.batch * g.out_h * g.out_w;
  const int64_t chunk = std::max<int64_t>(1, std::min(positions, kPatchElements / cols));
  std::vector<T> patches(chunk * cols);
  for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
    const int64_t rows = std::min(chunk, positions - p0);
    fill_patches(g, x, p0, rows, cols, patches.data());
    GemmArgs args{rows, g.out_c, cols,  patches.data(),   cols,   false,
                  f,    g.out_c, false, y + p0 * g.out_c, g.out_c};
    run_gemm<T>(args, intra_op_threads());
  }
}

template <typename T>
void conv2d_backprop_filter_by_patches(const ConvGeometry& g, const T* x, const T* dy, T* df) {
  const int64_t cols = g.filter_h * g.filter_w * g.in_c;
  const int64_t positions = g.batch * g.out_h * g.out_w;
  const int64_t chunk = std::max<int64_t>(1, std::min(positions, kPatchElements / cols));
  std::vector<T> patches(chunk * cols);
  std::vector<T> partial;
  for (int64_t p0 = 0; p0 < positions; p0 += chunk) {
    const int64_t rows = std::min(chunk, positions - p0);
    fill_patches(g, x, p0, rows, cols, patches.data());
    T* out = df;
    if (p0 > 0) {
      partial.resize(cols * g.out_c);
      out = partial.data();
    }
    GemmArgs args{cols,    g.out_c, rows, patches.data(), cols, true, dy + p0 * g.out_c,
                  g.out_c, false,   out,  g.out_c};
    run_gemm<T>(args, intra_op_threads());
    if (p0 > 0) {
      for (int64_t i = 0; i < cols * g.out_c; ++i) df[i] += partial[i];
    }
  }
}

// Conv2DBackpropInput as a product: the patches' gradient, dy times the filter transposed,
// added back where each patch came from (col2im). A chunk holds whole images, so that the
// threads, one image each, never add into the same element.
template <typename T>
void conv2d_backprop_input_by_patches(const ConvGeometry& g, const T* f, const T* dy, T* dx) {
  const int64_t cols = g.filter_h * g.filter_w * g.in_c;
  const int64_t per_image = g.out_h * g.out_w;
  const int64_t images = std::max<int64_t>(1, kPatchElements / (per_image * cols));
  std::fill(dx, dx + g.batch * g.in_h * g.in_w * g.in_c, T(0));
  std::vector<T> patches(std::min(images, g.batch) * per_image * cols);
  for (int64_t n0 = 0; n0 < g.batch; n0 += images) {
    const int64_t count = std::min(images, g.batch - n0);
    const int64_t p0 = n0 * per_image;
    GemmArgs args{
        count * per_image, cols, g.out_c, dy + p0 * g.out_c, g.out_c, false, f, g.out_c, true,
        patches.data(),    cols};
    run_gemm<T>(args, intra_op_threads());
    parallel_for(count, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = n0 + i;
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            const T* row = patches.data() + ((i * g.out_h + oh) * g.out_w + ow) * cols;
            for (int64_t kh = 0; kh < g.filter_h; ++kh) {
              const int64_t ih = source(oh, kh, g.stride_h, g.dilation_h, g.pad_top, g.in_h);
              if (ih < 0) continue;
              for (int64_t kw = 0; kw < g.filter_w; ++kw) {
                const int64_t iw = source(ow, kw, g.stride_w, g.dilation_w, g.pad_left, g.in_w);
                if (iw < 0) continue;
                const T* src = row + (kh * g.filter_w + kw) * g.in_c;
                T* dst = dx + g.input_index(n, ih, iw, 0);
                for (int64_t c = 0; c < g.in_c; ++c) dst[c] += src[c];
              }
            }
          }
        }
      }
    });
  }
}

template <typename T>
void conv2d_direct(const ConvGeometry& g, const T* x, const T* f, T* y) {
  const int64_t positions = g.batch * g.out_h * g.out_w;
  parallel_for(
      positions, grain_for(g.filter_h * g.filter_w * g.in_c * g.out_c),
      [&](int64_t begin, int64_t end) {
        std::vector<T> acc(g.out_c);
        for (int64_t p = begin; p < end; ++p) {
          const int64_t ow = p % g.out_w, oh = p / g.out_w % g.out_h, n = p / (g.out_w * g.out_h);
          std::fill(acc.begin(), acc.end(), T(0));
          for (int64_t kh = 0; kh < g.filter_h; ++kh) {
            const int64_t ih = source(oh, kh, g.stride_h, g.dilation_h, g.pad_top, g.in_h);
            if (ih < 0) continue;
            for (int64_t kw = 0; kw < g.filter_w; ++kw) {
              const int64_t iw = source(ow, kw, g.stride_w, g.dilation_w, g.pad_left, g.in_w);
              if (iw < 0) continue;
              for (int64_t ic = 0; ic < g.in_c; ++ic) {
                const T v = x[g.input_index(n, ih, iw, ic)];
                const T* frow = f + g.filter_index(kh, kw, ic, 0);
                T* a = acc.data();
                for (int64_t oc = 0; oc < g.out_c; ++oc) a[oc] += v * frow[oc];
              }
            }
          }
          for (int64_t oc = 0; oc < g.out_c; ++oc) y[g.output_index(n, oh, ow, oc)] = acc[oc];
        }
      });
}

// Conv2D: oneDNN, else the product of patches, else the direct loops.
template <typename T>
absl::Status conv2d_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g, internal::conv_geometry(OpId::kConv2D, *ctx.inputs[0].shape,
                                                              *ctx.inputs[1].shape, *ctx.attrs));
  const T* f = input_data<T>(ctx, 1);
  const bool products = (onednn_may_take<T>() || use_patches<T>(g, /*rows=*/1)) &&
                        products_allowed(g, f, filter_elements(g));
  if (products) {
    MT_ASSIGN_OR_RETURN(const bool done, by_onednn<T>(OpId::kConv2D, g, ctx));
    if (done) return absl::OkStatus();
  }
  const T* x = input_data<T>(ctx, 0);
  T* y = output_data<T>(ctx);
  if (products && use_patches<T>(g, /*rows=*/1)) {
    conv2d_by_patches(g, x, f, y);
  } else {
    conv2d_direct(g, x, f, y);
  }
  return absl::OkStatus();
}

template <typename T>
void conv2d_backprop_input_direct(const ConvGeometry& g, const T* f, const T* dy, T* dx) {
  const int64_t positions = g.batch * g.in_h * g.in_w;
  parallel_for(
      positions, grain_for(g.filter_h * g.filter_w * g.in_c * g.out_c),
      [&](int64_t begin, int64_t end) {
        std::vector<T> acc(g.in_c);
        for (int64_t p = begin; p < end; ++p) {
          const int64_t iw = p % g.in_w, ih = p / g.in_w % g.in_h, n = p / (g.in_w * g.in_h);
          std::fill(acc.begin(), acc.end(), T(0));
          for (int64_t kh = 0; kh < g.filter_h; ++kh) {
            const int64_t oh = reader(ih, kh, g.stride_h, g.dilation_h, g.pad_top, g.out_h);
            if (oh < 0) continue;
            for (int64_t kw = 0; kw < g.filter_w; ++kw) {
              const int64_t ow = reader(iw, kw, g.stride_w, g.dilation_w, g.pad_left, g.out_w);
              if (ow < 0) continue;
              for (int64_t ic = 0; ic < g.in_c; ++ic) {
                const T* frow = f + g.filter_index(kh, kw, ic, 0);
                T sum = 0;
                for (int64_t oc = 0; oc < g.out_c; ++oc) {
                  sum += dy[g.output_index(n, oh, ow, oc)] * frow[oc];
                }
                acc[ic] += sum;
              }
            }
          }
          for (int64_t ic = 0; ic < g.in_c; ++ic) dx[g.input_index(n, ih, iw, ic)] = acc[ic];
        }
      });
}

template <typename T>
absl::Status conv2d_backprop_input_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      internal::conv_geometry(OpId::kConv2DBackpropInput, *ctx.output.shape,
                                              *ctx.inputs[0].shape, *ctx.attrs));
  const T* f = input_data<T>(ctx, 0);
  if (onednn_may_take<T>() && products_allowed(g, f, filter_elements(g))) {
    MT_ASSIGN_OR_RETURN(const bool done, by_onednn<T>(OpId::kConv2DBackpropInput, g, ctx));
    if (done) return absl::OkStatus();
  }
  const T* dy = input_data<T>(ctx, 1);
  T* dx = output_data<T>(ctx);
  if (use_patches<T>(g, /*rows=*/g.out_h * g.out_w)) {  // a chunk holds whole images
    conv2d_backprop_input_by_patches(g, f, dy, dx);
  } else {
    conv2d_backprop_input_direct(g, f, dy, dx);
  }
  return absl::OkStatus();
}

template <typename T>
void conv2d_backprop_filter_direct(const ConvGeometry& g, const T* x, const T* dy, T* df) {
  // One (kh, kw, ic) row of the filter per item: it owns df[kh, kw, ic, :].
  const int64_t rows = g.filter_h * g.filter_w * g.in_c;
  parallel_for(
      rows, grain_for(g.batch * g.out_h * g.out_w * g.out_c), [&](int64_t begin, int64_t end) {
        std::vector<T> acc(g.out_c);
        for (int64_t r = begin; r < end; ++r) {
          const int64_t ic = r % g.in_c, kw = r / g.in_c % g.filter_w,
                        kh = r / (g.in_c * g.filter_w);
          std::fill(acc.begin(), acc.end(), T(0));
          for (int64_t n = 0; n < g.batch; ++n) {
            for (int64_t oh = 0; oh < g.out_h; ++oh) {
              const int64_t ih = source(oh, kh, g.stride_h, g.dilation_h, g.pad_top, g.in_h);
              if (ih < 0) continue;
              for (int64_t ow = 0; ow < g.out_w; ++ow) {
                const int64_t iw = source(ow, kw, g.stride_w, g.dilation_w, g.pad_left, g.in_w);
                if (iw < 0) continue;
                const T v = x[g.input_index(n, ih, iw, ic)];
                T* a = acc.data();
                if (!g.channels_first) {
                  const T* drow = dy + g.output_index(n, oh, ow, 0);
                  for (int64_t oc = 0; oc < g.out_c; ++oc) a[oc] += v * drow[oc];
                } else {
                  for (int64_t oc = 0; oc < g.out_c; ++oc) {
                    a[oc] += v * dy[g.output_index(n, oh, ow, oc)];
                  }
                }
              }
            }
          }
          std::copy(acc.begin(), acc.end(), df + g.filter_index(kh, kw, ic, 0));
        }
      });
}

template <typename T>
absl::Status conv2d_backprop_filter_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      internal::conv_geometry(OpId::kConv2DBackpropFilter, *ctx.inputs[0].shape,
                                              *ctx.output.shape, *ctx.attrs));
  const T* dy = input_data<T>(ctx, 1);
  const bool products = (onednn_may_take<T>() || use_patches<T>(g, /*rows=*/1)) &&
                        products_allowed(g, dy, g.batch * g.out_h * g.out_w * g.out_c);
  if (products) {
    MT_ASSIGN_OR_RETURN(const bool done, by_onednn<T>(OpId::kConv2DBackpropFilter, g, ctx));
    if (done) return absl::OkStatus();
  }
  const T* x = input_data<T>(ctx, 0);
  T* df = output_data<T>(ctx);
  if (products && use_patches<T>(g, /*rows=*/1)) {
    conv2d_backprop_filter_by_patches(g, x, dy, df);
  } else {
    conv2d_backprop_filter_direct(g, x, dy, df);
  }
  return absl::OkStatus();
}

// Calls fn(ih, iw) for each input position of output (oh, ow)'s pool window, row-major;
// the taps over padding are never visited, so a window far larger than the input costs
// no more than the input.
template <typename Fn>
inline void for_window(const ConvGeometry& g, int64_t oh, int64_t ow, Fn fn) {
  const int64_t h0 = oh * g.stride_h - g.pad_top, w0 = ow * g.stride_w - g.pad_left;
  const int64_t h_end = std::min(g.in_h, h0 + g.filter_h);
  const int64_t w_end = std::min(g.in_w, w0 + g.filter_w);
  for (int64_t ih = std::max<int64_t>(h0, 0); ih < h_end; ++ih) {
    for (int64_t iw = std::max<int64_t>(w0, 0); iw < w_end; ++iw) fn(ih, iw);
  }
}

// The first position of the window's maximum (a NaN wins at once), as an input offset;
// -1 for a window that reads no element.
template <typename T>
int64_t window_argmax(const ConvGeometry& g, const T* x, int64_t n, int64_t oh, int64_t ow,
                      int64_t c) {
  int64_t best = -1;
  T best_value = 0;
  bool nan = false;
  for_window(g, oh, ow, [&](int64_t ih, int64_t iw) {
    if (nan) return;
    const int64_t i = g.input_index(n, ih, iw, c);
    const T v = x[i];
    if (std::isnan(static_cast<double>(v))) {
      best = i;
      nan = true;
    } else if (best < 0 || v > best_value) {
      best = i;
      best_value = v;
    }
  });
  return best;
}

// Splits output offset e into (n, oh, ow, c).
inline void output_position(const ConvGeometry& g, int64_t e, int64_t* n, int64_t* oh, int64_t* ow,
                            int64_t* c) {
  if (g.channels_first) {
    *ow = e % g.out_w, *oh = e / g.out_w % g.out_h, *c = e / (g.out_w * g.out_h) % g.out_c,
    *n = e / (g.out_w * g.out_h * g.out_c);
  } else {
    *c = e % g.out_c, *ow = e / g.out_c % g.out_w, *oh = e / (g.out_c * g.out_w) % g.out_h,
    *n = e / (g.out_c * g.out_w * g.out_h);
  }
}

// Runs a pool through oneDNN where it takes the call (Note [oneDNN's pools] in
// onednn/onednn_pool.cc); a max pool only over an input of finite values.
template <typename T>
absl::StatusOr<bool> pool_by_onednn(OpId op, const ConvGeometry& g, const KernelContext& ctx) {
  if (!onednn_may_take<T>()) return false;
  if (op == OpId::kMaxPool || op == OpId::kMaxPoolGrad) {
    if (!all_finite(input_data<T>(ctx, 0), ctx.inputs[0].shape->num_elements())) return false;
  }
  return by_onednn<T>(op, g, ctx);
}

template <typename T>
absl::Status max_pool_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      internal::pool_geometry(OpId::kMaxPool, *ctx.inputs[0].shape, *ctx.attrs));
  MT_ASSIGN_OR_RETURN(const bool done, pool_by_onednn<T>(OpId::kMaxPool, g, ctx));
  if (done) return absl::OkStatus();
  const T* x = input_data<T>(ctx, 0);
  T* y = output_data<T>(ctx);
  const int64_t n_out = g.batch * g.out_h * g.out_w * g.out_c;
  parallel_for(n_out, grain_for(g.filter_h * g.filter_w), [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      int64_t n, oh, ow, c;
      output_position(g, e, &n, &oh, &ow, &c);
      const int64_t i = window_argmax(g, x, n, oh, ow, c);
      y[e] = i < 0 ? -std::numeric_limits<T>::infinity() : x[i];
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status max_pool_grad_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g, internal::pool_geometry(OpId::kMaxPoolGrad,
                                                              *ctx.inputs[0].shape, *ctx.attrs));
  MT_ASSIGN_OR_RETURN(const bool done, pool_by_onednn<T>(OpId::kMaxPoolGrad, g, ctx));
  if (done) return absl::OkStatus();
  const T* x = input_data<T>(ctx, 0);
  const T* dy = input_data<T>(ctx, 2);
  T* dx = output_data<T>(ctx);
  std::fill(dx, dx + ctx.output.shape->num_elements(), T(0));
  // One (n, c) plane per item: its windows write only that plane.
  parallel_for(g.batch * g.in_c, grain_for(g.out_h * g.out_w * g.filter_h * g.filter_w),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   const int64_t c = p % g.in_c, n = p / g.in_c;
                   for (int64_t oh = 0; oh < g.out_h; ++oh) {
                     for (int64_t ow = 0; ow < g.out_w; ++ow) {
                       const int64_t i = window_argmax(g, x, n, oh, ow, c);
                       if (i >= 0) dx[i] += dy[g.output_index(n, oh, ow, c)];
                     }
                   }
                 }
               });
  return absl::OkStatus();
}

template <typename T>
absl::Status avg_pool_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      internal::pool_geometry(OpId::kAvgPool, *ctx.inputs[0].shape, *ctx.attrs));
  MT_ASSIGN_OR_RETURN(const bool done, pool_by_onednn<T>(OpId::kAvgPool, g, ctx));
  if (done) return absl::OkStatus();
  const T* x = input_data<T>(ctx, 0);
  T* y = output_data<T>(ctx);
  const int64_t n_out = g.batch * g.out_h * g.out_w * g.out_c;
  parallel_for(n_out, grain_for(g.filter_h * g.filter_w), [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      int64_t n, oh, ow, c;
      output_position(g, e, &n, &oh, &ow, &c);
      T sum = 0;
      int64_t count = 0;
      for_window(g, oh, ow, [&](int64_t ih, int64_t iw) {
        sum += x[g.input_index(n, ih, iw, c)];
        ++count;
      });
      y[e] = count > 0 ? sum / static_cast<T>(count) : T(0);
    }
  });
  return absl::OkStatus();
}

template <typename T>
absl::Status avg_pool_grad_kernel(const KernelContext& ctx) {
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      internal::pool_geometry(OpId::kAvgPoolGrad, *ctx.output.shape, *ctx.attrs));
  MT_ASSIGN_OR_RETURN(const bool done, pool_by_onednn<T>(OpId::kAvgPoolGrad, g, ctx));
  if (done) return absl::OkStatus();
  const T* dy = input_data<T>(ctx, 0);
  T* dx = output_data<T>(ctx);
  std::fill(dx, dx + ctx.output.shape->num_elements(), T(0));
  parallel_for(g.batch * g.in_c, grain_for(g.out_h * g.out_w * g.filter_h * g.filter_w),
               [&](int64_t begin, int64_t end) {
                 for (int64_t p = begin; p < end; ++p) {
                   const int64_t c = p % g.in_c, n = p / g.in_c;
                   for (int64_t oh = 0; oh < g.out_h; ++oh) {
                     for (int64_t ow = 0; ow < g.out_w; ++ow) {
                       int64_t count = 0;
                       for_window(g, oh, ow, [&](int64_t, int64_t) { ++count; });
                       if (count == 0) continue;
                       const T share = dy[g.output_index(n, oh, ow, c)] / static_cast<T>(count);
                       for_window(g, oh, ow, [&](int64_t ih, int64_t iw) {
                         dx[g.input_index(n, ih, iw, c)] += share;
                       });
                     }
                   }
                 }
               });
  return absl::OkStatus();
}

// Registers kernel<T> for float32 and float64 and its widened float32 form for the half
// types (Note [Half kernels on the CPU] in widened_kernel.h).
#define MT_FLOAT_KERNELS(op, kernel)                                 \
  add_kernels(registry, op, FloatTypes{}, [](auto tag) -> KernelFn { \
    using T = typename decltype(tag)::type;                          \
    if constexpr (kIsHalf<T>) {                                      \
      return &widened_kernel<T, &kernel<float>>;                     \
    } else {                                                         \
      return &kernel<T>;                                             \
    }                                                                \
  })

}  // namespace

MT_OP_KERNELS(Conv2D) { return MT_FLOAT_KERNELS(OpId::kConv2D, conv2d_kernel); }
MT_OP_KERNELS(Conv2DBackpropInput) {
  return MT_FLOAT_KERNELS(OpId::kConv2DBackpropInput, conv2d_backprop_input_kernel);
}
MT_OP_KERNELS(Conv2DBackpropFilter) {
  return MT_FLOAT_KERNELS(OpId::kConv2DBackpropFilter, conv2d_backprop_filter_kernel);
}
MT_OP_KERNELS(MaxPool) { return MT_FLOAT_KERNELS(OpId::kMaxPool, max_pool_kernel); }
MT_OP_KERNELS(MaxPoolGrad) { return MT_FLOAT_KERNELS(OpId::kMaxPoolGrad, max_pool_grad_kernel); }
MT_OP_KERNELS(AvgPool) { return MT_FLOAT_KERNELS(OpId::kAvgPool, avg_pool_kernel); }
MT_OP_KERNELS(AvgPoolGrad) { return MT_FLOAT_KERNELS(OpId::kAvgPoolGrad, avg_pool_grad_kernel); }

}  // namespace mt::cpu
