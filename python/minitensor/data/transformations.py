"""The datasets that transform another: batch, shuffle, repeat, take and map. Each reads
its input's elements lazily, so a pipeline holds only what a step needs (a shuffle
buffer, a batch being built)."""

import numpy as _np

from . import structure as _structure
from .dataset import Dataset, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .sources import to_numpy
from .tensor_spec import TensorSpec

__all__ = ["BatchDataset", "MapDataset", "RepeatDataset", "ShuffleDataset", "TakeDataset"]


def _positive(value, name):
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be greater than zero, got {value}")
    return value


class BatchDataset(Dataset):
    """Consecutive elements stacked along a new first dimension."""

    def __init__(self, input_dataset, batch_size, drop_remainder):
        self._input = input_dataset
        self._batch_size = _positive(batch_size, "Batch size")
        self._drop_remainder = bool(drop_remainder)

    def _elements(self):
        pending = []
        for element in self._input._elements():
            pending.append(element)
            if len(pending) == self._batch_size:
                yield _stack(pending)
                pending = []
        if pending and not self._drop_remainder:
            yield _stack(pending)

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._batch_size if self._drop_remainder else -(-n // self._batch_size)

    def _element_spec(self):
        size = self._batch_size if self._drop_remainder else None
        return _structure.map_structure(lambda s: TensorSpec((size,) + s.shape, s.dtype),
                                        self._input.element_spec)


def _stack(elements):
    """Stacks each component of ``elements``; ValueError when their shapes differ."""
    columns = zip(*(_structure.flatten(e) for e in elements))
    stacked = []
    for index, column in enumerate(columns):
        shapes = [_np.shape(c) for c in column]
        for i, shape in enumerate(shapes):
            if shape != shapes[0]:
                raise ValueError(
                    f"Cannot batch tensors with different shapes in component {index}. First "
                    f"element had shape {list(shapes[0])} and element {i} had shape "
                    f"{list(shape)}.")
        stacked.append(_np.stack(column))
    return _structure.pack_like(elements[0], stacked)


class ShuffleDataset(Dataset):
    """The input's elements through a random buffer of ``buffer_size``."""

    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        self._input = input_dataset
        self._buffer_size = _positive(buffer_size, "buffer_size")
        self._seed = int(seed) if seed is not None else int(_np.random.randint(2**31))
        self._reshuffle = bool(reshuffle_each_iteration)
        self._iterations = 0

    def _elements(self):
        seed = [self._seed, self._iterations] if self._reshuffle else [self._seed]
        self._iterations += 1
        rng = _np.random.default_rng(seed)
        buffer = []
        for element in self._input._elements():
            buffer.append(element)
            if len(buffer) == self._buffer_size:
                yield _take_random(buffer, rng)
        while buffer:
            yield _take_random(buffer, rng)

    def _cardinality(self):
        return self._input._cardinality()

    def _element_spec(self):
        return self._input.element_spec


def _take_random(buffer, rng):
    """Removes and returns a random element of ``buffer`` (the last takes its place)."""
    i = int(rng.integers(len(buffer)))
    buffer[i], buffer[-1] = buffer[-1], buffer[i]
    return buffer.pop()


class RepeatDataset(Dataset):
    """The input's elements ``count`` times over (None or -1: forever)."""

    def __init__(self, input_dataset, count):
        self._input = input_dataset
        self._count = -1 if count is None else int(count)

    def _elements(self):
        done = 0
        while self._count < 0 or done < self._count:
            empty = True
            for element in self._input._elements():
                empty = False
                yield element
            if empty:  # as tf.data: repeating an empty dataset ends at once
                return
            done += 1

    def _cardinality(self):
        n = self._input._cardinality()
        if n == 0 or self._count == 0:
            return 0
        if self._count < 0 or n == INFINITE_CARDINALITY:
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY if n == UNKNOWN_CARDINALITY else n * self._count

    def _element_spec(self):
        return self._input.element_spec


class TakeDataset(Dataset):
    """The input's first ``count`` elements (-1: all)."""

    def __init__(self, input_dataset, count):
        self._input = input_dataset
        self._count = int(count)

    def _elements(self):
        for i, element in enumerate(self._input._elements()):
            if 0 <= self._count <= i:
                return
            yield element

    def _cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        return n if n == UNKNOWN_CARDINALITY else min(n, self._count)

    def _element_spec(self):
        return self._input.element_spec


class MapDataset(Dataset):
    """``map_func`` of each input element, run eagerly on mt tensors."""

    def __init__(self, input_dataset, map_func):
        if not callable(map_func):
            raise TypeError(f"map_func must be callable, got {type(map_func).__name__}")
        self._input = input_dataset
        self._map_func = map_func

    def _elements(self):
        for element in self._input._elements():
            yield self._apply(element)

    def _apply(self, element):
        from .. import constant
        tensors = _structure.map_structure(constant, element)
        if isinstance(tensors, tuple) and not hasattr(tensors, "_fields"):
            result = self._map_func(*tensors)
        else:
            result = self._map_func(tensors)
        return _structure.map_structure(to_numpy, result)

    def _cardinality(self):
        return self._input._cardinality()

    def _element_spec(self):
        """The spec of the first mapped element (map_func runs once to find it); None for
        an empty input."""
        first = next(iter(self._input._elements()), None)
        if first is None:
            return None
        from .. import as_dtype
        return _structure.map_structure(lambda a: TensorSpec(a.shape, as_dtype(a.dtype)),
                                        self._apply(first))
