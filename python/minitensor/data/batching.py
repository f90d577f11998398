"""The datasets that change the first dimension: batch, padded_batch and unbatch.

A batch of a dataset that can slice its own arrays (from_tensor_slices, Note [Batches
slice]) is one slice per component, not a stack of rows; any other input is stacked element
by element.
"""

import numpy as _np

from .. import errors as _errors
from . import structure as _structure
from .components import to_numpy
from .dataset import Dataset, UNKNOWN_CARDINALITY
from .tensor_spec import TensorSpec

__all__ = ["BatchDataset", "PaddedBatchDataset", "UnbatchDataset", "positive"]


def positive(value, name):
    """Returns ``value`` as an int; ValueError when it is below 1."""
    value = int(value)
    if value < 1:
        raise ValueError(f"{name} must be greater than zero, got {value}")
    return value


def _batched_cardinality(n, batch_size, drop_remainder):
    if n < 0:
        return n
    return n // batch_size if drop_remainder else -(-n // batch_size)


def _groups(dataset, batch_size, drop_remainder):
    """Yields lists of ``batch_size`` consecutive elements (a shorter last one unless
    ``drop_remainder``)."""
    pending = []
    for element in dataset._elements():
        pending.append(element)
        if len(pending) == batch_size:
            yield pending
            pending = []
    if pending and not drop_remainder:
        yield pending


class BatchDataset(Dataset):
    """Consecutive elements stacked along a new first dimension."""

    def __init__(self, input_dataset, batch_size, drop_remainder):
        self._input = input_dataset
        self._batch_size = positive(batch_size, "Batch size")
        self._drop_remainder = bool(drop_remainder)

    def _elements(self):
        # Note [Batches slice]: a source over arrays gives each batch as slices of them,
        # which equal the stacked rows; only other inputs are stacked element by element.
        sliced = self._input._batches(self._batch_size, self._drop_remainder)
        if sliced is not None:
            yield from sliced
            return
        for group in _groups(self._input, self._batch_size, self._drop_remainder):
            yield _stack(group)

    def _cardinality(self):
        return _batched_cardinality(self._input._cardinality(), self._batch_size,
                                    self._drop_remainder)

    def _element_spec(self):
        size = self._batch_size if self._drop_remainder else None
        return _structure.map_structure(lambda s: TensorSpec((size,) + s.shape, s.dtype),
                                        self._input.element_spec)


def _columns(elements):
    """Returns each component's values across ``elements`` and their shapes; ValueError
    when the ranks differ."""
    columns = list(zip(*(_structure.flatten(e) for e in elements)))
    return columns, [[_np.shape(c) for c in column] for column in columns]


def _stack(elements):
    """Stacks each component of ``elements``; ValueError when their shapes differ."""
    first = elements[0]
    if not _structure.is_structure(first):
        columns = [elements]
    elif type(first) is tuple and not any(_structure.is_structure(c) for c in first):
        columns = zip(*elements)  # the common element: a flat tuple of components
    else:
        columns = zip(*(_structure.flatten(e) for e in elements))
    try:
        stacked = [_np.stack(column) for column in columns]
    except ValueError:  # which component, and which element: the slow way
        _check_shapes(elements)
        raise
    return _structure.pack_like(first, stacked)


def _check_shapes(elements):
    """Raises ValueError naming the first component and element whose shape differs."""
    columns, shapes = _columns(elements)
    for index, (column, column_shapes) in enumerate(zip(columns, shapes)):
        for i, shape in enumerate(column_shapes):
            if shape != column_shapes[0]:
                raise ValueError(
                    f"Cannot batch tensors with different shapes in component {index}. First "
                    f"element had shape {list(column_shapes[0])} and element {i} had shape "
                    f"{list(shape)}.")


