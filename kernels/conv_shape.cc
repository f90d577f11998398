// Shape functions of the convolutions and pools (MT_CONV_OPS), and the geometry their
// kernels read (kernels/conv_geometry.h).
//
// Note [Convolutions]
// Conv2D, MaxPool and AvgPool slide a window over the two spatial dimensions of a 4-D
// tensor, NHWC (the default) or NCHW (attrs.channels_first), as TensorFlow's ops do, with
// TensorFlow's attributes in the data format's order: strides, dilations (Conv2D only) and
// ksize (the pools) of 4 entries, the batch and channel ones 1. The padding is VALID (none:
// out = ceil((in - (k - 1) * d) / s)), SAME (out = ceil(in / s); the total padding
// max((out - 1) * s + (k - 1) * d + 1 - in, 0) is split with the extra one after) or
// EXPLICIT (explicit_paddings, a (before, after) pair per dimension, zero for the batch
// and channels). Padding reads as zero in a convolution; a pool skips it, and an average
// divides by the elements it read. The gradients are ops of their own, as in TensorFlow:
// Conv2DBackpropInput and Conv2DBackpropFilter (the shape they write in attrs.dims),
// MaxPoolGrad (the gradient of each window goes to its first maximum, row-major) and
// AvgPoolGrad.
#include "kernels/conv_geometry.h"
#include "kernels/shape_fns.h"

