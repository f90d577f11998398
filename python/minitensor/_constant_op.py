"""Tensors from Python values: ``constant``, ``convert_to_tensor``, ``fill``, ``zeros`` and
``ones`` (re-exported as ``mt.constant``, ...). Modules of the package import them from
here, below the package's ``__init__``."""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence

import numpy as _np

from . import _minitensor as _mt
from . import _host_reads
from . import errors
from ._conversion import to_array
from ._dtypes import DTypeLike, as_dtype, float32
from ._minitensor import DType, Tensor

__all__ = ["constant", "convert_to_tensor", "copy_to_numpy", "fill", "ones", "values", "zeros"]

copy_to_numpy = Tensor.numpy  # the binding, without the host-read check __init__ adds


def values(t: Tensor):
    """Returns ``t``'s elements as a NumPy array, widened exactly to float32 for bfloat16
    (NumPy has none)."""
    return copy_to_numpy(_mt.cast(t, float32) if t.dtype == DType.bfloat16 else t)


def constant(value: Any, dtype: Optional[DTypeLike] = None,
             shape: Optional[Sequence[int]] = None, name: Optional[str] = None) -> Tensor:
    """Creates a tensor (_EagerConst) from a Python scalar, a nested list or a NumPy array,
    on the device the current ``mt.device`` scope asks for."""
    if isinstance(value, _mt._Variable):
        value = _mt._variable_value(value)  # cast inside a mixed-precision layer's call
        if dtype is not None:  # TensorFlow casts a variable's value, but no other tensor
            return _mt.cast(value, as_dtype(dtype))
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise TypeError(f"Expected tensor {values(value)} with dtype "
                            f"{as_dtype(dtype)!r}, but got dtype {value.dtype!r}.")
        return value
    if dtype is not None and as_dtype(dtype) == DType.bfloat16:
        # NumPy has no bfloat16: build float32, then round each value once (Cast).
        return _mt.cast(constant(value, float32, shape), DType.bfloat16)
    array = to_array(value, None if dtype is None else as_dtype(dtype))
    if shape is not None:
        shape = tuple(shape)
        array = _np.broadcast_to(array, shape) if array.size == 1 else array.reshape(shape)
    return _mt.constant_from_array(_np.asarray(array, order="C"), as_dtype(array.dtype))


def convert_to_tensor(value: Any, dtype: Optional[DTypeLike] = None,
                      name: Optional[str] = None) -> Tensor:
    """Returns ``value`` if it is a tensor (of ``dtype``), else ``constant(value, dtype)``."""
    if isinstance(value, _mt._Variable):
        value = _mt._variable_value(value)  # cast inside a mixed-precision layer's call
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype).name} "
                             f"for Tensor with dtype {value.dtype.name}")
        return value
    return constant(value, dtype)


def _dims(shape, op) -> list:
    """A shape as Python ints: a sequence of ints, NumPy integers or scalar tensors, or a 1-D
    integer tensor (read on the host, as TensorFlow's eager ops read it: an error naming
    ``op``'s shape while mt.function traces)."""
    if isinstance(shape, (Tensor, _mt._Variable)):
        _host_reads.check(f"the shape of `mt.{op}`")
        shape = copy_to_numpy(convert_to_tensor(shape)).tolist()
        if not isinstance(shape, list):
            shape = [shape]
    dims = []
    for d in shape:
        if isinstance(d, (Tensor, _mt._Variable)):
            _host_reads.check(f"the shape of `mt.{op}`")
            d = copy_to_numpy(convert_to_tensor(d))
        try:
            dims.append(operator.index(d))
        except TypeError:
            raise TypeError(f"Expected an integer dimension, got {d!r} in shape {shape!r}") from None
    return dims


def fill(dims: Sequence[int], value: Any, name: Optional[str] = None) -> Tensor:
    """Creates a tensor of shape ``dims`` with every element ``value`` (Fill); a tensor
    ``value`` keeps its dtype and is broadcast by an op (a function records it)."""
    if isinstance(value, (Tensor, _mt._Variable)):
        value = convert_to_tensor(value)
        if value.ndim != 0:
            raise errors.InvalidArgumentError(
                None, None, f"[Fill] value must represent a scalar, got shape {list(value.shape)}")
        return _mt.broadcast_to(value, _dims(dims, "fill"))
    array = to_array(value, None)
    return _mt.fill(_dims(dims, "fill"), float(array), as_dtype(array.dtype))


def zeros(shape: Sequence[int], dtype: DTypeLike = float32, name: Optional[str] = None) -> Tensor:
    return _mt.fill(_dims(shape, "zeros"), 0.0, as_dtype(dtype))


def ones(shape: Sequence[int], dtype: DTypeLike = float32, name: Optional[str] = None) -> Tensor:
    return _mt.fill(_dims(shape, "ones"), 1.0, as_dtype(dtype))
