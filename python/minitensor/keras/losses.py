"""tf.keras.losses: the losses ``compile`` takes, as objects and as functions.

    mse = mt.keras.losses.MeanSquaredError()
    mse(y_true, y_pred)          # a scalar: the mean over the batch
    mt.keras.losses.mean_squared_error(y_true, y_pred)   # one value per example

A function returns one loss per example; an object reduces them ("sum_over_batch_size":
their sum over their count, "sum", or "none"). As Keras, a ``y_true`` of one rank less
than ``y_pred`` whose last dimension is 1 gains that dimension, and probabilities given to
a cross-entropy are clipped to [1e-7, 1 - 1e-7] before their log.
"""

__all__ = ["Loss", "LossFunctionWrapper", "MeanSquaredError", "SparseCategoricalCrossentropy",
           "get", "mean_squared_error", "mse", "sparse_categorical_crossentropy"]

EPSILON = 1e-7
_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None)


def _tensors(y_true, y_pred):
    """Returns both as tensors (a variable reads as its value)."""
    from .. import convert_to_tensor
    return convert_to_tensor(y_true), convert_to_tensor(y_pred)


def same_rank(y_true, y_pred):
    """Returns (y_true, y_pred) with the rank of one raised or lowered by a last dimension
    of 1 where they differ by one, as Keras does before a loss."""
    from .. import expand_dims, squeeze
    t, p = len(y_true.shape), len(y_pred.shape)
    if t == p + 1 and y_true.shape[-1] == 1:
        return (y_true, expand_dims(y_pred, -1)) if p == 1 else (squeeze(y_true, [-1]), y_pred)
    if p == t + 1 and y_pred.shape[-1] == 1:
        return (expand_dims(y_true, -1), y_pred) if t == 1 else (y_true, squeeze(y_pred, [-1]))
    return y_true, y_pred


def mean_squared_error(y_true, y_pred):
    """Returns mean((y_pred - y_true)^2) over the last axis: one value per example."""
    from .. import cast, math, reduce_mean
    y_true, y_pred = _tensors(y_true, y_pred)
    y_true, y_pred = same_rank(cast(y_true, y_pred.dtype), y_pred)
    return reduce_mean(math.squared_difference(y_pred, y_true), axis=-1)


mse = MSE = mean_squared_error


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, axis=-1):
    """Returns -log(p[label]) per example for integer labels ``y_true`` (shape S or S + [1])
    and ``y_pred`` of shape S + [classes]: probabilities (clipped, then renormalised as
    Keras does through their log) or, with ``from_logits``, logits."""
    from .. import cast, int32, math, maximum, minimum, nn, squeeze
    if axis != -1:
        raise ValueError(f"Only axis=-1 is supported, got axis={axis}")
    y_true, y_pred = _tensors(y_true, y_pred)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, [-1])
    logits = y_pred
    if not from_logits:
        logits = math.log(minimum(maximum(y_pred, EPSILON), 1.0 - EPSILON))
    return nn.sparse_softmax_cross_entropy_with_logits(labels=cast(y_true, int32),
                                                       logits=logits)


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
        """Returns the reduced loss (a tensor; of one value per example for "none")."""
        from .. import cast, reduce_sum
        values = self.call(y_true, y_pred)
        if sample_weight is not None:
            values = values * cast(_tensors(sample_weight, values)[0], values.dtype)
        if self.reduction in ("none", None):
            return values
        total = reduce_sum(values)
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


_BY_NAME = {
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "MeanSquaredError": MeanSquaredError,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "SparseCategoricalCrossentropy": SparseCategoricalCrossentropy,
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