namespace mt::internal {
namespace {

// The entries of the data format's H, W, N and C dimensions.
struct Axes {
  int n, h, w, c;
};
Axes axes_of(const OpAttrs& attrs) {
  return attrs.channels_first ? Axes{0, 2, 3, 1} : Axes{0, 1, 2, 3};
}

absl::Status check_rank4(OpId op, const char* what, const Shape& shape) {
  if (shape.rank() == 4) return absl::OkStatus();
  return op_error(op, what, " must be 4-dimensional, got shape ", shape.to_string());
}

// Fills the output size and leading padding of one spatial dimension.
absl::Status spatial(OpId op, const OpAttrs& attrs, int dim, int64_t in, int64_t window,
                     int64_t stride, int64_t dilation, int64_t* out, int64_t* pad_before) {
  const int64_t effective = (window - 1) * dilation + 1;
  // TensorFlow's sizes: (in + padding - effective + stride) / stride, truncated; an error
  // only below zero (a window just longer than the input gives an empty output).
  auto sized = [&](int64_t padded) -> absl::Status {
    *out = (padded - effective + stride) / stride;
    if (*out >= 0) return absl::OkStatus();
    return op_error(op, "Computed output size would be negative: ", *out, " [input_size: ", in,
                    ", effective_filter_size: ", effective, ", stride: ", stride, "]");
  };
  switch (attrs.padding) {
    case Padding::kValid:
      *pad_before = 0;
      return sized(in);
    case Padding::kSame: {
      *out = (in + stride - 1) / stride;
      const int64_t total = std::max<int64_t>((*out - 1) * stride + effective - in, 0);
      *pad_before = total / 2;
      return absl::OkStatus();
    }
    case Padding::kExplicit:
      *pad_before = attrs.explicit_paddings[2 * dim];
      return sized(in + attrs.explicit_paddings[2 * dim] + attrs.explicit_paddings[2 * dim + 1]);
  }
  return op_error(op, "unknown padding");
}

// Checks the attributes every window op shares: strides (and dilations, ksize) of 1 in
// the batch and channel dimensions, all positive, and explicit paddings only with
// Padding::kExplicit, non-negative, zero for the batch and channels.
absl::Status check_window_attrs(OpId op, const OpAttrs& attrs, bool conv) {
  const Axes a = axes_of(attrs);
  for (int i = 0; i < 4; ++i) {
    if (attrs.strides[i] < 1)
      return op_error(op, "strides must be positive, got ", attrs.strides[i]);
    if (attrs.dilations[i] < 1) {
      return op_error(op, "dilations must be positive, got ", attrs.dilations[i]);
    }
    if (!conv && attrs.ksize[i] < 1)
      return op_error(op, "ksize must be positive, got ", attrs.ksize[i]);
  }
  if (attrs.strides[a.n] != 1 || attrs.strides[a.c] != 1) {
    return op_error(op, conv ? "Current implementation does not yet support strides in the "
                               "batch and depth dimensions."
                             : "Pooling is not yet supported on the batch dimension.");
  }
  if (conv && (attrs.dilations[a.n] != 1 || attrs.dilations[a.c] != 1)) {
    return op_error(op,
                    "Current implementation does not yet support dilations in the batch "
                    "and depth dimensions.");
  }
  if (!conv) {
    if (attrs.ksize[a.n] != 1 || attrs.ksize[a.c] != 1) {
      return op_error(op, "Pooling is not yet supported on the batch dimension.");
    }
    for (int i = 0; i < 4; ++i) {
      if (attrs.dilations[i] != 1) return op_error(op, "pools take no dilations");
    }
  }
  for (int i = 0; i < 8; ++i) {
    const int32_t p = attrs.explicit_paddings[i];
    if (p < 0) return op_error(op, "explicit_paddings must be non-negative, got ", p);
    if (p != 0 && attrs.padding != Padding::kExplicit) {
      return op_error(op, "explicit_paddings are only for padding EXPLICIT");
    }
  }
  if (attrs.padding == Padding::kExplicit &&
      (attrs.explicit_paddings[2 * a.n] | attrs.explicit_paddings[2 * a.n + 1] |
       attrs.explicit_paddings[2 * a.c] | attrs.explicit_paddings[2 * a.c + 1]) != 0) {
    return op_error(op, "explicit_paddings of the batch and depth dimensions must be 0");
  }
  return absl::OkStatus();
}

// The geometry of a window of filter_h x filter_w over `input`.
absl::StatusOr<ConvGeometry> window_geometry(OpId op, const Shape& input, int64_t filter_h,
                                             int64_t filter_w, const OpAttrs& attrs) {
  const Axes a = axes_of(attrs);
  ConvGeometry g;
  g.channels_first = attrs.channels_first;
  g.batch = input.dim(a.n);
  g.in_h = input.dim(a.h);
  g.in_w = input.dim(a.w);
  g.in_c = input.dim(a.c);
  g.filter_h = filter_h;
  g.filter_w = filter_w;
  g.stride_h = attrs.strides[a.h];
  g.stride_w = attrs.strides[a.w];
  g.dilation_h = attrs.dilations[a.h];
  g.dilation_w = attrs.dilations[a.w];
  MT_RETURN_IF_ERROR(
      spatial(op, attrs, a.h, g.in_h, g.filter_h, g.stride_h, g.dilation_h, &g.out_h, &g.pad_top));
  MT_RETURN_IF_ERROR(
      spatial(op, attrs, a.w, g.in_w, g.filter_w, g.stride_w, g.dilation_w, &g.out_w, &g.pad_left));
  return g;
}

// The output shape of the geometry, in its data format.
absl::StatusOr<Shape> output_shape(OpId op, const ConvGeometry& g) {
  if (g.channels_first) return make_output_shape(op, {g.batch, g.out_c, g.out_h, g.out_w});
  return make_output_shape(op, {g.batch, g.out_h, g.out_w, g.out_c});
}

// attrs.dims as a 4-D shape: the backprops' input_sizes / filter_sizes.
absl::StatusOr<Shape> dims_shape(OpId op, const OpAttrs& attrs, const char* what) {
  if (attrs.dims.size() != 4) {
    return op_error(op, what, " must have 4 elements, got ", attrs.dims.size());
  }
  for (int64_t d : attrs.dims) {
    if (d < 0) return op_error(op, what, " must be non-negative, got ", d);
  }
  return make_output_shape(op, attrs.dims);
}

}  // namespace

absl::StatusOr<ConvGeometry> conv_geometry(OpId op, const Shape& input, const Shape& filter,
                                           const OpAttrs& attrs) {
  MT_RETURN_IF_ERROR(check_rank4(op, "input", input));
  MT_RETURN_IF_ERROR(check_rank4(op, "filter", filter));
  MT_RETURN_IF_ERROR(check_window_attrs(op, attrs, /*conv=*/true));
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      window_geometry(op, input, filter.dim(0), filter.dim(1), attrs));
  if (filter.dim(2) != g.in_c) {
    return op_error(op,
                    "input depth must equal the filter's input depth (groups are not "
                    "supported): ",
                    g.in_c, " vs ", filter.dim(2));
  }
  if (filter.dim(0) == 0 || filter.dim(1) == 0) {
    return op_error(op, "filter's spatial dimensions must be positive, got shape ",
                    filter.to_string());
  }
  g.out_c = filter.dim(3);
  return g;
}

