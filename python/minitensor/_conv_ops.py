"""tf.nn's convolution and pooling functions over the op table's Conv2D, MaxPool and AvgPool
rows: they take TensorFlow's argument forms and hand the bindings the normalised ones
(strides, dilations and ksize of 4 entries in the data format's order, padding "VALID",
"SAME" or "EXPLICIT" with 8 explicit paddings).

    mt.nn.conv2d(images, filters, strides=2, padding="SAME")            # NHWC, HWIO filters
    mt.nn.conv2d(images, filters, 1, [[0, 0], [1, 2], [0, 1], [0, 0]])  # explicit padding
    mt.nn.max_pool2d(images, ksize=2, strides=2, padding="VALID")

Only two spatial dimensions: ``convolution``, ``max_pool`` and ``avg_pool`` (TensorFlow's
rank-generic names) take 4-D inputs and raise UnimplementedError for 1-D and 3-D ones.
What the forms allow is checked here, with TensorFlow's messages; the values (positive
strides, batch and channel entries of 1, output sizes) are checked by the ops.
"""

import numpy as _np

from . import _minitensor as _mt
from . import errors as _errors
from ._constant_op import convert_to_tensor

__all__ = ["avg_pool", "avg_pool2d", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input",
           "convolution", "max_pool", "max_pool2d"]

_FORMATS = ("NHWC", "NCHW")


def _as_tensor(value, like=None):
    """``value`` as a tensor; a value that is not a tensor takes the dtype of ``like``."""
    if isinstance(value, (_mt.Tensor, _mt._Variable)) or like is None:
        return convert_to_tensor(value)
    return convert_to_tensor(value, like.dtype)


def _operands(input, filters):
    """Returns (input, filters) as tensors; an array or list beside a tensor takes that
    tensor's dtype, as TensorFlow converts an op's inputs."""
    if not isinstance(input, (_mt.Tensor, _mt._Variable)) and \
            isinstance(filters, (_mt.Tensor, _mt._Variable)):
        filters = _as_tensor(filters)
        return _as_tensor(input, filters), filters
    input = _as_tensor(input)
    return input, _as_tensor(filters, input)


def _data_format(data_format, op):
    if isinstance(data_format, bytes):
        data_format = data_format.decode()
    if data_format not in _FORMATS:
        raise _errors.InvalidArgumentError(
            None, None, f"[{op}] Value for attr 'data_format' of \"{data_format}\" is not in the "
            'list of allowed values: "NHWC", "NCHW"')
    return data_format


def _sequence(value, name, data_format):
    """Returns ``value`` (None, an int, or a list of 1, 2 or 4 ints) as 4 ints in the data
    format's order, 1 for the batch and channels, as TensorFlow's ``_get_sequence``."""
    spatial = [2, 3] if data_format == "NCHW" else [1, 2]
    if value is None:
        return [1, 1, 1, 1]
    if _np.ndim(value) == 0:
        values = [value]
    else:
        values = list(value)
    if len(values) not in (1, 2, 4):
        raise ValueError(f"{name} should be of length 1, 2 or 4. Received: {name}={value} of "
                         f"length {len(values)}")
    values = [int(v) for v in values]
    if len(values) == 4:
        return values
    full = [1, 1, 1, 1]
    for i, axis in enumerate(spatial):
        full[axis] = values[0] if len(values) == 1 else values[i]
    return full


def _padding(padding, op, allow_explicit=True):
    """Returns (padding string, explicit paddings) from TensorFlow's forms: "VALID" or
    "SAME" (bytes too), or 4 (before, after) pairs in the data format's order."""
    if isinstance(padding, bytes):
        padding = padding.decode()
    if isinstance(padding, (list, tuple)) and allow_explicit:
        flat = []
        for i, pair in enumerate(padding):
            if not isinstance(pair, (list, tuple)):
                raise ValueError(
                    "When `padding` is a list, each element of `padding` must be a list/tuple "
                    f"of size 2. Received: padding={padding} with element at index {i} of type "
                    f"{type(pair)}")
            if len(pair) != 2:
                raise ValueError(
                    "When `padding` is a list, each element of `padding` must be a list/tuple "
                    f"of size 2. Received: padding={padding} with element at index {i} of size "
                    f"{len(pair)}")
            flat += [int(pair[0]), int(pair[1])]
        if len(padding) != 4:  # after the pairs, as TensorFlow checks
            raise ValueError("When padding is a list, it must be of size 4. Received: "
                             f"padding={padding} of size {len(padding)}")
        return "EXPLICIT", flat
    if not isinstance(padding, str):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    if padding == "EXPLICIT" and allow_explicit:
        raise ValueError("'EXPLICIT' is not a valid value for `padding`. To use explicit "
                         "padding, `padding` must be a list.")
    allowed = ("SAME", "VALID", "EXPLICIT") if allow_explicit else ("SAME", "VALID")
    if padding not in allowed:
        names = ", ".join(f'"{a}"' for a in allowed)
        raise _errors.InvalidArgumentError(
            None, None, f"[{op}] Value for attr 'padding' of \"{padding}\" is not in the list "
            f"of allowed values: {names}")
    return padding, []


