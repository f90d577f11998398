"""The batches ``fit``, ``evaluate`` and ``predict`` read: from arrays (NumPy, lists or mt
tensors; sliced on the host, shuffled each epoch with NumPy's global generator) or from an
``mt.data.Dataset`` of (x, y) batches. Batches are NumPy arrays; the training step makes
tensors of them where they are needed (training_step.py)."""

import math as _math

import numpy as _np

from ..data import Dataset
from ..data.components import to_numpy

__all__ = ["ArrayBatches", "DatasetBatches", "features", "for_fit", "for_inference", "targets"]


def features(x):
    """Returns ``x`` as a NumPy array, floating values as float32 (Keras's floatx)."""
    array = to_numpy(x)
    return array.astype(_np.float32) if array.dtype.kind == "f" else array


def targets(y):
    """Returns ``y`` as a NumPy array; integers of a type minitensor has no dtype for
    (MNIST's uint8 labels; int8, int16, uint16) become int32, and uint32 and uint64
    int64, so that labels of any integer type reach the losses and metrics."""
    array = to_numpy(y)
    if array.dtype.kind in "iu" and array.dtype not in (_np.int32, _np.int64):
        return array.astype(_np.int32 if array.dtype.itemsize < 4 else _np.int64)
    return array


def _check_sizes(x, y):
    if y is not None and len(x) != len(y):
        raise ValueError(
            "Data cardinality is ambiguous. Make sure all arrays contain the same number of "
            f"samples.'x' sizes: {len(x)}\n'y' sizes: {len(y)}\n")


class ArrayBatches:
    """Batches of ``batch_size`` rows of (x, y) (y may be None), in a new random order each
    pass when ``shuffle``."""

    def __init__(self, x, y, batch_size, shuffle):
        self.x, self.y = x, y
        self.batch_size = 32 if batch_size is None else int(batch_size)
        self.shuffle = shuffle
        self.steps = _math.ceil(len(x) / self.batch_size)

    def __iter__(self):
        order = _np.random.permutation(len(self.x)) if self.shuffle else None
        for start in range(0, len(self.x), self.batch_size):
            rows = slice(start, start + self.batch_size)
            if order is not None:
                rows = order[rows]
            yield self.x[rows], None if self.y is None else self.y[rows]


class DatasetBatches:
    """The elements of a Dataset, each (x, y), (x, y, sample_weight) or x alone."""

    def __init__(self, dataset):
        self.dataset = dataset
        n = dataset._cardinality()
        self.steps = n if n >= 0 else None

    def __iter__(self):
        for element in self.dataset.as_numpy_iterator():
            if isinstance(element, tuple):
                yield features(element[0]), (targets(element[1]) if len(element) > 1 else None)
            else:
                yield features(element), None


def _batches(x, y, batch_size, shuffle):
    if isinstance(x, Dataset):
        if y is not None:
            raise ValueError("When providing `x` as a tf.data.Dataset, `y` should not be "
                             "passed. Instead, the targets should be included as part of "
                             "the tf.data.Dataset.")
        return DatasetBatches(x)
    x = features(x)
    y = None if y is None else targets(y)
    _check_sizes(x, y)
    return ArrayBatches(x, y, batch_size, shuffle)


def _split(x, y, validation_split):
    """Returns (x, y) without its last ``validation_split`` fraction, and that fraction."""
    x, y = features(x), targets(y)
    _check_sizes(x, y)
    split_at = int(_math.ceil(len(x) * (1.0 - validation_split)))
    if split_at <= 0 or split_at >= len(x):
        raise ValueError(
            f"Training data contains {len(x)} samples, which is not sufficient to split it "
            "into a validation and training set as specified by `validation_split="
            f"{validation_split}`. Either provide more data, or a different value for the "
            "`validation_split` argument.")
    return (x[:split_at], y[:split_at]), (x[split_at:], y[split_at:])


def for_fit(x, y, batch_size, shuffle, validation_split, validation_data):
    """Returns (training batches, validation batches or None) for ``fit``."""
    if validation_split and validation_data is None:
        if isinstance(x, Dataset):
            raise ValueError("Argument `validation_split` is only supported for tensors or "
                             "NumPy arrays, not a Dataset.")
        (x, y), validation_data = _split(x, y, validation_split)
    train = _batches(x, y, batch_size, shuffle)
    if validation_data is None:
        return train, None
    if isinstance(validation_data, Dataset):
        return train, DatasetBatches(validation_data)
    val_x, val_y = validation_data[0], validation_data[1]
    return train, _batches(val_x, val_y, batch_size, False)


def for_inference(x, y, batch_size):
    """Returns the batches of ``evaluate`` (with y) or ``predict`` (y None), in order."""
    return _batches(x, y, batch_size, False)
