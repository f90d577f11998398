"""Neural-network ops (tf.nn)."""

from . import _minitensor as _mt
from . import errors as _errors
from ._minitensor import relu

__all__ = ["log_softmax", "relu", "softmax"]


def _last_axis(op, logits, axis):
    """Converts ``logits`` and checks that ``axis`` names its last dimension."""
    if not isinstance(logits, _mt.Tensor):
        from . import convert_to_tensor
        logits = convert_to_tensor(logits)
    if axis is None or axis == -1 or axis == len(logits.shape) - 1:
        return logits
    raise _errors.UnimplementedError(
        None, None,
        f"[{op}] only the last axis is supported, got axis={axis} for rank {len(logits.shape)}")


def softmax(logits, axis=None, name=None):
    """Computes softmax over the last axis (tf.nn.softmax); ``axis`` must name it."""
    del name
    return _mt.softmax(_last_axis("Softmax", logits, axis))


def log_softmax(logits, axis=None, name=None):
    """Computes log(softmax) over the last axis (tf.nn.log_softmax); ``axis`` must name it."""
    del name
    return _mt.log_softmax(_last_axis("LogSoftmax", logits, axis))
