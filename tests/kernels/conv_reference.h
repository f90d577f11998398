#pragma once
// A double-precision reference of the convolutions and pools (MT_CONV_OPS) for the kernel
// tests (conv_kernels_test.cc, pool_kernels_test.cc): loops over the definition (Note
// [Convolutions] in kernels/conv_shape.cc), not over the kernels' code, and the helpers that
// make tensors of its arrays in either data format and compare a kernel's output with it
// within the error its dtype allows.
//
//   const Array4 x = random_array(rng, {2, 7, 5, 3}, dtype);  // logical N, H, W, C
//   const absl::StatusOr<HostTensor> y =
//       run_cpu(OpId::kAvgPool, {tensor_of(x, dtype, nchw)}, attrs_of(w, nchw, /*pool=*/true));
//   expect_near(y, avg_pool_ref(x, w), avg_pool_ref(abs_of(x), w), w.kh * w.kw, nchw);

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/onednn_conv.h"
#include "tests/kernels/kernel_test_util.h"

namespace mt::conv_test {

// ---------------------------------------------------------------------------------------
// The reference.

// A window's spatial attributes: its size (a filter's, or ksize), strides, dilations and
// padding (the four explicit pads with Padding::kExplicit).
struct Window {
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  int64_t dh = 1, dw = 1;
  Padding padding = Padding::kValid;
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

// A 4-D array in logical order: (N, H, W, C) for an image, (H, W, I, O) for a filter.
struct Array4 {
  int64_t d[4] = {0, 0, 0, 0};
  std::vector<double> v;

  static Array4 zeros(int64_t a, int64_t b, int64_t c, int64_t e) {
    Array4 x{{a, b, c, e}, {}};
    x.v.assign(a * b * c * e, 0.0);
    return x;
  }
  double& at(int64_t i, int64_t j, int64_t k, int64_t l) {
    return v[((i * d[1] + j) * d[2] + k) * d[3] + l];
  }
  double at(int64_t i, int64_t j, int64_t k, int64_t l) const {
    return v[((i * d[1] + j) * d[2] + k) * d[3] + l];
  }
};

inline Array4 abs_of(Array4 x) {
  for (double& e : x.v) e = std::fabs(e);
  return x;
}

// The output size and leading padding of one spatial dimension, by the formulas of Note
// [Convolutions]: VALID ceil((in - (k - 1) d) / s); SAME ceil(in / s) with the total padding
// split, the extra one after; EXPLICIT as padded.
inline std::pair<int64_t, int64_t> spatial(int64_t in, int64_t k, int64_t s, int64_t d, Padding p,
                                           int64_t before, int64_t after) {
  const int64_t effective = (k - 1) * d + 1;
  if (p == Padding::kValid) return {(in - effective + s) / s, 0};
  if (p == Padding::kExplicit) return {(in + before + after - effective) / s + 1, before};
  const int64_t out = (in + s - 1) / s;
  const int64_t total = std::max<int64_t>((out - 1) * s + effective - in, 0);
  return {out, total / 2};
}

// One read of a window: output (oh, ow) reads input (ih, iw) at window offset (kh, kw).
struct Tap {
  int64_t oh, ow, kh, kw, ih, iw;
};

// The output size and every read inside the input, by output position then window offset
// in row-major order: output row oh reads input row oh * stride - pad_top + kh * dilation.
struct Plan {
  int64_t out_h = 0, out_w = 0;
  std::vector<Tap> taps;
};

inline Plan plan_of(int64_t in_h, int64_t in_w, const Window& w) {
  Plan p;
  int64_t top, left;
  std::tie(p.out_h, top) = spatial(in_h, w.kh, w.sh, w.dh, w.padding, w.top, w.bottom);
  std::tie(p.out_w, left) = spatial(in_w, w.kw, w.sw, w.dw, w.padding, w.left, w.right);
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      for (int64_t kh = 0; kh < w.kh; ++kh) {
        for (int64_t kw = 0; kw < w.kw; ++kw) {
          const int64_t ih = oh * w.sh - top + kh * w.dh, iw = ow * w.sw - left + kw * w.dw;
          if (ih >= 0 && ih < in_h && iw >= 0 && iw < in_w)
            p.taps.push_back({oh, ow, kh, kw, ih, iw});
        }
      }
    }
  }
  return p;
}

