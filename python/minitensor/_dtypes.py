"""The dtypes under TensorFlow's names, and ``as_dtype`` (re-exported as ``mt.float32``,
``mt.as_dtype``, ...). A DType equals itself, its name and its NumPy type, as tf.DType."""

from __future__ import annotations

from typing import Union

import numpy as _np

from ._minitensor import DType

__all__ = ["DTypeLike", "as_dtype", "bfloat16", "bool", "float16", "float32", "float64",
           "half", "int32", "int64", "numpy_dtype"]

float32 = DType.float32
float64 = DType.float64
int32 = DType.int32
int64 = DType.int64
bool = DType.bool  # noqa: A001  (TensorFlow's name: tf.bool)
bfloat16 = DType.bfloat16
float16 = DType.float16
half = DType.float16  # TensorFlow's alias: tf.half

DTypeLike = Union[DType, str, type, _np.dtype]

_TO_NUMPY = {
    DType.float32: _np.float32, DType.float64: _np.float64, DType.int32: _np.int32,
    DType.int64: _np.int64, DType.bool: _np.bool_, DType.float16: _np.float16,
}
_FROM_NUMPY = {_np.dtype(v): k for k, v in _TO_NUMPY.items()}


def numpy_dtype(dtype: DType):
    """Returns NumPy's type for ``dtype``; NumPy has no bfloat16, which raises TypeError."""
    if dtype == DType.bfloat16:
        raise TypeError("NumPy has no bfloat16; minitensor converts bfloat16 through float32")
    return _TO_NUMPY[dtype]


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


DType.as_numpy_dtype = property(numpy_dtype)
DType.__repr__ = lambda self: "mt." + self.name
_dtype_hash = DType.__hash__
DType.__eq__ = _dtype_equal
DType.__ne__ = _dtype_not_equal
DType.__hash__ = _dtype_hash  # unchanged: a DType keys dicts as before
DType.__module__ = "minitensor"
