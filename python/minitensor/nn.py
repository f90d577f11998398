"""Neural-network ops (tf.nn)."""

from . import _minitensor as _mt
from . import errors as _errors
from ._op_table import exports as _exports
from ._constant_op import convert_to_tensor

# The op table's nn.* rows (relu and the rest); the wrappers below replace the bindings
# of those that take axis= or name=.
_rows = _exports("nn")
globals().update(_rows)
__all__ = sorted(_rows)


def _over_axis(kernel, logits, axis):
    """Runs ``kernel`` (over the last axis) over ``axis`` of ``logits``: as TensorFlow does,
    another axis is swapped with the last one before and after."""
    if not isinstance(logits, _mt.Tensor):
        logits = convert_to_tensor(logits)
    rank = len(logits.shape)
    if axis is None or axis == -1 or (rank > 0 and axis == rank - 1):
        return kernel(logits)
    if not -rank <= axis < rank:
        raise _errors.InvalidArgumentError(
            None, None,
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of "
            f"dimensions in the input. Received: dim={axis}")
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return _mt.transpose(kernel(_mt.transpose(logits, perm)), perm)


def softmax(logits, axis=None, name=None):
    """Computes softmax over ``axis`` (the last by default; tf.nn.softmax)."""
    del name
    return _over_axis(_mt.softmax, logits, axis)


def log_softmax(logits, axis=None, name=None):
    """Computes log(softmax) over ``axis`` (the last by default; tf.nn.log_softmax)."""
    del name
    return _over_axis(_mt.log_softmax, logits, axis)


def _tensor(value, like=None):
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