def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """Returns the 2-D convolution (Conv2D, a cross-correlation) of ``input`` (NHWC, or
    NCHW with ``data_format``; leading dimensions beyond 4 are batch dimensions) with
    ``filters`` [height, width, in_channels, out_channels]. ``strides`` and ``dilations``
    are an int or lists of 1, 2 or 4; ``padding`` is "VALID", "SAME" or 4 (before, after)
    pairs in the data format's order. Differentiable with respect to both. Raises
    ValueError or TypeError for forms TensorFlow refuses, InvalidArgumentError (from the
    op) for values it refuses."""
    del name
    data_format = _data_format(data_format, "Conv2D")
    strides = _sequence(strides, "strides", data_format)
    dilations = _sequence(dilations, "dilations", data_format)
    padding, explicit = _padding(padding, "Conv2D")
    input, filters = _operands(input, filters)
    shape = list(input.shape)
    if len(shape) <= 4:
        return _mt.conv2d(input, filters, strides, padding, explicit, data_format, dilations)
    # TensorFlow 2's batch_shape: the dimensions before the last three are batch ones.
    flat = _mt.reshape(input, [-1] + shape[-3:])
    out = _mt.conv2d(flat, filters, strides, padding, explicit, data_format, dilations)
    return _mt.reshape(out, shape[:-3] + list(out.shape[1:]))


def _sizes(sizes, name):
    """A 4-entry size argument (input_sizes, filter_sizes) as ints; a tensor is read."""
    if isinstance(sizes, (_mt.Tensor, _mt._Variable)):
        sizes = convert_to_tensor(sizes).numpy().tolist()
    sizes = [int(d) for d in sizes]
    if len(sizes) != 4:
        raise ValueError(f"{name} must have 4 elements, got {sizes}")
    return sizes


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,
                           data_format="NHWC", dilations=None, name=None):
    """Conv2D's gradient with respect to its filter of shape ``filter_sizes``, given the
    ``input`` and the output's gradient ``out_backprop`` (tf.nn.conv2d_backprop_filter's
    arguments, in conv2d's forms)."""
    del name
    data_format = _data_format(data_format, "Conv2DBackpropFilter")
    strides = _sequence(strides, "strides", data_format)
    dilations = _sequence(dilations, "dilations", data_format)
    padding, explicit = _padding(padding, "Conv2DBackpropFilter")
    input, out_backprop = _operands(input, out_backprop)
    return _mt.conv2d_backprop_filter(input, _sizes(filter_sizes, "filter_sizes"), out_backprop,
                                      strides, padding, explicit, data_format, dilations)


def conv2d_backprop_input(input_sizes, filters=None, out_backprop=None, strides=None,
                          padding=None, data_format="NHWC", dilations=None, name=None,
                          filter=None):  # noqa: A002
    """Conv2D's gradient with respect to its input of shape ``input_sizes``, given the
    ``filters`` and the output's gradient ``out_backprop`` (tf.nn.conv2d_backprop_input's
    arguments, ``filter`` being the older name of ``filters``)."""
    del name
    if filters is None:
        filters = filter
    if filters is None or out_backprop is None or strides is None or padding is None:
        raise TypeError("conv2d_backprop_input needs filters, out_backprop, strides and "
                        "padding")
    data_format = _data_format(data_format, "Conv2DBackpropInput")
    strides = _sequence(strides, "strides", data_format)
    dilations = _sequence(dilations, "dilations", data_format)
    padding, explicit = _padding(padding, "Conv2DBackpropInput")
    filters, out_backprop = _operands(filters, out_backprop)
    return _mt.conv2d_backprop_input(_sizes(input_sizes, "input_sizes"), filters, out_backprop,
                                     strides, padding, explicit, data_format, dilations)


