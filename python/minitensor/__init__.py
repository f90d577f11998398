"""minitensor from Python, with TensorFlow's names: ``import minitensor as mt``.

    import minitensor as mt

    mt.debugging.set_log_device_placement(True)
    a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with mt.device("/CPU:0"):
        c = mt.matmul(a, b)
    print(c)          # Tensor(...), as the C++ runtime prints it
    c.numpy()         # a NumPy copy; np.asarray(c) and np.from_dlpack(c) share memory

Tensors are immutable. Ops run on the device the placement rules choose and release the
GIL while they run. Errors are the exceptions of ``mt.errors``.
"""

from __future__ import annotations

import atexit as _atexit
import builtins as _builtins
from typing import Any as _Any

import numpy as _np

from . import _minitensor as _mt
from ._minitensor import DType, Tensor
from ._op_table import exports as _exports

# The op table's top-level rows (add, reduce_sum, reshape, ...: kernels/op_table.h); the
# Python wrappers imported or defined below replace the bindings of the same name.
globals().update(_exports(""))
from ._dtypes import (  # noqa: F401  (tf.float32, ...)
    DTypeLike, as_dtype, bfloat16, bool, float16, float32, float64, half, int32, int64)
from ._constant_op import constant, convert_to_tensor, fill, ones, zeros
from ._device_scope import device
from ._constant_op import copy_to_numpy as _copy_to_numpy, values as _values
from ._index_ops import argmax, argmin, where
from ._converted_ops import add_n, cast, identity, matmul, one_hot, ones_like, zeros_like
from ._shape_args import (  # noqa: A004  (TensorFlow's names: tf.slice)
    broadcast_to, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod,
    reduce_sum, reshape, slice, split, squeeze, strided_slice, tile, transpose)
from ._division import divide, truediv  # noqa: F401  (also Tensor's / on integers)
from . import _operators  # noqa: F401  (Tensor's ==, <, ..., bool() and hash())
from . import _host_reads
from ._minitensor import unsorted_segment_sum as _unsorted_segment_sum  # noqa: F401
from ._minitensor import cumsum  # noqa: F401  (tf.cumsum; the row is math.cumsum)
from ._tape import GradientTape, UnconnectedGradients, stop_gradient
from ._variables import Variable
from ._function import function
from ._control_flow import cond, while_loop
from ._clip_ops import clip_by_global_norm, clip_by_norm, clip_by_value
from ._scatter_ops import scatter_nd, tensor_scatter_nd_add, tensor_scatter_nd_update
from ._range import range  # noqa: A001  (tf.range; the module's code uses _builtins.range)
from ._pad_ops import pad
from ._sort_ops import argsort, sort

__version__ = "0.1.0"

newaxis = None  # tf.newaxis: t[mt.newaxis] inserts a dimension of size 1


def _iter(self):
    """Iterates over the first dimension, as tf.Tensor does (a scalar raises TypeError)."""
    if self.ndim == 0:
        raise TypeError("Cannot iterate over a scalar tensor.")
    return (self[i] for i in _builtins.range(len(self)))


# Without it Python would iterate through __getitem__ until an IndexError that never comes.
Tensor.__iter__ = _iter


def from_dlpack(array: _Any) -> Tensor:
    """Creates a tensor over the memory of ``array`` (any object with ``__dlpack__``, on the
    CPU or a GPU) without copying; the producer's memory stays alive while the tensor does.
    A GPU producer is asked to order its work before minitensor's stream."""
    if hasattr(array, "__dlpack_device__") and array.__dlpack_device__()[0] == 2:
        stream = _mt.dlpack_stream(array.__dlpack_device__()[1])
        return _mt.from_dlpack(array.__dlpack__(stream=stream))
    return _mt.from_dlpack(array)


def _numpy(t):
    """Copies the elements into a new NumPy array; an error while mt.function traces."""
    _host_reads.check("`.numpy()`")
    return _copy_to_numpy(t)


def _numpy_text(t):
    text = repr(_values(t).tolist()) if t.ndim == 0 else _np.array_repr(_values(t))
    if t.dtype == DType.bfloat16:  # float32 digits of the exact values, labelled bfloat16
        text = text.replace("dtype=float32", "dtype=bfloat16")
    return "\n" + text if "\n" in text else text


def _repr(t):
    return f"<mt.Tensor: shape={t.shape}, dtype={t.dtype.name}, numpy={_numpy_text(t)}>"


def _array(t, dtype=None, copy=None):
    _host_reads.check("a NumPy array")
    if t.__dlpack_device__()[0] == 1:  # host memory
        array = _np.asarray(memoryview(t))
        if copy:
            array = array.copy()
    elif copy is False:
        raise ValueError("a GPU tensor cannot become a NumPy array without a copy")
    else:
        array = _copy_to_numpy(t)
    return array if dtype is None else array.astype(dtype, copy=False)


def _scalar(convert, what):
    def method(t):
        _host_reads.check(what)
        if t.shape and int(_np.prod(t.shape)) != 1:
            raise ValueError("only a tensor with one element converts to a Python scalar")
        return convert(_values(t).reshape(()))
    return method


def _index(t):
    """An integer scalar tensor as a Python index (a list's index, range's bound, an axis),
    as TensorFlow's eager tensor; an error while mt.function traces."""
    _host_reads.check("a Python index")
    if t.ndim != 0 or t.dtype not in (DType.int32, DType.int64):
        raise TypeError("only integer scalar tensors can be converted to an index; got shape "
                        f"{t.shape} and dtype {t.dtype.name}")
    return int(_values(t))


Tensor.__repr__ = _repr
Tensor.__index__ = _index
Tensor.__array__ = _array
Tensor.numpy = _numpy
Tensor.__float__ = _scalar(float, "a Python `float`")
Tensor.__int__ = _scalar(int, "a Python `int`")
Tensor.__bool__ = _scalar(lambda x: x.__bool__(), "a Python `bool`")
Tensor.__module__ = "minitensor"

# The composites and submodules come last: the names above (constant, convert_to_tensor,
# as_dtype) exist by the time they import them.
from ._composite_reductions import norm, reduce_logsumexp  # noqa: E402
from ._einsum import einsum  # noqa: E402
from . import (config, data, debugging, distribute, errors, io, keras, linalg, math, nn,  # noqa: E402
               random, trace, train)
optimizers = keras.optimizers  # tf.optimizers
TensorSpec = data.TensorSpec  # tf.TensorSpec: mt.function's input_signature, a dataset's spec

# The log sink may hold a Python callable; drop it while the interpreter still runs.
_atexit.register(_mt.set_log_sink, None)
