"""tf.range: the Range op with the dtype inferred from its arguments as tf.range infers it.

    mt.range(5)                      # int32 [0, 1, 2, 3, 4]
    mt.range(1, 5.0)                 # float32 [1, 2, 3, 4]
    mt.range(10, 1, -3, dtype=mt.int64)   # int64 [10, 7, 4]
"""

from __future__ import annotations

from typing import Any, Optional

from . import _host_reads
from . import _minitensor as _mt
from . import errors
from ._constant_op import convert_to_tensor, values
from ._conversion import to_array
from ._dtypes import DTypeLike, as_dtype, bfloat16, float16, float32, float64, int32, int64
from ._minitensor import DType, Tensor

__all__ = ["range"]

# tf.range's order of dtypes: without a dtype, the output takes its arguments' last one here.
_ORDER = (int32, int64, float16, bfloat16, float32, float64)


def _argument(name: str, value: Any, dtype: Optional[DType]):
    """Returns (dtype, 0-d NumPy value) of one argument: a tensor keeps its dtype (cast to
    ``dtype`` when given), a Python or NumPy value converts as convert_to_tensor does."""
    if isinstance(value, (Tensor, _mt._Variable)):
        _host_reads.check(f"the {name} of `mt.range`")  # a trace would fix its value
        t = convert_to_tensor(value)
        if dtype is not None and t.dtype != dtype:
            t = _mt.cast(t, dtype)
        shape, got, array = list(t.shape), t.dtype, values(t)
    else:  # bfloat16 through float32 (NumPy has none); Range rounds the bounds to the dtype
        array = to_array(value, float32 if dtype == bfloat16 else dtype)
        shape, got = list(array.shape), dtype or as_dtype(array.dtype)
    if shape:
        raise errors.InvalidArgumentError(
            None, None, f"[Range] {name} must be a scalar, not shape {shape}")
    if got not in _ORDER:
        raise TypeError(f"[Range] {name} has dtype {got.name}, which Range does not take")
    return got, array


def range(start, limit=None, delta=1, dtype: Optional[DTypeLike] = None,
          name: Optional[str] = None) -> Tensor:  # noqa: A001  (tf.range's name)
    """Returns the 1-D tensor start, start + delta, ... up to ``limit``, excluded (Range);
    ``range(n)`` counts from 0. Without ``dtype`` the output takes the widest dtype of the
    arguments (int32 < int64 < float16 < bfloat16 < float32 < float64; a Python int is
    int32, a float float32). A zero delta, or one that moves away from limit, raises
    InvalidArgumentError. Tensor arguments are read on the host, which mt.function's trace
    refuses (OperatorNotAllowedInGraphError): the length would be fixed at the trace."""
    if limit is None:
        start, limit = 0, start
    want = None if dtype is None else as_dtype(dtype)
    args = [_argument(n, v, want) for n, v in (("start", start), ("limit", limit),
                                                  ("delta", delta))]
    out = want or max((d for d, _ in args), key=_ORDER.index)
    numbers = [float(a) for _, a in args]
    if out in (int32, int64):
        numbers = [float(int(a)) for _, a in args]
    return _mt.range(*numbers, out)
