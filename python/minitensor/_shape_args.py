"""The shape ops' integer arguments converted as TensorFlow's: reshape, transpose, squeeze,
split, slice, strided_slice, broadcast_to and tile (re-exported as ``mt.reshape``, ...).

Their bindings take a Python int, or a list or tuple of ints, and read a tensor's elements
straight from its buffer. Here a shape, perm, axis list, begin, size or multiples may also
be a tensor, a variable, a NumPy array, or a list holding scalar tensors (``[n, -1]``), as
TensorFlow takes them. A tensor read this way is a host read: while mt.function traces it
raises OperatorNotAllowedInGraphError naming the user's line, since the replay would repeat
the trace's shape whatever the tensor holds later (docs/function.md, "Reading values while
tracing"). A list of Python ints goes straight to the binding.

    mt.reshape(x, [mt.shape(x)[0] * 2, -1])    # eagerly: the tensor's value
    mt.tile(x, np.array([1, 2]))
"""

import numpy as _np

from . import _host_reads
from . import _minitensor as _mt
from ._constant_op import copy_to_numpy

__all__ = ["broadcast_to", "reshape", "slice", "split", "squeeze", "strided_slice", "tile",
           "transpose"]

_PLAIN = (list, tuple, int)


def _int(value, op, what):
    """One integer: a Python or NumPy integer, or a scalar integer tensor read on the host."""
    if isinstance(value, _mt._Variable):
        value = value.read_value()
    if isinstance(value, _mt.Tensor):
        _host_reads.check(f"the {what} of `mt.{op}`")
        array = copy_to_numpy(value)
        if array.ndim != 0 or array.dtype.kind not in "iu":
            raise TypeError(f"[{op}] each element of `{what}` must be an integer; got a "
                            f"tensor of shape {tuple(array.shape)} and dtype {value.dtype.name}")
        return int(array)
    if isinstance(value, (bool, _np.bool_)) or not isinstance(value, (int, _np.integer)):
        raise TypeError(f"[{op}] `{what}` must hold integers; got {value!r}")
    return int(value)


def _ints(value, op, what):
    """``value`` as a Python int or a list of them (see the module's doc)."""
    if isinstance(value, _mt._Variable):
        value = value.read_value()
    if isinstance(value, _mt.Tensor):
        _host_reads.check(f"the {what} of `mt.{op}`")
        array = copy_to_numpy(value)
        if array.dtype.kind not in "iu" or array.ndim > 1:
            raise TypeError(f"[{op}] `{what}` must be an integer tensor of rank 0 or 1; got "
                            f"shape {tuple(array.shape)} and dtype {value.dtype.name}")
        return array.tolist()
    if isinstance(value, _np.ndarray):
        if value.dtype.kind not in "iu" or value.ndim > 1:
            raise TypeError(f"[{op}] `{what}` must be an integer array of rank 0 or 1; got "
                            f"shape {value.shape} and dtype {value.dtype}")
        return value.tolist()
    if isinstance(value, (int, _np.integer)) and not isinstance(value, (bool, _np.bool_)):
        return int(value)
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"[{op}] `{what}` must be an integer, a list of integers or an "
                        f"integer tensor; got {value!r}") from None
    return [_int(v, op, what) for v in items]


def _plain(value):
    """Whether the binding takes ``value`` as it is: an int or a list or tuple of ints."""
    if type(value) is int:
        return True
    return type(value) in _PLAIN and all(type(v) is int for v in value)


def reshape(tensor, shape, name=None):
    """Reshapes ``tensor`` to ``shape`` (one dimension may be -1)."""
    del name
    return _mt.reshape(tensor, shape if _plain(shape) else _ints(shape, "reshape", "shape"))


def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes ``a``'s dimensions by ``perm`` (reversed when None)."""
    del conjugate, name  # no complex dtypes: the conjugate is the value
    if perm is not None and not _plain(perm):
        perm = _ints(perm, "transpose", "perm")
    return _mt.transpose(a, perm)


def squeeze(input, axis=None, name=None):  # noqa: A002  (TensorFlow's name)
    """Removes the dimensions of size 1 (those of ``axis`` only, when given)."""
    del name
    if axis is not None and not _plain(axis):
        axis = _ints(axis, "squeeze", "axis")
    return _mt.squeeze(input, axis)


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Splits ``value`` along ``axis`` into that many equal parts, or parts of those sizes."""
    del num, name
    if not _plain(num_or_size_splits):
        num_or_size_splits = _ints(num_or_size_splits, "split", "num_or_size_splits")
    return _mt.split(value, num_or_size_splits, _int(axis, "split", "axis"))


def slice(input_, begin, size, name=None):  # noqa: A001  (TensorFlow's name: tf.slice)
    """Returns the block of ``size`` (-1: to the end) that starts at ``begin``."""
    del name
    if not _plain(begin):
        begin = _ints(begin, "slice", "begin")
    if not _plain(size):
        size = _ints(size, "slice", "size")
    return _mt.slice(input_, begin, size)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """TensorFlow's strided slice: ``begin``, ``end`` and ``strides`` with the five masks."""
    del var, name
    begin, end = (v if _plain(v) else _ints(v, "strided_slice", what)
                  for v, what in ((begin, "begin"), (end, "end")))
    if strides is not None and not _plain(strides):
        strides = _ints(strides, "strided_slice", "strides")
    return _mt.strided_slice(input_, begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                             new_axis_mask, shrink_axis_mask)


def broadcast_to(input, shape, name=None):  # noqa: A002  (TensorFlow's name)
    """Broadcasts ``input`` to ``shape``."""
    del name
    return _mt.broadcast_to(input, shape if _plain(shape) else
                            _ints(shape, "broadcast_to", "shape"))


def tile(input, multiples, name=None):  # noqa: A002  (TensorFlow's name)
    """Repeats ``input`` ``multiples[i]`` times along dimension i."""
    del name
    return _mt.tile(input, multiples if _plain(multiples) else
                    _ints(multiples, "tile", "multiples"))
