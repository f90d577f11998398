"""tf.clip_by_value (the ClipByValue row), and tf.clip_by_norm, tf.clip_by_global_norm and
tf.linalg.global_norm, composed of ops (so a function records them) with TensorFlow's
formulas: a zero norm leaves values alone, and an infinite or NaN global norm makes every
value NaN.

    clipped, norm = mt.clip_by_global_norm(grads, 5.0)
"""

from collections.abc import Sequence

import numpy as _np

from . import _minitensor as _mt
from . import errors as _errors
from ._minitensor import maximum, minimum, reduce_sum, sqrt
from ._converted_ops import identity, ones_like
from ._constant_op import convert_to_tensor
from ._converted_ops import cast
from ._index_ops import where

__all__ = ["clip_by_global_norm", "clip_by_norm", "clip_by_value", "global_norm"]


def _tensor(value, dtype=None):
    return convert_to_tensor(value, dtype)


def _check_bound(t_shape, bound_shape):
    """TensorFlow's errors for a bound that does not broadcast to ``t`` (InvalidArgumentError)
    or would grow it (ValueError)."""
    try:
        grown = _np.broadcast_shapes(t_shape, bound_shape)
    except ValueError:
        raise _errors.InvalidArgumentError(
            None, None, f"Incompatible shapes: {_list(t_shape)} vs. {_list(bound_shape)}") from None
    if grown != t_shape:
        raise ValueError(f"Shapes {t_shape} and {grown} are incompatible")


def _list(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Returns ``t`` with each element limited to [clip_value_min, clip_value_max] (the
    ClipByValue row: the bounds are converted to ``t``'s dtype and broadcast to its shape,
    never growing it; a NaN stays NaN). The gradient passes where min <= t <= max; each bound
    takes it where t lies beyond that bound."""
    del name
    t = _tensor(t)
    low, high = _tensor(clip_value_min, t.dtype), _tensor(clip_value_max, t.dtype)
    shape = tuple(t.shape)
    _check_bound(shape, tuple(high.shape))
    _check_bound(shape, tuple(low.shape))
    return _mt.clip_by_value(t, low, high)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """Returns ``t * clip_norm / max(l2norm(t), clip_norm)``, the L2 norm taken over
    ``axes`` (every axis by default); a zero norm leaves ``t`` as it is."""
    t = _tensor(t)
    l2sum = reduce_sum(t * t, axes, keepdims=True)
    positive = l2sum > 0
    l2norm = where(positive, sqrt(where(positive, l2sum, ones_like(l2sum))), l2sum)
    clip_norm = _tensor(clip_norm, t.dtype)
    return identity(t * clip_norm / maximum(l2norm, clip_norm))


def _check_list(t_list):
    if not isinstance(t_list, Sequence) or isinstance(t_list, str):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received {type(t_list)}.")


def global_norm(t_list, name=None):
    """Returns ``sqrt(sum(l2norm(t) ** 2 for t in t_list))``, skipping None entries."""
    _check_list(t_list)
    tensors = [_tensor(t) for t in t_list if t is not None]
    total = reduce_sum(tensors[0] * tensors[0])
    for t in tensors[1:]:
        total = total + reduce_sum(t * t)
    return sqrt(total)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Returns ``([t * clip_norm / max(global_norm, clip_norm) for t in t_list],
    global_norm)``; None entries stay None."""
    _check_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list)
    use_norm = _tensor(use_norm)
    one = ones_like(use_norm)
    scale = _tensor(clip_norm, use_norm.dtype) * minimum(one / use_norm,
                                                         one / _tensor(clip_norm, use_norm.dtype))
    scale = scale + (use_norm - use_norm)  # NaN where the norm is not finite
    clipped = [None if t is None else identity(_tensor(t) * cast(scale, _tensor(t).dtype))
               for t in t_list]
    return clipped, use_norm
