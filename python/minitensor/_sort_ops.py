"""tf.math.top_k (TopKV2) and tf.sort / tf.argsort built on it as TensorFlow builds them.

    mt.math.top_k(logits, k=5)           # TopKV2(values=..., indices=...), int32 indices
    mt.sort(x, direction="DESCENDING")   # along the last axis
    mt.argsort(x, axis=0)                # the other axes through a transpose

Ties go to the lower index first (so argsort is stable, as TensorFlow's is in practice); a
NaN ranks above every number in top_k, so it comes first in both directions of sort
(TensorFlow's order of NaNs depends on its sort algorithm and is not reproduced).
"""

from __future__ import annotations

import collections
from typing import Any, Optional

from . import _host_reads
from . import _minitensor as _mt
from . import errors
from ._constant_op import convert_to_tensor, values
from ._minitensor import DType, Tensor

__all__ = ["argsort", "sort", "top_k"]

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])

_INTEGERS = (DType.int32, DType.int64)


def _scalar(value: Any, what: str, op: str) -> int:
    """Returns an int argument given as a Python int or a 0-d tensor."""
    if isinstance(value, _mt._Variable):
        value = value.read_value()
    if isinstance(value, Tensor):
        _host_reads.check(f"the {what} of `{op}`")  # a trace would fix the value
        if value.ndim != 0:
            shape = ",".join(str(d) for d in value.shape)
            raise errors.InvalidArgumentError(
                None, None, f"[TopKV2] {what} must be scalar, got shape [{shape}]")
        return int(values(value))
    return int(value)


def top_k(input: Any, k: Any = 1, sorted: bool = True,  # noqa: A002  (tf's names)
          name: Optional[str] = None) -> TopKV2:
    """Returns the ``k`` largest elements of each last-axis row of ``input`` and their
    int32 indices (TopKV2), as the namedtuple ``TopKV2(values, indices)``: the larger first,
    ties to the lower index; a NaN ranks above every number. ``sorted=False`` gives the same
    order (TensorFlow leaves it open). k below 0 or past the last dimension raises
    InvalidArgumentError with TensorFlow's message. The gradient flows to the picked
    elements."""
    values_, indices = _mt.top_k(convert_to_tensor(input), _scalar(k, "k", "top_k"),
                                 bool(sorted))
    return TopKV2(values_, indices)


def _sort(values_: Any, axis: Any, direction: str, indices: bool) -> Tensor:
    """tf.sort's and tf.argsort's body: a descending top_k of the whole axis, moved last by
    a transpose; ascending on -x (floats) or -x - 1 (integers, which wraps dtype.min)."""
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("Argument `direction` should be one of ASCENDING, DESCENDING. "
                         f"Received: direction={direction}")
    if isinstance(axis, Tensor) and axis.ndim != 0:
        raise ValueError(f"Argument `axis` must be a constant scalar. Received: axis={axis}.")
    axis = _scalar(axis, "axis", "sort")
    x = convert_to_tensor(values_)
    rank = x.ndim
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(
            None, None, f"[StridedSlice] slice index {axis} of dimension 0 out of bounds.")
    axis %= rank
    perm = None
    if axis != rank - 1:
        perm = list(range(rank))
        perm[axis], perm[-1] = rank - 1, axis
        x = _mt.transpose(x, perm)
    ascending = direction == "ASCENDING"
    integer = x.dtype in _INTEGERS
    if ascending:
        x = -x - 1 if integer else -x
    top_values, top_indices = _mt.top_k(x, x.shape[-1] if rank else 0, True)
    out = top_indices
    if not indices:
        out = top_values
        if ascending:
            out = -out - 1 if integer else -out
    return out if perm is None else _mt.transpose(out, perm)


def sort(values: Any, axis: Any = -1, direction: str = "ASCENDING",
         name: Optional[str] = None) -> Tensor:
    """Returns ``values`` sorted along ``axis`` (tf.sort), ascending or descending; NaNs come
    first either way. A direction other than "ASCENDING" or "DESCENDING" is a ValueError."""
    return _sort(values, axis, direction, indices=False)


def argsort(values: Any, axis: Any = -1, direction: str = "ASCENDING", stable: bool = False,
            name: Optional[str] = None) -> Tensor:
    """Returns the int32 indices that sort ``values`` along ``axis`` (tf.argsort); equal
    values keep their order whatever ``stable`` says (as TensorFlow's)."""
    return _sort(values, axis, direction, indices=True)
