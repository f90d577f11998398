"""The dtypes under TensorFlow's names, and ``as_dtype`` (re-exported as ``mt.float32``,
``mt.as_dtype``, ...). A DType equals itself, its name and its NumPy type, as tf.DType."""

from __future__ import annotations

import builtins as _builtins
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


# TensorFlow's names of the dtypes minitensor has (tf.as_dtype's strings).
_NAMES = {"float16": DType.float16, "half": DType.float16, "float32": DType.float32,
          "float": DType.float32, "float64": DType.float64, "double": DType.float64,
          "int32": DType.int32, "int64": DType.int64, "bool": DType.bool,
          "bfloat16": DType.bfloat16}
# Python's types as TensorFlow takes them: float is float32; int names no dtype there.
_PYTHON_TYPES = {float: DType.float32, _builtins.bool: DType.bool}


def as_dtype(value: DTypeLike) -> DType:
    """Returns the DType of ``value``: a DType, TensorFlow's name of one ("float32",
    "float", "double", "half"), a NumPy dtype or type, or Python's ``float`` (float32) or
    ``bool``. Anything else is TensorFlow's TypeError."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        found = _NAMES.get(value)
    elif isinstance(value, type) and value in _PYTHON_TYPES:
        found = _PYTHON_TYPES[value]
    elif value is int:
        found = None
    else:
        try:
            found = _FROM_NUMPY.get(_np.dtype(value))
        except TypeError:
            found = None
    if found is None:
        raise TypeError(f"Cannot convert the argument `type_value`: {value!r} to a "
                        "minitensor DType.")
    return found


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


_FLOATING = (DType.float16, DType.bfloat16, DType.float32, DType.float64)
_INTEGER = (DType.int32, DType.int64)
_BFLOAT16_MAX = (2 - 2 ** -7) * 2.0 ** 127


def _limit(dtype, which):
    """tf.DType.min / max: the dtype's lowest or highest finite value."""
    if dtype in _INTEGER:
        info = _np.iinfo(_TO_NUMPY[dtype])
    elif dtype == DType.bfloat16:
        return -_BFLOAT16_MAX if which == "min" else _BFLOAT16_MAX
    elif dtype in _FLOATING:
        info = _np.finfo(_TO_NUMPY[dtype])
    else:
        raise TypeError(f"Cannot find {'minimum' if which == 'min' else 'maximum'} value of "
                        f"{dtype!r} with type {dtype!r}.")
    return getattr(info, which)


def _is_compatible_with(self, other):
    """tf.DType.is_compatible_with: whether ``other`` (anything as_dtype takes) is this."""
    return as_dtype(other) is self


DType.as_numpy_dtype = property(numpy_dtype)
DType.is_floating = property(lambda self: self in _FLOATING)
DType.is_integer = property(lambda self: self in _INTEGER)
DType.is_bool = property(lambda self: self is DType.bool)
DType.is_unsigned = property(lambda self: False)  # minitensor has no unsigned dtype
DType.is_complex = property(lambda self: False)
DType.is_quantized = property(lambda self: False)
DType.base_dtype = property(lambda self: self)
DType.real_dtype = property(lambda self: self)
DType.min = property(lambda self: _limit(self, "min"))
DType.max = property(lambda self: _limit(self, "max"))
DType.is_compatible_with = _is_compatible_with
DType.__repr__ = lambda self: "mt." + self.name
DType.__str__ = lambda self: f"<dtype: '{self.name}'>"  # tf.DType's str
_dtype_hash = DType.__hash__
DType.__eq__ = _dtype_equal
DType.__ne__ = _dtype_not_equal
DType.__hash__ = _dtype_hash  # unchanged: a DType keys dicts as before
DType.__module__ = "minitensor"