// y[n, oh, ow, o] = sum over the taps and input channels of x[n, ih, iw, i] f[kh, kw, i, o].
inline Array4 conv_ref(const Array4& x, const Array4& f, const Window& w) {
  const Plan p = plan_of(x.d[1], x.d[2], w);
  Array4 y = Array4::zeros(x.d[0], p.out_h, p.out_w, f.d[3]);
  for (int64_t n = 0; n < x.d[0]; ++n) {
    for (const Tap& t : p.taps) {
      for (int64_t i = 0; i < f.d[2]; ++i) {
        for (int64_t o = 0; o < f.d[3]; ++o) {
          y.at(n, t.oh, t.ow, o) += x.at(n, t.ih, t.iw, i) * f.at(t.kh, t.kw, i, o);
        }
      }
    }
  }
  return y;
}

// The gradient of conv_ref's input: each product's dy scattered back to the input it read.
inline Array4 conv_input_ref(const Array4& f, const Array4& dy, const Window& w, int64_t in_h,
                             int64_t in_w) {
  const Plan p = plan_of(in_h, in_w, w);
  Array4 dx = Array4::zeros(dy.d[0], in_h, in_w, f.d[2]);
  for (int64_t n = 0; n < dy.d[0]; ++n) {
    for (const Tap& t : p.taps) {
      for (int64_t i = 0; i < f.d[2]; ++i) {
        for (int64_t o = 0; o < f.d[3]; ++o) {
          dx.at(n, t.ih, t.iw, i) += dy.at(n, t.oh, t.ow, o) * f.at(t.kh, t.kw, i, o);
        }
      }
    }
  }
  return dx;
}

// The gradient of conv_ref's filter.
inline Array4 conv_filter_ref(const Array4& x, const Array4& dy, const Window& w) {
  const Plan p = plan_of(x.d[1], x.d[2], w);
  Array4 df = Array4::zeros(w.kh, w.kw, x.d[3], dy.d[3]);
  for (int64_t n = 0; n < x.d[0]; ++n) {
    for (const Tap& t : p.taps) {
      for (int64_t i = 0; i < x.d[3]; ++i) {
        for (int64_t o = 0; o < dy.d[3]; ++o) {
          df.at(t.kh, t.kw, i, o) += x.at(n, t.ih, t.iw, i) * dy.at(n, t.oh, t.ow, o);
        }
      }
    }
  }
  return df;
}

// The first tap (row-major) of each window holding its maximum, per (n, oh, ow, c); -1
// for a window that reads nothing.
inline std::vector<int64_t> argmax_ref(const Array4& x, const Plan& p) {
  const int64_t planes = x.d[0] * x.d[3];
  std::vector<int64_t> best(planes * p.out_h * p.out_w, -1);
  auto slot = [&](int64_t n, const Tap& t, int64_t c) {
    return ((n * p.out_h + t.oh) * p.out_w + t.ow) * x.d[3] + c;
  };
  for (int64_t n = 0; n < x.d[0]; ++n) {
    for (size_t k = 0; k < p.taps.size(); ++k) {
      const Tap& t = p.taps[k];
      for (int64_t c = 0; c < x.d[3]; ++c) {
        int64_t& b = best[slot(n, t, c)];
        const Tap& bt = p.taps[b < 0 ? 0 : b];
        if (b < 0 || x.at(n, t.ih, t.iw, c) > x.at(n, bt.ih, bt.iw, c)) b = k;
      }
    }
  }
  return best;
}

