"""tf.keras.metrics: running averages over the batches of an epoch, as Keras keeps them:
each metric's totals are variables updated by ops, so ``update_state`` inside an
``mt.function`` counts at every call (the replay writes the variables), and ``result()``
returns a scalar tensor.

    acc = mt.keras.metrics.SparseCategoricalAccuracy()
    acc.update_state([1, 0], [[0.2, 0.8], [0.9, 0.1]])
    float(acc.result())     # 1.0

``compile(metrics=["accuracy"])`` picks binary, categorical or sparse categorical
accuracy from the shapes of the first batch, as Keras does (``for_shapes``).
"""

import numpy as _np

from . import mixed_precision
from .losses import mean_squared_error, same_rank
from .._constant_op import constant, convert_to_tensor, zeros
from .._converted_ops import cast
from .._dtypes import as_dtype, float32, int64
from .._index_ops import argmax
from .._minitensor import broadcast_to, equal, expand_dims, reduce_mean, reduce_sum, squeeze
from .._variables import Variable
from .. import _minitensor as _mt

__all__ = ["Accuracy", "BinaryAccuracy", "CategoricalAccuracy", "Mean", "MeanMetricWrapper",
           "MeanSquaredError", "Metric", "SparseCategoricalAccuracy", "accuracy",
           "binary_accuracy", "categorical_accuracy", "get", "sparse_categorical_accuracy"]


def _tensor(value, dtype=None):
    value = convert_to_tensor(value)
    return value if dtype is None or value.dtype == dtype else cast(value, dtype)


def _hits(equal):
    """1.0 where ``equal`` (a bool tensor) is true, else 0.0, as float32."""
    return cast(equal, float32)


def accuracy(y_true, y_pred):
    """Returns 1.0 where y_true equals y_pred, else 0.0."""
    y_pred = _tensor(y_pred)
    return _hits(equal(_tensor(y_true, y_pred.dtype), y_pred))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Returns 1.0 where (y_pred > threshold) equals y_true, per example (the mean over the
    last axis of a rank above 1)."""
    y_pred = _tensor(y_pred)
    y_true, y_pred = same_rank(_tensor(y_true, y_pred.dtype), y_pred)
    hits = _hits(equal(y_true, cast(y_pred > threshold, y_true.dtype)))
    return reduce_mean(hits, axis=-1) if len(hits.shape) > 1 else hits


def categorical_accuracy(y_true, y_pred):
    """Returns 1.0 where the argmax of the one-hot y_true equals that of y_pred."""
    return _hits(equal(argmax(_tensor(y_true), -1), argmax(_tensor(y_pred), -1)))


def sparse_categorical_accuracy(y_true, y_pred):
    """Returns 1.0 where the integer label y_true is the argmax of y_pred."""
    y_true, y_pred = _tensor(y_true), _tensor(y_pred)
    if len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = squeeze(y_true, [-1])
    return _hits(equal(_tensor(y_true, int64), argmax(y_pred, -1)))


class Metric:
    """A value accumulated over batches: ``update_state``, ``result``, ``reset_state``;
    its state is ``variables``."""

    def __init__(self, name=None, dtype=None):
        self.name = name or type(self).__name__
        self.dtype = float32 if dtype is None else as_dtype(dtype)
        self._variables = []

    def add_variable(self, name):
        """Makes a scalar variable of the metric's dtype, zero, that ``reset_state`` zeroes."""
        variable = Variable(zeros([], self.dtype), trainable=False, name=f"{self.name}/{name}")
        self._variables.append(variable)
        return variable

    def build(self):
        """Makes the variables (at the first update or read)."""

    @property
    def variables(self):
        self.build()
        return list(self._variables)

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        raise NotImplementedError

    def reset_state(self):
        """Sets every variable back to zero (an op: it runs inside functions too)."""
        for variable in self.variables:
            variable.assign(zeros(variable.shape, variable.dtype))

    def __call__(self, *args, **kwargs):
        """Updates the state and returns the result."""
        self.update_state(*args, **kwargs)
        return self.result()


def _samplewise(values, weights):
    """Keras's reduction before a Mean: ``values`` times ``weights`` (broadcast, a lower
    rank gaining trailing dimensions), each averaged over the axes after the first."""
    if weights is not None:
        while len(weights.shape) < len(values.shape):
            weights = expand_dims(weights, -1)
        weights = broadcast_to(weights, values.shape)
        values = values * weights
    if len(values.shape) > 1:
        axes = list(range(1, len(values.shape)))
        values = reduce_mean(values, axis=axes)
        weights = None if weights is None else reduce_mean(weights, axis=axes)
    return values, weights


class Mean(Metric):
    """The (weighted) mean of every value given to ``update_state``: ``total`` and
    ``count`` variables (a value of rank above 1 counts once per row, its mean). They are
    made at the first use, not in a strategy's scope where ``compile`` makes the metric."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name, dtype)
        self._total = self._count = None
        self._constants = {}  # value -> scalar tensor: a batch's count, 0 for result()

    def build(self):
        if self._total is None:
            self._total = self.add_variable("total")
            self._count = self.add_variable("count")

    def _constant(self, value):
        if value not in self._constants:
            self._constants[value] = constant(value, self.dtype)
        return self._constants[value]

    @property
    def total(self):
        self.build()
        return self._total

    @property
    def count(self):
        self.build()
        return self._count

    def update_state(self, values, sample_weight=None):
        values = _tensor(values, self.dtype)
        weights = None if sample_weight is None else _tensor(sample_weight, self.dtype)
        values, weights = _samplewise(values, weights)
        self.total.assign_add(reduce_sum(values))
        if weights is not None:
            self.count.assign_add(reduce_sum(weights))
        else:
            self.count.assign_add(self._constant(values.shape[0] if values.shape else 1))

    def result(self):
        """Returns the mean as a scalar tensor (0 before any update)."""
        total, count = self.total.read_value(), self.count.read_value()
        zero = _mt.equal(count, self._constant(0))
        return _mt.select_v2(zero, self._constant(0), total / _mt.select_v2(
            zero, self._constant(1), count))


class MeanMetricWrapper(Mean):
    """The mean of ``fn(y_true, y_pred)`` over every example seen."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        super().__init__(name or fn.__name__, dtype)
        self._fn = fn
        self._fn_kwargs = kwargs

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = mixed_precision.in_float32(y_pred)  # a mixed-precision model's, as Keras
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
