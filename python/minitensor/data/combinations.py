"""The datasets made of several others: Dataset.zip (elements side by side) and interleave
(the datasets a function makes of each element, read in turns)."""

import os

from . import structure as _structure
from .batching import positive
from .dataset import Dataset, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .transformations import call_with

__all__ = ["InterleaveDataset", "ZipDataset"]


class ZipDataset(Dataset):
    """Element i is the structure ``datasets`` with each dataset's element i; ends with the
    shortest."""

    def __init__(self, datasets):
        self._flat = _structure.flatten(datasets)
        for d in self._flat:
            if isinstance(d, list):
                raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) "
                                "structures of `tf.data.Dataset` objects. Python `list` is "
                                "not supported and you should use `tuple` instead.")
            if not isinstance(d, Dataset):
                raise TypeError("Invalid input to `zip`. Inputs are expected to be (nested) "
                                "structures of `tf.data.Dataset` objects, got "
                                f"{type(d).__name__}.")
        self._datasets = datasets

    def _elements(self):
        iterators = [d._elements() for d in self._flat]
        while True:
            parts = []
            for it in iterators:
                element = next(it, _END)
                if element is _END:
                    return
                parts.append(element)
            yield _structure.pack_like(self._datasets, parts)

    def _cardinality(self):
        sizes = [d._cardinality() for d in self._flat]
        if UNKNOWN_CARDINALITY in sizes:
            return UNKNOWN_CARDINALITY
        finite = [n for n in sizes if n != INFINITE_CARDINALITY]
        return min(finite) if finite else INFINITE_CARDINALITY

    def _element_spec(self):
        return _structure.pack_like(self._datasets, [d.element_spec for d in self._flat])


_END = object()


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class InterleaveDataset(Dataset):
    """The elements of ``map_func(element)`` (a dataset) for the input's elements, read
    ``block_length`` at a time from ``cycle_length`` of them in turn, a finished one
    replaced by the next input element's, in tf.data's order."""

    def __init__(self, input_dataset, map_func, cycle_length, block_length):
        if not callable(map_func):
            raise TypeError(f"map_func must be callable, got {type(map_func).__name__}")
        self._input = input_dataset
        self._map_func = map_func
        auto = cycle_length is None or cycle_length == -1  # AUTOTUNE: the CPUs this may use
        self._cycle_length = (_cpu_count() if auto
                              else positive(cycle_length, "cycle_length"))
        self._block_length = 1 if block_length is None else positive(block_length,
                                                                     "block_length")

    def _dataset_of(self, element):
        made = call_with(self._map_func, element)
        if not isinstance(made, Dataset):
            raise TypeError("The `map_func` argument must return a `Dataset` object. Got "
                            f"{type(made).__name__}.")
        return made._elements()

    def _elements(self):
        inputs = self._input._elements()
        slots = [None] * self._cycle_length
        index = block = open_count = 0
        ended = False
        while not ended or open_count > 0:
            if slots[index] is None:
                if not ended:
                    element = next(inputs, _END)
                    if element is _END:
                        ended = True
                    else:
                        slots[index] = self._dataset_of(element)
                        open_count += 1
                    continue
                index, block = (index + 1) % self._cycle_length, 0
                continue
            value = next(slots[index], _END)
            if value is _END:
                slots[index] = None
                open_count -= 1
                index, block = (index + 1) % self._cycle_length, 0
                continue
            block += 1
            if block == self._block_length:
                index, block = (index + 1) % self._cycle_length, 0
            yield value

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        """The spec of the dataset ``map_func`` makes of the first element (map_func runs
        once to find it); None for an empty input."""
        first = next(iter(self._input._elements()), None)
        if first is None:
            return None
        return call_with(self._map_func, first).element_spec
