"""Neural-network ops (tf.nn)."""

from . import _minitensor as _mt
from . import errors as _errors
from ._minitensor import relu

__all__ = ["bias_add", "log_softmax", "relu", "softmax",
           "sparse_softmax_cross_entropy_with_logits"]


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


def _tensor(value, like=None):
    from . import convert_to_tensor
    if isinstance(value, _mt.Tensor):
        return value
    return convert_to_tensor(value, None if like is None else like.dtype)


def bias_add(value, bias, data_format=None, name=None):
    """Adds the 1-D ``bias`` along the last axis of ``value`` (BiasAdd, NHWC only)."""
    del name
    if data_format not in (None, "NHWC", "N..C"):
        raise _errors.UnimplementedError(
            None, None, f"[BiasAdd] only data_format NHWC is supported, got {data_format}")
    value = _tensor(value)
    return _mt.bias_add(value, _tensor(bias, value))


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Returns the per-example cross-entropy of softmax(logits) against integer ``labels``
    (SparseSoftmaxCrossEntropyWithLogits): labels of shape S, logits of shape S + [classes].
    A label outside [0, classes) raises InvalidArgumentError on the CPU and gives NaN on a
    GPU, as in TensorFlow."""
    del name
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given")
    return _mt.sparse_softmax_cross_entropy_with_logits(_tensor(labels), _tensor(logits))
