"""tf.pad: Pad, PadV2 and MirrorPad with TensorFlow's arguments and errors.

    mt.pad(x, [[1, 1], [2, 0]])                      # zeros around (Pad)
    mt.pad(x, [[1, 1], [2, 0]], constant_values=-1)  # PadV2
    mt.pad(x, [[1, 1], [0, 0]], mode="reflect")      # MirrorPad (modes in any case)

The paddings and the constant are read on the host (Note [Pads and top k] in
kernels/pad_shape.cc), so mt.function's trace refuses tensors for them.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as _np

from . import _host_reads
from . import _minitensor as _mt
from . import errors
from ._constant_op import convert_to_tensor, values
from ._minitensor import DType, Tensor

__all__ = ["pad"]

_MODES = ("CONSTANT", "REFLECT", "SYMMETRIC")


def _host_array(value: Any, what: str):
    """Returns ``value`` (a tensor, variable, list or array) as a NumPy array."""
    if isinstance(value, _mt._Variable):
        value = value.read_value()
    if isinstance(value, Tensor):
        _host_reads.check(f"the {what} of `mt.pad`")  # a trace would fix the value
        return values(value)
    return _np.asarray(value)


def paddings_list(op: str, paddings: Any) -> list:
    """Returns tf.pad's paddings, an int32 or int64 [rank, 2] matrix, flattened; raises
    InvalidArgumentError with TensorFlow's words for another dtype or shape."""
    array = _host_array(paddings, "paddings")
    if array.size == 0 and array.dtype == _np.float64 and not isinstance(paddings, Tensor):
        array = array.astype(_np.int32)  # [] or [[]]: no dtype to read
    if array.dtype.kind not in "iu":
        # TensorFlow's names; a Python float converts to float32, as in TensorFlow
        name = {"float64": "double", "float32": "float", "float16": "half"}.get(
            array.dtype.name, array.dtype.name)
        if not isinstance(paddings, (Tensor, _np.ndarray)) and array.dtype.kind == "f":
            name = "float"
        raise errors.InvalidArgumentError(
            None, None, f"Value for attr 'Tpaddings' of {name} is not in the list of allowed "
            "values: int32, int64")
    if array.ndim != 2 or array.shape[1] != 2:
        shape = ",".join(str(d) for d in array.shape)
        raise errors.InvalidArgumentError(
            None, None, f"[{op}] paddings must be a matrix with 2 columns: [{shape}]")
    return [int(v) for v in array.reshape(-1)]


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", constant_values: Any = 0,
        name: Optional[str] = None) -> Tensor:
    """Returns ``tensor`` grown by ``paddings`` (an int32/int64 [rank, 2] matrix of
    (before, after) per dimension), as tf.pad: ``mode`` "CONSTANT" writes
    ``constant_values`` around it (Pad for 0, PadV2 otherwise), "REFLECT" and "SYMMETRIC"
    mirror it at each edge without or with the edge element (MirrorPad; each padding below,
    or at most, the dimension). The mode is case-insensitive; another is a ValueError.
    Negative paddings and paddings of another rank raise InvalidArgumentError with
    TensorFlow's messages. The gradient is a slice of the output's (Pad) or MirrorPadGrad."""
    upper = str(mode).upper()
    if upper not in _MODES:
        raise ValueError('Value of argument `mode` expected to be one of "CONSTANT", '
                         f'"REFLECT", or "SYMMETRIC". Received `mode` = {upper}')
    x = convert_to_tensor(tensor)
    if upper != "CONSTANT":
        return _mt.pad(x, paddings_list("MirrorPad", paddings), upper, 0)
    constant = _host_array(constant_values, "constant_values")
    if constant.ndim != 0:
        shape = ",".join(str(d) for d in constant.shape)
        raise errors.InvalidArgumentError(
            None, None, f"[PadV2] constant_values must be a scalar. Found: [{shape}]")
    value = constant.item()
    if x.dtype in (DType.int32, DType.int64) and not float(value).is_integer():
        raise TypeError(f"Cannot convert {value} to EagerTensor of dtype {x.dtype.name}")
    op = "Pad" if value == 0 else "PadV2"
    return _mt.pad(x, paddings_list(op, paddings), "CONSTANT", float(value))