def convolution(input, filters, strides=None, padding="VALID", data_format=None,
                dilations=None, name=None):
    """Returns ``conv2d`` with tf.nn.convolution's arguments (padding "VALID" by default,
    ``data_format`` None for NHWC, no explicit padding). Only 2-D convolutions (filters of
    rank 4): UnimplementedError for others. Raises ValueError, with TensorFlow's message,
    for strides and dilations both above 1."""
    del name
    filters_rank = len(filters.shape) if hasattr(filters, "shape") else _np.ndim(filters)
    if filters_rank != 4:
        raise _errors.UnimplementedError(
            None, None, "[convolution] only 2-D convolutions (filters of rank 4) are "
            f"supported; got filters of rank {filters_rank}")
    data_format = _data_format("NHWC" if data_format is None else data_format, "Conv2D")
    if isinstance(padding, (list, tuple)):
        raise TypeError(f"Expected string for argument 'padding' not {padding!r}.")
    spatial = [2, 3] if data_format == "NCHW" else [1, 2]
    full_strides = _sequence(strides, "strides", data_format)
    full_dilations = _sequence(dilations, "dilations", data_format)
    spatial_strides = _np.array([full_strides[i] for i in spatial])
    spatial_dilations = _np.array([full_dilations[i] for i in spatial])
    if (spatial_strides > 1).any() and (spatial_dilations > 1).any():
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={spatial_strides} and "
                         f"dilation_rate={spatial_dilations}")
    return conv2d(input, filters, full_strides, padding, data_format, full_dilations)


def _pool_input(input):
    return input if isinstance(input, _mt.Tensor) else convert_to_tensor(input)


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """Returns the maximum of each ``ksize`` window of a 4-D ``input`` (MaxPool), the
    windows ``strides`` apart; ``ksize`` and ``strides`` are an int or lists of 1, 2 or 4,
    ``padding`` "VALID", "SAME" or 4 (before, after) pairs (padding is never the
    maximum). Differentiable: the gradient of a window goes to its first maximum."""
    del name
    data_format = _data_format(data_format, "MaxPool")
    ksize = _sequence(ksize, "ksize", data_format)
    strides = _sequence(strides, "strides", data_format)
    padding, explicit = _padding(padding, "MaxPool")
    return _mt.max_pool2d(_pool_input(input), ksize, strides, padding, explicit, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):
    """Returns the mean of each ``ksize`` window of a 4-D ``input`` (AvgPool), the windows
    ``strides`` apart; padding "VALID" or "SAME" (a window divides by the count of the
    input elements it covers, not by its size). Differentiable."""
    del name
    data_format = _data_format(data_format, "AvgPool")
    ksize = _sequence(ksize, "ksize", data_format)
    strides = _sequence(strides, "strides", data_format)
    padding, _ = _padding(padding, "AvgPool", allow_explicit=False)
    return _mt.avg_pool2d(_pool_input(input), ksize, strides, padding, data_format)


def _two_d_only(input, op):
    """Returns ``input`` as a tensor; TensorFlow's ValueError for a rank outside 3 to 5,
    UnimplementedError for the 1-D and 3-D pools minitensor lacks."""
    input = _pool_input(input)
    rank = len(input.shape)
    if rank not in (3, 4, 5):
        raise ValueError("`input.shape.rank` must be 3, 4 or 5. Received: "
                         f"input.shape={tuple(input.shape)} of rank {rank}.")
    if rank != 4:
        raise _errors.UnimplementedError(
            None, None, f"[{op}] only 2-D pooling (a 4-D input) is supported; got an input of "
            f"rank {rank}")
    return input


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    """tf.nn.max_pool for a 4-D input: ``max_pool2d`` with ``data_format`` None for NHWC."""
    input = _two_d_only(input, "MaxPool")
    return max_pool2d(input, ksize, strides, padding, data_format or "NHWC", name)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    """tf.nn.avg_pool for a 4-D input: ``avg_pool2d`` with ``data_format`` None for NHWC."""
    input = _two_d_only(input, "AvgPool")
    return avg_pool2d(input, ksize, strides, padding, data_format or "NHWC", name)
