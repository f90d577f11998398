"""tf.keras.losses: the losses ``compile`` takes, as objects and as functions.

    mse = mt.keras.losses.MeanSquaredError()
    mse(y_true, y_pred)          # a scalar: the mean over the batch
    mt.keras.losses.mean_squared_error(y_true, y_pred)   # one value per example

A function returns one loss per example; an object reduces them ("sum_over_batch_size":
their sum over their count, "sum", or "none"). As Keras, a ``y_true`` of one rank less
than ``y_pred`` whose last dimension is 1 gains that dimension, and probabilities given to
a cross-entropy are clipped to [1e-7, 1 - 1e-7] before their log. Labels of an integer
type minitensor has no dtype for (MNIST's uint8) are widened first.
"""

from .. import _minitensor as _mt
from .._constant_op import convert_to_tensor
from .. import nn
from .._converted_ops import cast
from . import mixed_precision
from .input_batches import targets

__all__ = ["BinaryCrossentropy", "CategoricalCrossentropy", "Loss", "LossFunctionWrapper",
           "MeanSquaredError", "SparseCategoricalCrossentropy", "binary_crossentropy",
           "categorical_crossentropy", "get", "mean_squared_error", "mse",
           "sparse_categorical_crossentropy"]

EPSILON = 1e-7
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None)


def _tensors(y_true, y_pred):
    """Returns both as tensors (a variable reads as its value; NumPy labels of an integer
    type minitensor lacks are widened)."""
    if not isinstance(y_true, (_mt.Tensor, _mt._Variable)):
        y_true = targets(y_true)
    return convert_to_tensor(y_true), convert_to_tensor(y_pred)


def same_rank(y_true, y_pred):
    """Returns (y_true, y_pred) with the rank of one raised or lowered by a last dimension
    of 1 where they differ by one, as Keras does before a loss."""
    t, p = len(y_true.shape), len(y_pred.shape)
    if t == p + 1 and y_true.shape[-1] == 1:
        if p == 1:
            return y_true, _mt.expand_dims(y_pred, -1)
        return _mt.squeeze(y_true, [-1]), y_pred
    if p == t + 1 and y_pred.shape[-1] == 1:
        if t == 1:
            return _mt.expand_dims(y_true, -1), y_pred
        return y_true, _mt.squeeze(y_pred, [-1])
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    """Returns mean((y_pred - y_true)^2) over the last axis: one value per example."""
    y_true, y_pred = _tensors(y_true, y_pred)
    y_true, y_pred = same_rank(cast(y_true, y_pred.dtype), y_pred)
    return _mt.reduce_mean(_mt.squared_difference(y_pred, y_true), -1)


mse = MSE = mean_squared_error


def _clipped(probabilities):
    return _mt.minimum(_mt.maximum(probabilities, EPSILON), 1.0 - EPSILON)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """Returns -log(p[label]) per example for integer labels ``y_true`` (shape S or S + [1])
    and ``y_pred`` of shape S + [classes]: probabilities (clipped, then renormalised as
    Keras does through their log) or, with ``from_logits``, logits."""
    if axis != -1:
        raise ValueError(f"Only axis=-1 is supported, got axis={axis}")
    y_true, y_pred = _tensors(y_true, y_pred)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = _mt.squeeze(y_true, [-1])
    logits = y_pred if from_logits else _mt.log(_clipped(y_pred))
    return nn.sparse_softmax_cross_entropy_with_logits(
        labels=cast(y_true, _mt.DType.int32), logits=logits)