inline Array4 max_pool_ref(const Array4& x, const Window& w) {
  const Plan p = plan_of(x.d[1], x.d[2], w);
  const std::vector<int64_t> best = argmax_ref(x, p);
  Array4 y = Array4::zeros(x.d[0], p.out_h, p.out_w, x.d[3]);
  for (size_t e = 0; e < y.v.size(); ++e) {
    const Tap& t = p.taps[best[e]];
    y.v[e] = x.at(e / (p.out_h * p.out_w * x.d[3]), t.ih, t.iw, e % x.d[3]);
  }
  return y;
}

// Each window's dy goes to its first maximum.
inline Array4 max_pool_grad_ref(const Array4& x, const Array4& dy, const Window& w) {
  const Plan p = plan_of(x.d[1], x.d[2], w);
  const std::vector<int64_t> best = argmax_ref(x, p);
  Array4 dx = Array4::zeros(x.d[0], x.d[1], x.d[2], x.d[3]);
  for (size_t e = 0; e < dy.v.size(); ++e) {
    const Tap& t = p.taps[best[e]];
    dx.at(e / (p.out_h * p.out_w * x.d[3]), t.ih, t.iw, e % x.d[3]) += dy.v[e];
  }
  return dx;
}

// The number of input elements each window reads (padding is not counted).
inline std::vector<int64_t> counts_of(const Plan& p) {
  std::vector<int64_t> count(p.out_h * p.out_w, 0);
  for (const Tap& t : p.taps) ++count[t.oh * p.out_w + t.ow];
  return count;
}

inline Array4 avg_pool_ref(const Array4& x, const Window& w) {
  const Plan p = plan_of(x.d[1], x.d[2], w);
  const std::vector<int64_t> count = counts_of(p);
  Array4 y = Array4::zeros(x.d[0], p.out_h, p.out_w, x.d[3]);
  for (int64_t n = 0; n < x.d[0]; ++n) {
    for (const Tap& t : p.taps) {
      for (int64_t c = 0; c < x.d[3]; ++c) {
        y.at(n, t.oh, t.ow, c) += x.at(n, t.ih, t.iw, c) / count[t.oh * p.out_w + t.ow];
      }
    }
  }
  return y;
}

inline Array4 avg_pool_grad_ref(const Array4& dy, const Window& w, int64_t in_h, int64_t in_w) {
  const Plan p = plan_of(in_h, in_w, w);
  const std::vector<int64_t> count = counts_of(p);
  Array4 dx = Array4::zeros(dy.d[0], in_h, in_w, dy.d[3]);
  for (int64_t n = 0; n < dy.d[0]; ++n) {
    for (const Tap& t : p.taps) {
      for (int64_t c = 0; c < dy.d[3]; ++c) {
        dx.at(n, t.ih, t.iw, c) += dy.at(n, t.oh, t.ow, c) / count[t.oh * p.out_w + t.ow];
      }
    }
  }
  return dx;
}

// Returns a random window over an in_h x in_w input: sizes 1 to 4, strides 1 to 3,
// dilations 1 to 3 (a convolution's), each padding, explicit pads up to 3 (a pool's below
// its size); one that would not fit the input is drawn again.
inline Window random_window(std::mt19937_64& rng, bool pool, int64_t in_h, int64_t in_w) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (;;) {
    Window w;
    w.kh = pick(1, 4), w.kw = pick(1, 4), w.sh = pick(1, 3), w.sw = pick(1, 3);
    if (!pool) w.dh = pick(1, 3), w.dw = pick(1, 3);
    w.padding = static_cast<Padding>(pick(0, 2));
    if (w.padding == Padding::kExplicit) {
      w.top = pick(0, pool ? w.kh - 1 : 3), w.bottom = pick(0, pool ? w.kh - 1 : 3);
      w.left = pick(0, pool ? w.kw - 1 : 3), w.right = pick(0, pool ? w.kw - 1 : 3);
    }
    const bool same = w.padding == Padding::kSame;
    if (same || (in_h + w.top + w.bottom >= (w.kh - 1) * w.dh + 1 &&
                 in_w + w.left + w.right >= (w.kw - 1) * w.dw + 1)) {
      return w;
    }
  }
}

