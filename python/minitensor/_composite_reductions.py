"""Reductions composed of ops, with TensorFlow's names and formulas: tf.reduce_logsumexp,
tf.norm, tf.math.l2_normalize and tf.nn.moments. Being ops, they differentiate through a
GradientTape and an mt.function records them.

    mt.reduce_logsumexp(logits, axis=-1)          # log(sum(exp(x))), without overflow
    mt.norm(x, ord=1, axis=-1)                    # vector norms; matrix norms over 2 axes
    mean, variance = mt.nn.moments(x, axes=[0])
"""

import numbers as _numbers

import numpy as _np

from . import _minitensor as _mt
from . import errors as _errors
from ._converted_ops import cast
from ._index_ops import where
from ._constant_op import convert_to_tensor

__all__ = ["l2_normalize", "moments", "norm", "reduce_logsumexp"]

_FLOATS = (_mt.DType.float32, _mt.DType.float64, _mt.DType.float16, _mt.DType.bfloat16)


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """Returns log(sum(exp(input_tensor))) over ``axis`` (every axis by default), computed
    as max + log(sum(exp(x - max))) so that large values do not overflow; a row of -inf
    gives -inf and a row holding +inf gives +inf, as in TensorFlow."""
    x = convert_to_tensor(input_tensor)
    if x.dtype not in _FLOATS:
        raise _errors.InvalidArgumentError(
            None, None, "[reduce_logsumexp] input_tensor must be a floating-point tensor, "
            f"got dtype {x.dtype.name}")
    raw_max = _mt.reduce_max(x, axis, keepdims=True)
    finite = _mt.less(_mt.abs(raw_max), _np.inf)
    shift = _mt.stop_gradient(where(finite, raw_max, _mt.zeros_like(raw_max)))
    total = _mt.log(_mt.reduce_sum(_mt.exp(x - shift), axis, keepdims=keepdims))
    if not keepdims:
        shift = _mt.reshape(shift, list(total.shape))
    return total + shift


_VECTOR_NORMS = ("euclidean", 1, 2, _np.inf)
_MATRIX_NORMS = ["euclidean", "fro", 1, 2, _np.inf]


def _is_int(value):
    return isinstance(value, (int, _np.integer)) and not isinstance(value, bool)


def _norm_axes(axis):
    """Returns ``axis`` as a tuple of one or two axes, or None; ValueError, with
    TensorFlow's message, for anything else."""
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        if _is_int(axis[0]) and _is_int(axis[1]) and axis[0] != axis[1]:
            return tuple(int(a) for a in axis)
    elif axis is None or _is_int(axis):
        return None if axis is None else (int(axis),)
    raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers, got "
                     f"{tuple(axis) if isinstance(axis, list) and len(axis) == 2 else axis}")


def _check_ord(ord, matrix):  # noqa: A002 (TensorFlow's argument name)
    if matrix:
        if not any(ord == known and type(ord) is not bool for known in _MATRIX_NORMS):
            raise ValueError(f"'ord' must be a supported matrix norm in {_MATRIX_NORMS}, "
                             f"got {ord}")
    elif not (isinstance(ord, _numbers.Real) and not isinstance(ord, bool) and ord > 0) and \
            ord not in _VECTOR_NORMS:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):  # noqa: A002
    """Returns the norm of ``tensor`` (tf.norm). With ``axis`` None or an int it is a
    vector norm (over every element, or along that axis): 'euclidean' (also 2 or any real
    p > 0: (sum |x|^p)^(1/p)), 1 (sum |x|) or np.inf (max |x|). With two axes it is a
    matrix norm: 'fro' or 'euclidean', 1 (largest column sum of |x|) or np.inf (largest
    row sum). Raises ValueError, with TensorFlow's messages, for another ord or axis, and
    UnimplementedError for ord=2 over two axes (the largest singular value needs an SVD)."""
    axes = _norm_axes(axis)
    matrix = axes is not None and len(axes) == 2
    _check_ord(ord, matrix)
    x = convert_to_tensor(tensor)
    if matrix and ord == 2 and not isinstance(ord, str):
        raise _errors.UnimplementedError(
            None, None, "[norm] ord=2 over two axes is the largest singular value, which "
            "needs an SVD; minitensor has none yet (use ord='fro', 1 or np.inf)")
    reduce_axes = None if axes is None else list(axes)
    if ord == "euclidean" or ord == "fro":
        result = _mt.sqrt(_mt.reduce_sum(x * x, reduce_axes, keepdims=True))
    elif matrix:  # 1 or inf: sum down one axis, then the largest along the other
        sum_axis, max_axis = axes if ord == 1 else axes[::-1]
        result = _mt.reduce_max(_mt.reduce_sum(_mt.abs(x), sum_axis, keepdims=True), max_axis,
                                keepdims=True)
    elif ord == 1:
        result = _mt.reduce_sum(_mt.abs(x), reduce_axes, keepdims=True)
    elif ord == _np.inf:
        result = _mt.reduce_max(_mt.abs(x), reduce_axes, keepdims=True)
    else:
        power = _mt.fill([], float(ord), x.dtype)
        result = _mt.pow(_mt.reduce_sum(_mt.pow(_mt.abs(x), power), reduce_axes, keepdims=True),
                         _mt.fill([], 1.0 / float(ord), x.dtype))
    if keepdims:
        return result
    return _mt.reshape(result, []) if axes is None else _mt.squeeze(result, list(axes))


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """Returns x / sqrt(max(sum(x ** 2), epsilon)) with the sum over ``axis`` (every axis
    by default; ``dim`` is its old name), so a zero vector stays zero."""
    axis = dim if axis is None else axis
    x = convert_to_tensor(x)
    square_sum = _mt.reduce_sum(_mt.square(x), axis, keepdims=True)
    return x * _mt.rsqrt(_mt.maximum(square_sum, convert_to_tensor(epsilon, x.dtype)))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Returns (mean, variance) of ``x`` over ``axes`` (a list of axes), the variance as
    the mean of squared differences from the mean (tf.nn.moments). float16 and bfloat16
    are computed in float32 and rounded back, as TensorFlow does."""
    del shift  # TensorFlow ignores it too
    x = convert_to_tensor(x)
    axes = [axes] if _is_int(axes) else list(axes)
    narrow = x.dtype in (_mt.DType.float16, _mt.DType.bfloat16)
    y = cast(x, _mt.DType.float32) if narrow else x
    mean = _mt.reduce_mean(y, axes, keepdims=True)
    variance = _mt.reduce_mean(_mt.squared_difference(y, _mt.stop_gradient(mean)), axes,
                               keepdims=True)
    if not keepdims:
        mean, variance = _mt.squeeze(mean, axes), _mt.squeeze(variance, axes)
    if narrow:
        mean, variance = cast(mean, x.dtype), cast(variance, x.dtype)
    return mean, variance
