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
from typing import Any as _Any, Optional as _Optional, Sequence as _Sequence, Union as _Union

import numpy as _np

from . import _minitensor as _mt
from ._minitensor import (
    DType, Tensor, abs, add, equal, exp, floor, greater, greater_equal,
    less, less_equal, logical_and, logical_not, logical_or, maximum, minimum,
    multiply, negative, not_equal, pow, reduce_max, reduce_mean, reduce_sum, reduce_all,
    reduce_any, reduce_min, reduce_prod, round, sigmoid, sign, sqrt, square, subtract, tanh)
from ._index_ops import argmax, argmin, where
from ._converted_ops import add_n, cast, identity, matmul, one_hot, ones_like, zeros_like
from ._division import divide, truediv  # noqa: F401  (also Tensor's / on integers)
from . import _operators  # noqa: F401  (Tensor's ==, <, ..., bool() and hash())
from . import _host_reads
from ._conversion import to_array as _to_array
from ._minitensor import unsorted_segment_sum as _unsorted_segment_sum  # noqa: F401
from ._tape import GradientTape, UnconnectedGradients, stop_gradient
from ._variables import Variable
from ._function import function
from ._control_flow import cond, while_loop
from ._clip_ops import clip_by_global_norm, clip_by_norm, clip_by_value
# Shape and data movement (TensorFlow's names; `slice` shadows the builtin here as in tf).
from ._minitensor import (  # noqa: A004
    broadcast_to, concat, expand_dims, gather, reshape, slice, split, squeeze, stack,
    strided_slice, tile, transpose)

__version__ = "0.1.0"

float32 = DType.float32
float64 = DType.float64
int32 = DType.int32
int64 = DType.int64
bool = DType.bool  # noqa: A001  (TensorFlow's name: tf.bool)
bfloat16 = DType.bfloat16
float16 = DType.float16
half = DType.float16  # TensorFlow's alias: tf.half
newaxis = None  # tf.newaxis: t[mt.newaxis] inserts a dimension of size 1

DTypeLike = _Union[DType, str, type, _np.dtype]

_TO_NUMPY = {
    DType.float32: _np.float32, DType.float64: _np.float64, DType.int32: _np.int32,
    DType.int64: _np.int64, DType.bool: _np.bool_, DType.float16: _np.float16,
}
_FROM_NUMPY = {_np.dtype(v): k for k, v in _TO_NUMPY.items()}


def _numpy_dtype(dtype: DType):
    """Returns NumPy's type for ``dtype``; NumPy has no bfloat16, which raises TypeError."""
    if dtype == DType.bfloat16:
        raise TypeError("NumPy has no bfloat16; minitensor converts bfloat16 through float32")
    return _TO_NUMPY[dtype]


DType.as_numpy_dtype = property(_numpy_dtype)
DType.__repr__ = lambda self: "mt." + self.name


def _iter(self):
    """Iterates over the first dimension, as tf.Tensor does (a scalar raises TypeError)."""
    if self.ndim == 0:
        raise TypeError("Cannot iterate over a scalar tensor.")
    return (self[i] for i in range(len(self)))


# Without it Python would iterate through __getitem__ until an IndexError that never comes.
Tensor.__iter__ = _iter


