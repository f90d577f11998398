"""tf.nn.depthwise_conv2d as a composite of ops every backend has: each input channel is
convolved with its own ``channel_multiplier`` filters, and output channel
``k * channel_multiplier + q`` is

    sum over taps (i, j) of input[b, s0 * y + r0 * i, s1 * x + r1 * j, k] * filter[i, j, k, q]

(TensorFlow's definition). The composite pads the input once, takes one strided slice
per tap (kernel height x width of them), multiplies it by that tap's [in_channels,
channel_multiplier] weights and sums the taps, so it runs on the CPU and every GPU with
the gradients of its parts, and agrees with TensorFlow's DepthwiseConv2dNative to float
rounding. There is no DepthwiseConv2dNative row in the op table yet (a kernel of its own
would save the per-tap passes).

    mt.nn.depthwise_conv2d(images, filters, strides=[1, 1, 1, 1], padding="SAME")
"""

import math as _math

from . import _minitensor as _mt
from . import errors as _errors
from ._conv_ops import _data_format, _operands, _padding
from ._pad_ops import pad as _pad

__all__ = ["depthwise_conv2d"]

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _invalid(message):
    return _errors.InvalidArgumentError(None, None, f"[DepthwiseConv2dNative] {message}")


def _pads(padding, explicit, size, window, stride, dilation, axis):
    """(before, after) padding of spatial dimension ``axis`` (0 or 1) of ``size``."""
    if padding == "VALID":
        return 0, 0
    if padding == "EXPLICIT":
        return explicit[2 * axis], explicit[2 * axis + 1]
    out = -(-size // stride)
    total = max((out - 1) * stride + (window - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,
                     name=None):  # noqa: A002 (TensorFlow's argument names)
    """Returns the depthwise 2-D convolution of a 4-D ``input`` (NHWC, or NCHW with
    ``data_format``) with ``filter`` [height, width, in_channels, channel_multiplier]:
    output channels in_channels * channel_multiplier. ``strides`` is 4 ints (1 for batch
    and channels); ``padding`` "VALID", "SAME" or 4 (before, after) pairs in the data
    format's order; ``dilations`` 2 ints (the rate), not above 1 together with a stride
    above 1. Differentiable with respect to both. Raises TensorFlow's errors for bad forms
    and shapes."""
    del name
    data_format = _data_format("NHWC" if data_format is None else data_format,
                               "DepthwiseConv2dNative")
    padding, explicit = _padding(padding, "DepthwiseConv2dNative")
    input, filter = _operands(input, filter)
    if input.dtype.name not in _FLOATS:
        raise _invalid(f"Value for attr 'T' of {input.dtype.name} is not in the list of "
                       "allowed values: half, bfloat16, float, double")
    strides = [int(s) for s in strides] if not isinstance(strides, int) else [strides]
    if len(strides) != 4:
        raise _invalid("Sliding window strides field must specify 4 dimensions")
    spatial = (2, 3) if data_format == "NCHW" else (1, 2)
    channel_axis = 1 if data_format == "NCHW" else 3
    if strides[0] != 1 or strides[channel_axis] != 1:
        raise _errors.UnimplementedError(
            None, None, "[DepthwiseConv2dNative] Current implementation does not yet support "
            "strides in the batch and depth dimensions.")
    stride = [strides[a] for a in spatial]
    if min(stride) < 1:
        raise _invalid(f"Stride must be > 0, but got {min(stride)}")
    rate = [1, 1] if dilations is None else [int(d) for d in (
        [dilations] * 2 if isinstance(dilations, int) else dilations)]
    if len(rate) != 2 or min(rate) < 1:
        raise ValueError(f"dilations must be 2 positive ints, got {dilations}")
    if max(rate) > 1 and max(stride) > 1:
        raise ValueError("When dilation rate is greater than 1, then all values of strides "
                         f"must be 1. Received: `dilation rate` {rate} and `strides` "
                         f"{strides}")
    if len(input.shape) != 4:
        raise _invalid(f"input must be 4-dimensional: {list(input.shape)}")
    if len(filter.shape) != 4:
        raise _invalid(f"filter must be 4-dimensional: {list(filter.shape)}")
    if filter.dtype != input.dtype:
        raise _invalid(f"filter's dtype {filter.dtype.name} is not the input's "
                       f"{input.dtype.name}")
    if data_format == "NCHW":
        input = _mt.transpose(input, [0, 2, 3, 1])
        explicit = [explicit[i] for i in (0, 1, 4, 5, 6, 7, 2, 3)] if explicit else explicit
    batch, height, width, channels = input.shape
    kh, kw, in_channels, multiplier = filter.shape
    if channels != in_channels:
        raise _invalid(f"input and filter must have the same depth: {channels} vs "
                       f"{in_channels}")
    pads = [_pads(padding, explicit[2:6] if explicit else [], n, k, s, r, a)
            for a, (n, k, s, r) in enumerate(zip((height, width), (kh, kw), stride, rate))]
    if explicit and min(explicit) < 0:
        raise _invalid(f"All elements of explicit_paddings must be nonnegative, got {explicit}")
    out = []
    for (before, after), n, k, s, r in zip(pads, (height, width), (kh, kw), stride, rate):
        span = n + before + after - (k - 1) * r
        if span <= 0:
            raise _invalid(f"Computed output size would be negative: {span - 1} "
                           f"[input_size: {n}, effective_filter_size: {(k - 1) * r + 1}, "
                           f"stride: {s}]")
        out.append(_math.ceil(span / s))
    if any(p for pair in pads for p in pair):
        input = _pad(input, [[0, 0], list(pads[0]), list(pads[1]), [0, 0]])
    total = None
    for i in range(kh):
        for j in range(kw):
            top, left = i * rate[0], j * rate[1]
            tap = _mt.strided_slice(
                input, [0, top, left, 0],
                [batch, top + (out[0] - 1) * stride[0] + 1, left + (out[1] - 1) * stride[1] + 1,
                 channels],
                [1, stride[0], stride[1], 1])
            weights = _mt.strided_slice(filter, [i, j, 0, 0], [i + 1, j + 1, channels,
                                                               multiplier], [1, 1, 1, 1])
            term = _mt.expand_dims(tap, 4) * _mt.reshape(weights, [channels, multiplier])
            total = term if total is None else total + term
    result = _mt.reshape(total, [batch, out[0], out[1], channels * multiplier])
    return _mt.transpose(result, [0, 3, 1, 2]) if data_format == "NCHW" else result
