"""The arguments convolution and pooling layers share, as Keras 3 reads them: a size that
is an int or a tuple of ints (kernel_size, strides, dilation_rate, pool_size), the padding
('valid' or 'same', any case) and the output length of a window over one dimension."""

import numbers as _numbers

import numpy as _np

__all__ = ["as_array_text", "check_image_rank", "output_length", "standardize_padding",
           "standardize_tuple", "too_small"]


def standardize_tuple(value, n, name):
    """Returns ``value`` (an int, or a tuple or list of ``n`` ints) as a tuple of ``n``
    positive ints; ValueError, with Keras's message, otherwise."""
    message = f"The `{name}` argument must be a tuple of {n} integers. Received {name}={value}"
    if _is_int(value):
        values = (int(value),) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(message) from None
        if len(values) != n:
            raise ValueError(message)
        for v in values:
            if not _is_int(v):
                raise ValueError(f"{message}, including element {v} of type {type(v)}")
        values = tuple(int(v) for v in values)
    bad = {v for v in values if v <= 0}
    if bad:
        raise ValueError(f"{message}, including values {bad} that do not satisfy `value > 0`")
    return values


def _is_int(value):
    return isinstance(value, _numbers.Integral) and not isinstance(value, bool)


def standardize_padding(padding):
    """Returns 'valid' or 'same' (given in any case); ValueError, with Keras's messages,
    for another string (such as 'causal', which Conv1D alone takes) or a list of paddings,
    which Keras's Conv2D refuses when called."""
    if not isinstance(padding, str):
        raise ValueError(f"`padding` must be either `'valid'` or `'same'`. Received {padding}.")
    standard = padding.lower()
    if standard not in ("valid", "same"):
        raise ValueError("The `padding` argument must be a list/tuple or one of {'valid', "
                         f"'same'}}. Received: {padding}")
    return standard


def output_length(length, window, stride, padding, dilation=1):
    """Returns the output length of a window of ``window`` (dilated by ``dilation``) moved
    by ``stride`` over ``length`` elements with ``padding``: ceil(length / stride) for
    'same', (length - dilated window) // stride + 1 for 'valid'; None for None."""
    if length is None:
        return None
    if padding == "same":
        return (length + stride - 1) // stride
    return (length - (window - 1) * dilation - 1) // stride + 1


def too_small(spatial, windows, strides, padding, dilations=(1, 1)):
    """Returns whether an output length over the known ``spatial`` lengths would be zero
    or negative."""
    lengths = [output_length(n, w, s, padding, d)
               for n, w, s, d in zip(spatial, windows, strides, dilations)]
    return any(n is not None and n <= 0 for n in lengths)


def check_image_rank(layer, shape, minimum=False):
    """Raises ValueError, with Keras's message, unless ``shape`` is one 4-D shape (with
    ``minimum``, Keras's min_ndim wording for fewer dimensions)."""
    if isinstance(shape, list):
        raise ValueError(f"Layer '{layer.name}' expects 1 input, but it received {len(shape)} "
                         "input tensors.")
    if len(shape) != 4:
        expected = "min_ndim" if minimum and len(shape) < 4 else "ndim"
        raise ValueError(f"Input 0 with name 'None' of layer '{layer.name}' is incompatible "
                         f"with the layer: expected {expected}=4, found ndim={len(shape)}. "
                         f"Full shape received: {shape}")


def as_array_text(values):
    """Returns ``values`` as NumPy prints an array ([1 1]), as Keras's messages do."""
    return str(_np.array(values))
