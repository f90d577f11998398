"""The datasets that transform another element by element: shuffle, repeat, take, map,
filter and cache (batching is in batching.py). Each reads its input's elements lazily, so a
pipeline holds only what a step needs (a shuffle buffer, a batch being built)."""

import os
import pickle

import numpy as _np

from .. import _minitensor
from .. import errors as _errors
from . import structure as _structure
from .batching import positive as _positive
from .dataset import Dataset, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .components import spec_of, to_numpy
from .tensor_spec import TensorSpec
from .._constant_op import constant
from .._dtypes import bool as mt_bool

__all__ = ["CacheDataset", "FilterDataset", "MapDataset", "RepeatDataset", "ShuffleDataset",
           "SkipDataset", "TakeDataset", "call_with"]


def call_with(fn, element):
    """Calls ``fn`` on ``element`` as mt tensors: a tuple as separate arguments."""
    tensors = _structure.map_structure(
        lambda c: c if isinstance(c, _minitensor.Tensor) else constant(c), element)
    if isinstance(tensors, tuple) and not hasattr(tensors, "_fields"):
        return fn(*tensors)
    return fn(tensors)


def _keep(component):
    """A map result as an element component: a tensor stays one (the next step or the
    caller takes it as it is), any other value becomes an array."""
    return component if isinstance(component, _minitensor.Tensor) else to_numpy(component)


class ShuffleDataset(Dataset):
    """The input's elements through a random buffer of ``buffer_size``."""

    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        self._input = input_dataset
        self._buffer_size = _positive(buffer_size, "buffer_size")
        self._seed = int(seed) if seed is not None else int(_np.random.randint(2**31))
        self._reshuffle = bool(reshuffle_each_iteration)
        self._iterations = 0

    def _shuffle_state(self):
        """Returns (seed, passes begun): what the next pass's order follows from."""
        return [self._seed, self._iterations]

    def _set_shuffle_state(self, seed, passes):
        self._seed, self._iterations = int(seed), int(passes)

    def _elements(self):
        seed = [self._seed, self._iterations] if self._reshuffle else [self._seed]
        self._iterations += 1
        draws = _Draws(_np.random.default_rng(seed))
        buffer = []
        for element in self._input._elements():
            buffer.append(element)
            if len(buffer) == self._buffer_size:
                yield _take_random(buffer, draws)
        while buffer:
            yield _take_random(buffer, draws)

    def _cardinality(self):
        return self._input._cardinality()

    def _element_spec(self):
        return self._input.element_spec


class _Draws:
    """Uniform draws in [0, 1) from ``rng``, made 1024 at a time (one NumPy call per draw
    cost more than the rest of a shuffle step)."""

    def __init__(self, rng):
        self._rng = rng
        self._block = []

    def next(self):
        if not self._block:
            self._block = self._rng.random(1024).tolist()
        return self._block.pop()


def _take_random(buffer, draws):
    """Removes and returns a random element of ``buffer`` (the last takes its place)."""
    i = int(draws.next() * len(buffer))
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


class SkipDataset(Dataset):
    """The input's elements after its first ``count`` (-1: none)."""

    def __init__(self, input_dataset, count):
        self._input = input_dataset
        self._count = int(count)

    def _elements(self):
        for i, element in enumerate(self._input._elements()):
            if self._count >= 0 and i >= self._count:
                yield element

    def _cardinality(self):
        n = self._input._cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        return 0 if self._count < 0 else max(0, n - self._count)

    def _element_spec(self):
        return self._input.element_spec


class ShardDataset(Dataset):
    """Every ``num_shards``-th element of the input, from element ``index`` on."""

    def __init__(self, input_dataset, num_shards, index):
        num_shards, index = int(num_shards), int(index)
        if num_shards <= 0:
            raise _errors.InvalidArgumentError(
                None, None, f"Number of shards must be greater than zero (got {num_shards}).")
        if not 0 <= index < num_shards:
            raise _errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {num_shards - 1} (currently index = "
                f"{index}).")
        self._input, self._num_shards, self._index = input_dataset, num_shards, index

    def _elements(self):
        for i, element in enumerate(self._input._elements()):
            if i % self._num_shards == self._index:
                yield element

    def _cardinality(self):
        n = self._input._cardinality()
        if n in (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY):
            return n
        return n // self._num_shards + (1 if self._index < n % self._num_shards else 0)

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
        return _structure.map_structure(_keep, call_with(self._map_func, element))

    def _cardinality(self):
        return self._input._cardinality()

    def _element_spec(self):
        """The spec of the first mapped element (map_func runs once to find it); None for
        an empty input. Where the input's spec leaves a dimension unknown (a batch that may
        be partial), a dimension of the result of that size is unknown too, as TensorFlow's
        trace over the input's spec leaves it."""
        first = next(iter(self._input._elements()), None)
        if first is None:
            return None
        mapped = _structure.map_structure(spec_of, self._apply(first))
        varying = set()
        for spec, component in zip(_structure.flatten(self._input.element_spec),
                                   _structure.flatten(first)):
            shape = _np.shape(component)
            varying.update(size for i, size in enumerate(shape)
                           if spec.shape is None or spec.shape[i] is None)
        if not varying:
            return mapped
        return _structure.map_structure(
            lambda s: TensorSpec(tuple(None if d in varying else d for d in s.shape), s.dtype),
            mapped)


class FilterDataset(Dataset):
    """The input's elements for which ``predicate`` (on mt tensors) is true."""

    def __init__(self, input_dataset, predicate):
        if not callable(predicate):
            raise TypeError(f"predicate must be callable, got {type(predicate).__name__}")
        self._input = input_dataset
        self._predicate = predicate

    def _elements(self):
        for element in self._input._elements():
            keep = call_with(self._predicate, element)
            if isinstance(keep, (bool, _np.bool_)):
                if keep:
                    yield element
                continue
            spec = spec_of(keep) if hasattr(keep, "dtype") else None
            if spec is None or spec.dtype != mt_bool or spec.shape != ():
                raise ValueError(
                    "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, "
                    f"but its return type is {spec if spec is not None else type(keep)}.")
            if bool(keep):
                yield element

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self._input.element_spec


class CacheDataset(Dataset):
    """The input's elements, kept after the first complete pass (in memory, or with a
    ``filename`` in that file, which later passes and processes read instead of the
    input). A pass that stops early keeps nothing, as tf.data's cache."""

    def __init__(self, input_dataset, filename):
        self._input = input_dataset
        self._filename = os.fspath(filename)
        self._cached = None

    def _elements(self):
        if self._cached is None and self._filename and os.path.exists(self._filename):
            with open(self._filename, "rb") as f:
                self._cached = pickle.load(f)
        if self._cached is not None:
            yield from self._cached
            return
        seen = []
        for element in self._input._elements():
            seen.append(element)
            yield element
        self._cached = seen
        if self._filename:
            with open(self._filename, "wb") as f:
                pickle.dump([_structure.map_structure(to_numpy, e) for e in seen], f)

    def _cardinality(self):
        return self._input._cardinality()

    def _element_spec(self):
        return self._input.element_spec
