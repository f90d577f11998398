"""The datasets that start a pipeline: slices of arrays (Dataset.from_tensor_slices), one
element (Dataset.from_tensors) and a range of integers (Dataset.range). Python generators
(Dataset.from_generator) are in generator.py."""

import numpy as _np

from . import structure as _structure
from .dataset import Dataset
from .components import spec_of, to_numpy
from .tensor_spec import TensorSpec
from .._dtypes import as_dtype, int64

__all__ = ["RangeDataset", "TensorDataset", "TensorSliceDataset"]


class TensorSliceDataset(Dataset):
    """The slices of one structure of arrays along their first dimension."""

    def __init__(self, tensors):
        if _structure.is_structure(tensors) and not _structure.flatten(tensors):
            raise ValueError("Invalid `element`. `element` should not be empty.")
        self._tensors = _structure.map_structure(to_numpy, tensors)
        flat = _structure.flatten(self._tensors)
        for array in flat:
            if array.ndim == 0:
                raise ValueError("Unbatching a tensor is only supported for rank >= 1")
        sizes = [array.shape[0] for array in flat]
        for size in sizes[1:]:
            if size != sizes[0]:
                raise ValueError(
                    f"Dimensions {sizes[0]} and {size} are not compatible: the components "
                    "of from_tensor_slices must have the same size in dimension 0, got "
                    f"{sizes}")
        self._size = sizes[0]
        self._flat = flat

    def _elements(self):
        flat, structure = self._flat, self._tensors
        if not _structure.is_structure(structure):
            yield from flat[0]
            return
        if type(structure) is tuple and len(flat) == len(structure):  # a flat tuple
            yield from zip(*flat)
            return
        for i in range(self._size):
            yield _structure.pack_like(structure, [array[i] for array in flat])

    def _batches(self, batch_size, drop_remainder):
        """Yields each batch as read-only slices of the arrays (Note [Batches slice])."""
        stop = self._size - self._size % batch_size if drop_remainder else self._size
        for start in range(0, stop, batch_size):
            parts = []
            for array in self._flat:
                part = array[start:start + batch_size]
                part.flags.writeable = False
                parts.append(part)
            yield _structure.pack_like(self._tensors, parts)

    def _cardinality(self):
        return self._size

    def _element_spec(self):
        return _structure.map_structure(
            lambda a: TensorSpec(a.shape[1:], as_dtype(a.dtype)), self._tensors)


class RangeDataset(Dataset):
    """The int64 values of ``range(start, stop, step)``."""

    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Dataset.range takes 1 to 3 arguments, got {len(args)}")
        self._range = range(*(int(a) for a in args))

    def _elements(self):
        for i in self._range:
            yield _np.int64(i)

    def _cardinality(self):
        return len(self._range)

    def _element_spec(self):
        return TensorSpec((), int64)



class TensorDataset(Dataset):
    """One element: the whole of ``tensors`` (Dataset.from_tensors)."""

    def __init__(self, tensors):
        if _structure.is_structure(tensors) and not _structure.flatten(tensors):
            raise ValueError("Invalid `element`. `element` should not be empty.")
        self._tensors = _structure.map_structure(to_numpy, tensors)

    def _elements(self):
        yield self._tensors

    def _cardinality(self):
        return 1

    def _element_spec(self):
        return _structure.map_structure(spec_of, self._tensors)