class PaddedBatchDataset(Dataset):
    """Consecutive elements padded to one shape per component, then stacked."""

    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values,
                 drop_remainder):
        self._input = input_dataset
        self._batch_size = positive(batch_size, "Batch size")
        self._drop_remainder = bool(drop_remainder)
        specs = _structure.flatten(input_dataset.element_spec)
        if padded_shapes is None:
            shapes = [None] * len(specs)
        else:
            shapes = _structure.flatten_up_to(input_dataset.element_spec, padded_shapes)
        self._shapes = [_padded_shape(shape, spec) for shape, spec in zip(shapes, specs)]
        if padding_values is None or not _structure.is_structure(padding_values):
            values = [padding_values] * len(specs)
        else:
            values = _structure.flatten_up_to(input_dataset.element_spec, padding_values)
        self._values = [0 if v is None else _scalar(v) for v in values]

    def _elements(self):
        for group in _groups(self._input, self._batch_size, self._drop_remainder):
            columns, shapes = _columns(group)
            padded = [_pad(column, column_shapes, target, value)
                      for column, column_shapes, target, value
                      in zip(columns, shapes, self._shapes, self._values)]
            yield _structure.pack_like(group[0], padded)

    def _cardinality(self):
        return _batched_cardinality(self._input._cardinality(), self._batch_size,
                                    self._drop_remainder)

    def _element_spec(self):
        size = self._batch_size if self._drop_remainder else None
        specs = [TensorSpec((size,) + target, spec.dtype)
                 for target, spec in zip(self._shapes,
                                         _structure.flatten(self._input.element_spec))]
        return _structure.pack_like(self._input.element_spec, specs)


def _padded_shape(shape, spec):
    """Returns ``shape`` (None, or a list of ints with None or -1 for "the longest") as a
    tuple of ints and None; ValueError when its rank is not the component's. (A mapped
    component's spec is its first element's, so only the rank is checked here; an element
    longer than its padded shape is a DataLossError when it is reached.)"""
    if shape is None:
        return (None,) * len(spec.shape)
    shape = tuple(None if d is None or int(d) == -1 else int(d) for d in shape)
    if len(shape) != len(spec.shape):
        raise ValueError(f"The padded shape {shape} is not compatible with the shape "
                         f"{tuple(spec.shape)} of the corresponding input component.")
    return shape


def _scalar(value):
    array = to_numpy(value)
    if array.ndim != 0:
        raise ValueError(f"Padding value should be a scalar, got shape {array.shape}")
    return array


def _pad(column, shapes, target, value):
    """Pads each value of ``column`` with ``value`` to ``target`` (None: the longest of
    the column) and stacks them."""
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise ValueError("Cannot batch tensors of different ranks in padded_batch, got "
                         f"shapes {[list(s) for s in shapes]}")
    full = tuple(t if t is not None else max(s[i] for s in shapes)
                 for i, t in enumerate(target))
    if any(s[i] > full[i] for s in shapes for i in range(rank)):
        raise _errors.DataLossError(
            None, None, "Attempted to pad to a smaller size than the input element.")
    first = _np.asarray(column[0])
    out = _np.full((len(column),) + full, value, dtype=first.dtype)
    for i, c in enumerate(column):
        out[(i,) + tuple(slice(0, d) for d in shapes[i])] = _np.asarray(c)
    return out


class UnbatchDataset(Dataset):
    """Each element's slices along its first dimension, as elements."""

    def __init__(self, input_dataset):
        self._input = input_dataset
        specs = _structure.flatten(input_dataset.element_spec)
        if any(s.shape is not None and len(s.shape) == 0 for s in specs):
            raise ValueError("Cannot unbatch an input with scalar components.")
        known = {s.shape[0] for s in specs if s.shape and s.shape[0] is not None}
        if len(known) > 1:
            raise ValueError(_mismatch(*sorted(known)[:2]))

    def _elements(self):
        for element in self._input._elements():
            flat = _structure.flatten(element)
            sizes = [_np.shape(c)[0] for c in flat]
            for size in sizes[1:]:
                if size != sizes[0]:
                    raise _errors.InvalidArgumentError(None, None, _mismatch(sizes[0], size))
            arrays = [_np.asarray(c) for c in flat]
            for i in range(sizes[0]):
                yield _structure.pack_like(element, [a[i] for a in arrays])

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        return _structure.map_structure(lambda s: TensorSpec(s.shape[1:], s.dtype),
                                        self._input.element_spec)


def _mismatch(a, b):
    return ("`unbatch()` is only supported for datasets of elements whose components have a "
            f"matching leading dimension. Encountered both {a} and {b}.")
