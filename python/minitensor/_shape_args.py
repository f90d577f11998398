"""The shape ops' and reductions' integer arguments converted as TensorFlow's: reshape,
transpose, squeeze, split, slice, strided_slice, broadcast_to, tile and the reduce_* ops'
``axis`` (re-exported as ``mt.reshape``, ``mt.math.reduce_sum``, ...).

Their bindings take a Python int, or a list or tuple of ints, and read a tensor's elements
straight from its buffer. Here a shape, perm, axis list, begin, size or multiples may also
be a tensor, a variable, a NumPy array, or a list holding scalar tensors (``[n, -1]``), as
TensorFlow takes them. A tensor read this way is a host read: while mt.function traces it
raises OperatorNotAllowedInGraphError naming the user's line, since the replay would repeat
the trace's shape whatever the tensor holds later (docs/function.md, "Reading values while
tracing"). An int, list or tuple goes straight to the binding (a scalar tensor in it is
read through its ``__index__``, the same check); what the binding refuses is converted here,
which says why.

    mt.reshape(x, [mt.shape(x)[0] * 2, -1])    # eagerly: the tensor's value
    mt.tile(x, np.array([1, 2]))
"""

import numpy as _np

from . import _host_reads
from . import _minitensor as _mt
from ._constant_op import copy_to_numpy

REDUCTIONS = ("reduce_all", "reduce_any", "reduce_max", "reduce_mean", "reduce_min",
              "reduce_prod", "reduce_sum")

__all__ = ["broadcast_to", "reshape", "slice", "split", "squeeze", "strided_slice", "tile",
           "transpose", *REDUCTIONS]

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


def _bad_cast(error):
    """Whether the binding refused an element it could not take as an int (a variable, a
    float, a tensor it may not read): the Python conversion then runs and says why."""
    return str(error) == "std::bad_cast"


def _call(binding, op, head, ints, tail=()):
    """``binding(*head, *ints, *tail)``: a list, tuple or int of ``ints`` goes straight to
    the binding, anything else (and anything it refuses) through ``_ints`` first. ``ints``
    is a tuple of (value, what) pairs; a None value stays None."""
    if all(v is None or type(v) in _PLAIN for v, _ in ints):
        try:
            return binding(*head, *(v for v, _ in ints), *tail)
        except RuntimeError as e:
            if not _bad_cast(e):
                raise
    return binding(*head, *(None if v is None else _ints(v, op, what) for v, what in ints),
                   *tail)


def _call1(binding, op, x, value, what):
    """``binding(x, value)`` for one integer argument, as ``_call`` (spelt out: reshape and
    transpose are called often)."""
    if value is None or type(value) in _PLAIN:
        try:
            return binding(x, value)
        except RuntimeError as e:
            if not _bad_cast(e):
                raise
    return binding(x, _ints(value, op, what))


def reshape(tensor, shape, name=None):
    """Reshapes ``tensor`` to ``shape`` (one dimension may be -1)."""
    del name
    return _call1(_mt.reshape, "reshape", tensor, shape, "shape")


def transpose(a, perm=None, conjugate=False, name=None):
    """Permutes ``a``'s dimensions by ``perm`` (reversed when None)."""
    del conjugate, name  # no complex dtypes: the conjugate is the value
    return _call1(_mt.transpose, "transpose", a, perm, "perm")


def squeeze(input, axis=None, name=None):  # noqa: A002  (TensorFlow's name)
    """Removes the dimensions of size 1 (those of ``axis`` only, when given)."""
    del name
    return _call1(_mt.squeeze, "squeeze", input, axis, "axis")


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Splits ``value`` along ``axis`` into that many equal parts, or parts of those sizes."""
    del num, name
    return _call(_mt.split, "split", (value,), ((num_or_size_splits, "num_or_size_splits"),),
                 (_int(axis, "split", "axis"),))


def slice(input_, begin, size, name=None):  # noqa: A001  (TensorFlow's name: tf.slice)
    """Returns the block of ``size`` (-1: to the end) that starts at ``begin``."""
    del name
    return _call(_mt.slice, "slice", (input_,), ((begin, "begin"), (size, "size")))


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """TensorFlow's strided slice: ``begin``, ``end`` and ``strides`` with the five masks."""
    del var, name
    return _call(_mt.strided_slice, "strided_slice", (input_,),
                 ((begin, "begin"), (end, "end"), (strides, "strides")),
                 (begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask))


def broadcast_to(input, shape, name=None):  # noqa: A002  (TensorFlow's name)
    """Broadcasts ``input`` to ``shape``."""
    del name
    return _call1(_mt.broadcast_to, "broadcast_to", input, shape, "shape")


def tile(input, multiples, name=None):  # noqa: A002  (TensorFlow's name)
    """Repeats ``input`` ``multiples[i]`` times along dimension i."""
    del name
    return _call1(_mt.tile, "tile", input, multiples, "multiples")


def _reduction(op):
    binding = getattr(_mt, op)

    def reduce(input_tensor, axis=None, keepdims=False, name=None):
        del name
        if axis is None or type(axis) in _PLAIN:
            try:
                return binding(input_tensor, axis, keepdims)
            except RuntimeError as e:
                if not _bad_cast(e):
                    raise
        return binding(input_tensor, _ints(axis, op, "axis"), keepdims)

    reduce.__name__ = reduce.__qualname__ = op
    reduce.__doc__ = (f"{binding.__doc__ or op}\n\n``axis``: None (all), an int, a list of "
                      "ints, or an integer tensor or array (read on the host).")
    return reduce


reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum = (
    _reduction(op) for op in REDUCTIONS)