// Returns the window for a test's trace.
inline std::string describe(const Window& w) {
  static const char* const kPaddings[] = {"VALID", "SAME", "EXPLICIT"};
  return absl::StrCat(w.kh, "x", w.kw, " strides ", w.sh, "x", w.sw, " dilations ", w.dh, "x", w.dw,
                      " ", kPaddings[static_cast<int>(w.padding)], " pads ", w.top, " ", w.bottom,
                      " ", w.left, " ", w.right);
}

// ---------------------------------------------------------------------------------------
// Tensors, attributes and comparison.

inline constexpr DType kFloatDTypeList[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16,
                                            DType::kFloat16};

// Returns `x` (an image, N H W C) as a tensor of `dtype` in NHWC or NCHW; a filter is HWIO
// in both (nchw false).
inline HostTensor tensor_of(const Array4& x, DType dtype, bool nchw) {
  const int64_t n = x.d[0], h = x.d[1], w = x.d[2], c = x.d[3];
  std::vector<double> v(x.v.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t k = 0; k < w; ++k)
        for (int64_t l = 0; l < c; ++l)
          v[nchw ? ((i * c + l) * h + j) * w + k : ((i * h + j) * w + k) * c + l] =
              x.at(i, j, k, l);
  const Shape shape = nchw ? S({n, c, h, w}) : S({n, h, w, c});
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<T> t;
    for (double e : v) t.push_back(static_cast<T>(static_cast<float>(e)));
    if constexpr (std::is_same_v<T, double>) t.assign(v.begin(), v.end());
    return HostTensor::make<T>(shape, t);
  });
}

// Returns the elements of `t` (an image in NHWC or NCHW) in logical order.
inline Array4 array_of(const HostTensor& t, bool nchw) {
  const Shape& s = t.shape();
  const int64_t n = s.dim(0), c = s.dim(nchw ? 1 : 3), h = s.dim(nchw ? 2 : 1),
                w = s.dim(nchw ? 3 : 2);
  const std::vector<double> v = testutil::as_doubles(t);
  Array4 x = Array4::zeros(n, h, w, c);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t k = 0; k < w; ++k)
        for (int64_t l = 0; l < c; ++l)
          x.at(i, j, k, l) =
              v[nchw ? ((i * c + l) * h + j) * w + k : ((i * h + j) * w + k) * c + l];
  return x;
}

// Returns random values in [-1, 1) of the dtype (rounded to it, so that the reference reads
// the very values the kernel reads).
inline Array4 random_array(std::mt19937_64& rng, const std::vector<int64_t>& d, DType dtype) {
  std::uniform_real_distribution<double> dist(-1, 1);
  Array4 x = Array4::zeros(d[0], d[1], d[2], d[3]);
  for (double& e : x.v) e = dist(rng);
  return array_of(tensor_of(x, dtype, false), false);
}

// The attributes of a window in a data format: strides, dilations (a convolution) or ksize
// (a pool), the padding and the explicit pads, each at the H and W entries.
inline OpAttrs attrs_of(const Window& w, bool nchw, bool pool) {
  OpAttrs a;
  const int h = nchw ? 2 : 1, x = nchw ? 3 : 2;
  a.channels_first = nchw;
  a.strides[h] = static_cast<int32_t>(w.sh);
  a.strides[x] = static_cast<int32_t>(w.sw);
  if (pool) {
    a.ksize[h] = static_cast<int32_t>(w.kh);
    a.ksize[x] = static_cast<int32_t>(w.kw);
  } else {
    a.dilations[h] = static_cast<int32_t>(w.dh);
    a.dilations[x] = static_cast<int32_t>(w.dw);
  }
  a.padding = w.padding;
  if (w.padding == Padding::kExplicit) {
    a.explicit_paddings[2 * h] = static_cast<int32_t>(w.top);
    a.explicit_paddings[2 * h + 1] = static_cast<int32_t>(w.bottom);
    a.explicit_paddings[2 * x] = static_cast<int32_t>(w.left);
    a.explicit_paddings[2 * x + 1] = static_cast<int32_t>(w.right);
  }
  return a;
}

