"""mt.data.Dataset: an input pipeline over host memory (tf.data.Dataset's names).

    ds = mt.data.Dataset.from_tensor_slices((x, y))      # NumPy arrays, lists or tensors
    ds = ds.shuffle(1000, seed=1).batch(32).repeat(2)
    for xb, yb in ds:                                    # mt tensors, one batch each
        ...

A dataset holds its elements as NumPy arrays; iterating builds each element (a batch,
after ``batch``) with NumPy and returns it as mt tensors made by ``mt.constant``, on the
device the current ``mt.device`` scope asks for. ``map`` runs its function eagerly on mt
tensors. Subclasses (sources.py, transformations.py) give ``_elements()``, a generator of
NumPy structures, and ``_cardinality()``.
"""

from . import structure as _structure

__all__ = ["Dataset", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class Dataset:
    """A sequence of elements, each a component or a tuple or dict of components."""

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Returns a dataset whose element i is ``tensors`` sliced at i along dimension 0.
        ``tensors`` is an array-like (NumPy array, list, mt tensor) or a tuple or dict of
        them. Raises ValueError for no components, a scalar component, or components whose
        first dimensions differ."""
        from .sources import TensorSliceDataset
        return TensorSliceDataset(tensors)

    @staticmethod
    def range(*args):
        """Returns the int64 elements of ``range(*args)`` (tf.data.Dataset.range)."""
        from .sources import RangeDataset
        return RangeDataset(*args)

    def batch(self, batch_size, drop_remainder=False, name=None):
        """Stacks ``batch_size`` consecutive elements into one; the last batch is smaller
        unless ``drop_remainder``. Raises ValueError for a batch_size below 1."""
        from .transformations import BatchDataset
        return BatchDataset(self, batch_size, drop_remainder)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles through a buffer of ``buffer_size`` elements, as tf.data does: each step
        yields a random element of the buffer and refills it. ``seed`` (or, without it, a
        seed drawn from NumPy's global generator, which ``mt.keras.utils.set_random_seed``
        sets) makes the orders repeatable; the order changes at each iteration unless
        ``reshuffle_each_iteration`` is False. Raises ValueError for a buffer_size below 1."""
        from .transformations import ShuffleDataset
        return ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times; forever for None or -1."""
        from .transformations import RepeatDataset
        return RepeatDataset(self, count)

    def take(self, count, name=None):
        """Returns the first ``count`` elements; all of them for -1."""
        from .transformations import TakeDataset
        return TakeDataset(self, count)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element, as mt tensors (a tuple element is passed as
        separate arguments); its results become the new elements."""
        from .transformations import MapDataset
        return MapDataset(self, map_func)

    def prefetch(self, buffer_size, name=None):
        """Returns this dataset: elements are made when asked for, so there is nothing to
        prefetch (kept so that pipelines written for tf.data run)."""
        return self

    def __iter__(self):
        """Yields each element as mt tensors, in the element's structure."""
        from .. import constant  # the package has finished importing by now
        for element in self._elements():
            yield _structure.map_structure(constant, element)

    def as_numpy_iterator(self):
        """Yields each element as NumPy arrays."""
        return self._elements()

    def cardinality(self):
        """Returns the number of elements as an int64 scalar tensor: INFINITE_CARDINALITY
        (-1) for a dataset that repeats forever, UNKNOWN_CARDINALITY (-2) when it is not
        known without iterating."""
        from .. import constant, int64
        return constant(self._cardinality(), int64)

    def __len__(self):
        """Returns the number of elements; TypeError when infinite or unknown."""
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True  # as tf.data: a dataset is true even when __len__ would be 0

    @property
    def element_spec(self):
        """The TensorSpec of each component, in the element's structure."""
        return self._element_spec()

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self.element_spec!r}>"

    def _elements(self):
        raise NotImplementedError

    def _cardinality(self):
        raise NotImplementedError

    def _element_spec(self):
        raise NotImplementedError