absl::StatusOr<ConvGeometry> pool_geometry(OpId op, const Shape& input, const OpAttrs& attrs) {
  MT_RETURN_IF_ERROR(check_rank4(op, "input", input));
  MT_RETURN_IF_ERROR(check_window_attrs(op, attrs, /*conv=*/false));
  const Axes a = axes_of(attrs);
  MT_ASSIGN_OR_RETURN(ConvGeometry g,
                      window_geometry(op, input, attrs.ksize[a.h], attrs.ksize[a.w], attrs));
  g.out_c = g.in_c;
  return g;
}

absl::Status infer_conv2d(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                          OutputMetas* out) {
  MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, inputs[1].dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  MT_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(op, *inputs[0].shape, *inputs[1].shape, attrs));
  MT_ASSIGN_OR_RETURN(Shape shape, output_shape(op, g));
  out->push_back(OutputMeta{std::move(shape), inputs[0].dtype});
  return absl::OkStatus();
}

// Conv2DBackpropInput (filter, out_backprop) writes input_sizes; Conv2DBackpropFilter
// (input, out_backprop) writes filter_sizes. out_backprop must have the forward op's
// output shape.
absl::Status infer_conv2d_backprop(OpId op, absl::Span<const TensorMeta> inputs,
                                   const OpAttrs& attrs, OutputMetas* out) {
  MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, inputs[1].dtype));
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  const bool for_input = op == OpId::kConv2DBackpropInput;
  MT_ASSIGN_OR_RETURN(Shape written,
                      dims_shape(op, attrs, for_input ? "input_sizes" : "filter_sizes"));
  const Shape& input = for_input ? written : *inputs[0].shape;
  const Shape& filter = for_input ? *inputs[0].shape : written;
  MT_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(op, input, filter, attrs));
  MT_ASSIGN_OR_RETURN(Shape expected, output_shape(op, g));
  const Shape& backprop = *inputs[1].shape;
  if (backprop != expected) {
    return op_error(op, "out_backprop has shape ", backprop.to_string(),
                    " but the convolution's output has shape ", expected.to_string());
  }
  out->push_back(OutputMeta{std::move(written), inputs[0].dtype});
  return absl::OkStatus();
}

absl::Status infer_pool(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                        OutputMetas* out) {
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  MT_ASSIGN_OR_RETURN(ConvGeometry g, pool_geometry(op, *inputs[0].shape, attrs));
  MT_ASSIGN_OR_RETURN(Shape shape, output_shape(op, g));
  out->push_back(OutputMeta{std::move(shape), inputs[0].dtype});
  return absl::OkStatus();
}

// MaxPoolGrad (orig_input, orig_output, grad) and AvgPoolGrad (grad; orig_input_shape in
// attrs.dims): the output has the original input's shape.
absl::Status infer_pool_grad(OpId op, absl::Span<const TensorMeta> inputs, const OpAttrs& attrs,
                             OutputMetas* out) {
  for (const TensorMeta& t : inputs) {
    MT_RETURN_IF_ERROR(check_same_dtype(op, inputs[0].dtype, t.dtype));
  }
  MT_RETURN_IF_ERROR(check_dtype(op, inputs[0].dtype));
  Shape input;
  if (op == OpId::kMaxPoolGrad) {
    input = *inputs[0].shape;
  } else {
    MT_ASSIGN_OR_RETURN(input, dims_shape(op, attrs, "orig_input_shape"));
  }
  MT_ASSIGN_OR_RETURN(ConvGeometry g, pool_geometry(op, input, attrs));
  MT_ASSIGN_OR_RETURN(Shape expected, output_shape(op, g));
  const Shape& grad = *inputs.back().shape;
  if (grad != expected) {
    return op_error(op, "grad has shape ", grad.to_string(), " but the pool's output has shape ",
                    expected.to_string());
  }
  if (op == OpId::kMaxPoolGrad && *inputs[1].shape != expected) {
    return op_error(op, "orig_output has shape ", inputs[1].shape->to_string(),
                    " but the pool's output has shape ", expected.to_string());
  }
  out->push_back(OutputMeta{std::move(input), inputs[0].dtype});
  return absl::OkStatus();
}

}  // namespace mt::internal