// The shape of an image of logical dimensions `d` in a data format, as attrs.dims.
inline absl::InlinedVector<int64_t, 4> dims_of(const int64_t* d, bool nchw) {
  if (nchw) return {d[0], d[3], d[1], d[2]};
  return {d[0], d[1], d[2], d[3]};
}

// The largest error of a result of `dtype` that sums `terms` terms whose magnitudes add up to
// `mag`: float32 accumulation for the 2-byte floats, then one rounding (Note [Half
// tolerances] in half_kernels_test.cc); twice that, for slack.
inline double tolerance(DType dtype, double want, double mag, int64_t terms) {
  const double acc = dtype == DType::kFloat64 ? 0x1p-53 : 0x1p-24;
  const double round = dtype == DType::kBFloat16 ? 0x1p-8 : dtype == DType::kFloat16 ? 0x1p-11 : 0;
  const double tiny = dtype == DType::kBFloat16 ? 0x1p-134 : dtype == DType::kFloat16 ? 0x1p-25 : 0;
  return 2 * (static_cast<double>(terms + 1) * acc * mag + round * std::fabs(want) + tiny);
}

// Expects `got` to be `want` within tolerance(), where `mag` is the reference on
// magnitudes: NaN where `want` has NaN, its infinities exactly.
inline void expect_near(const absl::StatusOr<HostTensor>& got, const Array4& want,
                        const Array4& mag, int64_t terms, bool nchw, bool filter = false) {
  ASSERT_TRUE(got.ok()) << got.status();
  const Array4 g = filter ? array_of(*got, false) : array_of(*got, nchw);
  ASSERT_EQ(std::vector<int64_t>(g.d, g.d + 4), std::vector<int64_t>(want.d, want.d + 4));
  int bad = 0;
  for (size_t i = 0; i < want.v.size(); ++i) {
    const double w = want.v[i], tol = tolerance(got->dtype(), w, mag.v[i], terms);
    const bool ok = std::isnan(w)   ? std::isnan(g.v[i])
                    : std::isinf(w) ? g.v[i] == w
                                    : std::fabs(g.v[i] - w) <= tol;
    if (!ok && ++bad <= 5) {
      ADD_FAILURE() << "element " << i << " (logical order): " << g.v[i] << ", want " << want.v[i]
                    << " within " << tol;
    }
  }
  EXPECT_EQ(bad, 0);
}

// Switches oneDNN's convolutions and pools (kernels/cpu/onednn_conv.h) on, for calls of
// every size, or off for its scope.
class OnednnConvs {
 public:
  explicit OnednnConvs(bool on) : on_(on), was_(cpu::onednn_conv_enabled()) {
    cpu::set_onednn_conv_enabled(on);
    if (on_) cpu::set_onednn_conv_small_calls(true);
  }
  ~OnednnConvs() {
    cpu::set_onednn_conv_enabled(was_);
    if (on_) cpu::set_onednn_conv_small_calls(false);
  }

 private:
  const bool on_, was_;
};

// Runs `op` and returns its output as doubles (none on an error, which fails the test).
inline std::vector<double> run_values(OpId op, const std::vector<HostTensor>& in,
                                      const OpAttrs& attrs) {
  const absl::StatusOr<HostTensor> out = run_cpu(op, in, attrs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? testutil::as_doubles(*out) : std::vector<double>{};
}

// Returns first, first + 1, ... (float32) in the shape.
inline HostTensor iota(const Shape& shape, double first = 1) {
  std::vector<float> v(shape.num_elements());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(first + static_cast<double>(i));
  return HostTensor::make<float>(shape, v);
}

// Returns a float32 tensor of `shape` holding `value` everywhere.
inline HostTensor filled(const Shape& shape, float value) {
  return HostTensor::make<float>(shape, std::vector<float>(shape.num_elements(), value));
}

}  // namespace mt::conv_test
