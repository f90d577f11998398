"""tf.where (three arguments), tf.math.argmax and tf.math.argmin, converting their
arguments as TensorFlow does: Python values take the dtype of the tensor beside them."""

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from ._dtypes import as_dtype

__all__ = ["argmax", "argmin", "where"]


def _tensor(value, like=None):
    if isinstance(value, _mt.Tensor):
        return value
    return convert_to_tensor(value, None if like is None else like.dtype)


def where(condition, x=None, y=None, name=None):
    """Picks ``x`` where ``condition`` is true, else ``y`` (SelectV2); the three broadcast
    together. The one-argument form (the coordinates of true elements) is not supported."""
    del name
    if x is None and y is None:
        raise NotImplementedError(
            "[Where] mt.where(condition) with one argument is not supported; "
            "pass x and y to select (SelectV2)")
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    if not isinstance(x, _mt.Tensor) and isinstance(y, _mt.Tensor):
        x = _tensor(x, y)
    x = _tensor(x)
    return _mt.select_v2(_tensor(condition), x, _tensor(y, x))


def _arg(fn, input, axis, output_type):
    return fn(_tensor(input), 0 if axis is None else int(axis), as_dtype(output_type))


def argmax(input, axis=None, output_type=_mt.DType.int64, name=None):  # noqa: A002
    """Returns the index of the largest value along ``axis`` (0 when None), as
    ``output_type`` (int64 or int32); the first on ties, and a NaN never wins (ArgMax)."""
    del name
    return _arg(_mt.arg_max, input, axis, output_type)


def argmin(input, axis=None, output_type=_mt.DType.int64, name=None):  # noqa: A002
    """Returns the index of the smallest value along ``axis`` (ArgMin), as argmax."""
    del name
    return _arg(_mt.arg_min, input, axis, output_type)