def as_dtype(value: DTypeLike) -> DType:
    """Returns the DType of ``value``: a DType, a NumPy dtype or type, or a name."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in DType.__members__:
        return DType[value]
    try:
        return _FROM_NUMPY[_np.dtype(value)]
    except (KeyError, TypeError):
        raise TypeError(f"minitensor has no dtype for {value!r}") from None


def _dtype_equal(self, other):
    """A DType equals itself, its name ("float32") and its NumPy type, as tf.DType."""
    if isinstance(other, DType):
        return self is other
    if isinstance(other, (str, type, _np.dtype)):
        try:
            return as_dtype(other) is self
        except TypeError:
            return False
    return NotImplemented


def _dtype_not_equal(self, other):
    equal = _dtype_equal(self, other)
    return equal if equal is NotImplemented else not equal


_dtype_hash = DType.__hash__
DType.__eq__ = _dtype_equal
DType.__ne__ = _dtype_not_equal
DType.__hash__ = _dtype_hash  # unchanged: a DType keys dicts as before


def constant(value: _Any, dtype: _Optional[DTypeLike] = None,
             shape: _Optional[_Sequence[int]] = None, name: _Optional[str] = None) -> Tensor:
    """Creates a tensor (_EagerConst) from a Python scalar, a nested list or a NumPy array,
    on the device the current ``mt.device`` scope asks for."""
    if isinstance(value, _mt._Variable):
        value = value.read_value()
        if dtype is not None:  # TensorFlow casts a variable's value, but no other tensor
            return cast(value, as_dtype(dtype))
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise TypeError(f"Expected tensor {_values(value)} with dtype "
                            f"{as_dtype(dtype)!r}, but got dtype {value.dtype!r}.")
        return value
    if dtype is not None and as_dtype(dtype) == DType.bfloat16:
        # NumPy has no bfloat16: build float32, then round each value once (Cast).
        return cast(constant(value, float32, shape), DType.bfloat16)
    array = _to_array(value, None if dtype is None else as_dtype(dtype))
    if shape is not None:
        shape = tuple(shape)
        array = _np.broadcast_to(array, shape) if array.size == 1 else array.reshape(shape)
    return _mt.constant_from_array(_np.asarray(array, order="C"), as_dtype(array.dtype))


def convert_to_tensor(value: _Any, dtype: _Optional[DTypeLike] = None,
                      name: _Optional[str] = None) -> Tensor:
    """Returns ``value`` if it is a tensor (of ``dtype``), else ``constant(value, dtype)``."""
    if isinstance(value, _mt._Variable):
        value = value.read_value()
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}")
        return value
    return constant(value, dtype)


def fill(dims: _Sequence[int], value: _Any, name: _Optional[str] = None) -> Tensor:
    """Creates a tensor of shape ``dims`` with every element ``value`` (Fill); a tensor
    ``value`` keeps its dtype and is broadcast by an op (a function records it)."""
    if isinstance(value, (Tensor, _mt._Variable)):
        value = convert_to_tensor(value)
        if value.ndim != 0:
            raise errors.InvalidArgumentError(
                None, None, f"[Fill] value must represent a scalar, got shape {list(value.shape)}")
        return broadcast_to(value, list(dims))
    array = _to_array(value, None)
    return _mt.fill(list(dims), float(array), as_dtype(array.dtype))


def zeros(shape: _Sequence[int], dtype: DTypeLike = float32,
          name: _Optional[str] = None) -> Tensor:
    return _mt.fill(list(shape), 0.0, as_dtype(dtype))


def ones(shape: _Sequence[int], dtype: DTypeLike = float32,
         name: _Optional[str] = None) -> Tensor:
    return _mt.fill(list(shape), 1.0, as_dtype(dtype))


def device(device_name: _Union[str, config.LogicalDevice]) -> _mt.DeviceBlock:
    """Asks that the ops of this thread run on ``device_name`` inside a ``with`` block:
    ``with mt.device("/GPU:0"):``. Blocks nest; each thread has its own."""
    if isinstance(device_name, (config.LogicalDevice, config.PhysicalDevice)):
        device_name = device_name.name
    return _mt.DeviceBlock(device_name)


def from_dlpack(array: _Any) -> Tensor:
    """Creates a tensor over the memory of ``array`` (any object with ``__dlpack__``, on the
    CPU or a GPU) without copying; the producer's memory stays alive while the tensor does.
    A GPU producer is asked to order its work before minitensor's stream."""
    if hasattr(array, "__dlpack_device__") and array.__dlpack_device__()[0] == 2:
        stream = _mt.dlpack_stream(array.__dlpack_device__()[1])
        return _mt.from_dlpack(array.__dlpack__(stream=stream))
    return _mt.from_dlpack(array)


_copy_to_numpy = Tensor.numpy  # the binding, without the check below


def _numpy(t):
    """Copies the elements into a new NumPy array; an error while mt.function traces."""
    _host_reads.check("`.numpy()`")
    return _copy_to_numpy(t)


def _values(t):
    """Returns ``t.numpy()``, widened exactly to float32 for bfloat16 (NumPy has none)."""
    return _copy_to_numpy(cast(t, float32) if t.dtype == DType.bfloat16 else t)


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


Tensor.__repr__ = _repr
Tensor.__array__ = _array
Tensor.numpy = _numpy
Tensor.__float__ = _scalar(float, "a Python `float`")
Tensor.__int__ = _scalar(int, "a Python `int`")
Tensor.__bool__ = _scalar(lambda x: x.__bool__(), "a Python `bool`")
Tensor.__module__ = "minitensor"
DType.__module__ = "minitensor"

# The composites and submodules come last: the names above (constant, convert_to_tensor,
# as_dtype) exist by the time they import them.
from ._composite_reductions import norm, reduce_logsumexp  # noqa: E402
from ._einsum import einsum  # noqa: E402
from . import (config, data, debugging, distribute, errors, keras, linalg, math, nn,  # noqa: E402
               random, trace, train)
optimizers = keras.optimizers  # tf.optimizers
TensorSpec = data.TensorSpec  # tf.TensorSpec: mt.function's input_signature, a dataset's spec

# The log sink may hold a Python callable; drop it while the interpreter still runs.
_atexit.register(_mt.set_log_sink, None)