def _same_shape(y_true, y_pred):
    if list(y_true.shape) != list(y_pred.shape):
        raise ValueError("Arguments `target` and `output` must have the same shape. "
                         f"Received: target.shape={tuple(y_true.shape)}, "
                         f"output.shape={tuple(y_pred.shape)}")


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0,
                             axis=-1):
    """Returns -sum(y_true * log(p)) over ``axis`` per example, for one-hot (or any
    distribution) ``y_true`` of ``y_pred``'s shape: p are the probabilities ``y_pred``
    (rescaled to sum to 1, clipped to [1e-7, 1 - 1e-7]) or, with ``from_logits``,
    softmax(y_pred). ``label_smoothing`` moves the labels towards 1 / classes. Raises
    ValueError, with Keras's message, for shapes that differ."""
    y_true, y_pred = _tensors(y_true, y_pred)
    y_true = cast(y_true, y_pred.dtype)
    _same_shape(y_true, y_pred)
    if label_smoothing:
        classes = y_pred.shape[axis]
        y_true = y_true * (1.0 - label_smoothing) + label_smoothing / classes
    if from_logits:
        return nn.softmax_cross_entropy_with_logits(y_true, y_pred, axis=axis)
    y_pred = y_pred / _mt.reduce_sum(y_pred, axis, keepdims=True)
    return -_mt.reduce_sum(y_true * _mt.log(_clipped(y_pred)), axis)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    """Returns the mean over ``axis`` of -(y log(p) + (1 - y) log(1 - p)), p being the
    probabilities ``y_pred`` (clipped to [1e-7, 1 - 1e-7]) or, with ``from_logits``,
    sigmoid(y_pred); ``label_smoothing`` moves the labels towards 0.5. Raises ValueError,
    with Keras's message, for shapes that differ (after a last dimension of 1 is added
    or removed)."""
    y_true, y_pred = _tensors(y_true, y_pred)
    y_true, y_pred = same_rank(cast(y_true, y_pred.dtype), y_pred)
    _same_shape(y_true, y_pred)
    if label_smoothing:
        y_true = y_true * (1.0 - label_smoothing) + 0.5 * label_smoothing
    if from_logits:
        values = nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred)
    else:
        p = _clipped(y_pred)
        values = -(y_true * _mt.log(p) + (1.0 - y_true) * _mt.log(1.0 - p))
    return _mt.reduce_mean(values, axis)


class Loss:
    """A loss with its reduction. Subclasses define ``call(y_true, y_pred)``, which returns
    the unreduced values; calling the object reduces them."""

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(
                f"Invalid value for argument `reduction`. Expected one of "
                f"{_REDUCTIONS[:3]}. Received: reduction={reduction}")
        self.name = name or type(self).__name__
        self.reduction = reduction

    def call(self, y_true, y_pred):
        raise NotImplementedError

    def __call__(self, y_true, y_pred, sample_weight=None):
        """Returns the reduced loss (a tensor; of one value per example for "none").
        Predictions in a 2-byte float (a mixed-precision model's) are taken in float32, as
        Keras's losses take them."""
        values = self.call(y_true, mixed_precision.in_float32(y_pred))
        if sample_weight is not None:
            values = values * cast(_tensors(sample_weight, values)[0], values.dtype)
        if self.reduction in ("none", None):
            return values
        total = _mt.reduce_sum(values)
        if self.reduction == "sum":
            return total
        return total / float(max(1, _size(values)))

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}


def _size(tensor):
    size = 1
    for d in tensor.shape:
        size *= d
    return size


class LossFunctionWrapper(Loss):
    """A loss object around a function of (y_true, y_pred, **kwargs)."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, **kwargs):
        super().__init__(name=name or fn.__name__, reduction=reduction)
        self.fn = fn
        self._fn_kwargs = kwargs

    def call(self, y_true, y_pred):
        y_true, y_pred = _tensors(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)


class MeanSquaredError(LossFunctionWrapper):
    """The mean of the squared errors (tf.keras.losses.MeanSquaredError)."""

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(mean_squared_error, reduction=reduction, name=name)


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between integer labels and predicted class probabilities (or logits
    with ``from_logits=True``)."""

    def __init__(self, from_logits=False, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy"):
        super().__init__(sparse_categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits)
        self.from_logits = from_logits

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits}


class CategoricalCrossentropy(LossFunctionWrapper):
    """Cross-entropy between one-hot labels and predicted class probabilities (or logits
    with ``from_logits=True``), with optional ``label_smoothing``."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy"):
        super().__init__(categorical_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


class BinaryCrossentropy(LossFunctionWrapper):
    """Cross-entropy between 0/1 labels and predicted probabilities (or logits with
    ``from_logits=True``), averaged over the last axis, with optional
    ``label_smoothing``."""

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy"):
        super().__init__(binary_crossentropy, reduction=reduction, name=name,
                         from_logits=from_logits, label_smoothing=label_smoothing, axis=axis)
        self.from_logits, self.label_smoothing, self.axis = from_logits, label_smoothing, axis

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": self.axis}


_BY_NAME = {
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "MeanSquaredError": MeanSquaredError,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "SparseCategoricalCrossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "CategoricalCrossentropy": CategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy, "BinaryCrossentropy": BinaryCrossentropy,
}


def get(identifier):
    """Returns a Loss for ``identifier``: a name, a Loss, or a function of
    (y_true, y_pred) (wrapped); ValueError for anything else, with Keras's message."""
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if isinstance(identifier, Loss):
        return identifier
    if callable(identifier) and not isinstance(identifier, type):
        return LossFunctionWrapper(identifier)
    raise ValueError(f"Could not interpret loss identifier: {identifier}")
