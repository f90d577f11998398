"""tf.keras.metrics: running averages over the batches of an epoch, computed on the host
with NumPy from the labels and the predictions.

    acc = mt.keras.metrics.SparseCategoricalAccuracy()
    acc.update_state([1, 0], [[0.2, 0.8], [0.9, 0.1]])
    float(acc.result())     # 1.0

``compile(metrics=["accuracy"])`` picks binary, categorical or sparse categorical
accuracy from the shapes of the first batch, as Keras does (``for_shapes``).
"""

import numpy as _np

__all__ = ["Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "Mean", "MeanMetricWrapper",
           "MeanSquaredError", "Metric", "SparseCategoricalAccuracy", "accuracy",
           "binary_accuracy", "categorical_accuracy", "get", "sparse_categorical_accuracy"]


def _array(value):
    return _np.asarray(value)


def accuracy(y_true, y_pred):
    """Returns 1.0 where y_true equals y_pred, else 0.0."""
    return (_array(y_true) == _array(y_pred)).astype(_np.float32)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Returns 1.0 where (y_pred > threshold) equals y_true, per example."""
    y_true, y_pred = _same_rank(_array(y_true), _array(y_pred))
    hits = (y_true == (y_pred > threshold)).astype(_np.float32)
    return hits.mean(axis=-1) if hits.ndim > 1 else hits


def categorical_accuracy(y_true, y_pred):
    """Returns 1.0 where the argmax of the one-hot y_true equals that of y_pred."""
    return (_array(y_true).argmax(-1) == _array(y_pred).argmax(-1)).astype(_np.float32)


def sparse_categorical_accuracy(y_true, y_pred):
    """Returns 1.0 where the integer label y_true is the argmax of y_pred."""
    y_true, y_pred = _array(y_true), _array(y_pred)
    if y_true.ndim == y_pred.ndim and y_true.shape[-1] == 1:
        y_true = y_true[..., 0]
    return (y_true == y_pred.argmax(-1)).astype(_np.float32)


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _same_rank(_array(y_true), _array(y_pred))
    return ((y_pred - y_true) ** 2).mean(axis=-1)


def _same_rank(y_true, y_pred):
    if y_true.ndim == y_pred.ndim - 1 and y_pred.shape[-1] == 1:
        return y_true[..., None], y_pred
    if y_pred.ndim == y_true.ndim - 1 and y_true.shape[-1] == 1:
        return y_true, y_pred[..., None]
    return y_true, y_pred


class Metric:
    """A value accumulated over batches: ``update_state``, ``result``, ``reset_state``."""

    def __init__(self, name=None, dtype=None):
        self.name = name or type(self).__name__

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self):
        raise NotImplementedError

    def __call__(self, *args, **kwargs):
        """Updates the state and returns the result."""
        self.update_state(*args, **kwargs)
        return self.result()


class Mean(Metric):
    """The (weighted) mean of every value given to ``update_state``."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self.reset_state()

    def reset_state(self):
        self._total, self._count = 0.0, 0.0

    def update_state(self, values, sample_weight=None):
        values = _array(values).astype(_np.float64)
        weights = _np.ones_like(values) if sample_weight is None else \
            _np.broadcast_to(_array(sample_weight), values.shape)
        self._total += float((values * weights).sum())
        self._count += float(weights.sum())

    def result(self):
        """Returns the mean as a float32 scalar (0 before any update)."""
        return _np.float32(self._total / self._count if self._count else 0.0)


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred)`` over every example seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or fn.__name__, dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)


class Accuracy(MeanMetricWrapper):
    def __init__(self, name="accuracy", dtype=None):
        super().__init__(accuracy, name, dtype)


class BinaryAccuracy(MeanMetricWrapper):
    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(binary_accuracy, name, dtype, threshold=threshold)


class CategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="categorical_accuracy", dtype=None):
        super().__init__(categorical_accuracy, name, dtype)


class SparseCategoricalAccuracy(MeanMetricWrapper):
    def __init__(self, name="sparse_categorical_accuracy", dtype=None):
        super().__init__(sparse_categorical_accuracy, name, dtype)


class MeanSquaredError(MeanMetricWrapper):
    def __init__(self, name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, name, dtype)


_BY_NAME = {
    "binary_accuracy": BinaryAccuracy, "categorical_accuracy": CategoricalAccuracy,
    "sparse_categorical_accuracy": SparseCategoricalAccuracy, "mse": MeanSquaredError,
    "mean_squared_error": MeanSquaredError,
}


def check(identifier):
    """Raises ValueError, with Keras's message, when ``get`` could not resolve
    ``identifier`` ("accuracy" and "acc" included, which need shapes)."""
    if isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc"):
        return
    get(identifier)


def get(identifier):
    """Returns a new Metric for a name, the Metric itself, or a MeanMetricWrapper around a
    function; ValueError for anything else."""
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier](name=identifier)
    if isinstance(identifier, Metric):
        return identifier
    if callable(identifier) and not isinstance(identifier, type):
        return MeanMetricWrapper(identifier)
    raise ValueError(f"Could not interpret metric identifier: {identifier}")


def for_shapes(identifier, y_true, y_pred):
    """Returns the metric for ``identifier`` given a batch's labels and predictions: for
    "accuracy" or "acc", binary accuracy when predictions have one column, sparse
    categorical when the labels are integers of one rank less (or a last dimension of 1),
    else categorical; named as given."""
    if not (isinstance(identifier, str) and identifier.lower() in ("accuracy", "acc")):
        return get(identifier)
    t, p = _np.ndim(y_true), _np.ndim(y_pred)
    if _np.shape(y_pred)[-1] == 1:
        return BinaryAccuracy(name=identifier)
    if t < p or (t == p and _np.shape(y_true)[-1] == 1):
        return SparseCategoricalAccuracy(name=identifier)
    return CategoricalAccuracy(name=identifier)
