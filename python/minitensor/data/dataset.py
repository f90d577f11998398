"""mt.data.Dataset: an input pipeline over host memory (tf.data.Dataset's names).

    ds = mt.data.Dataset.from_tensor_slices((x, y))      # NumPy arrays, lists or tensors
    ds = ds.shuffle(1000, seed=1).batch(32).repeat(2)
    for xb, yb in ds:                                    # mt tensors, one batch each
        ...

A dataset holds its elements as NumPy arrays; iterating builds each element (a batch,
after ``batch``) with NumPy and returns it as mt tensors made by ``mt.constant``, on the
device the current ``mt.device`` scope asks for. ``map``, ``filter`` and ``interleave`` run
their functions eagerly on mt tensors; the tensors ``map`` returns stay tensors (no copy
back to NumPy). Subclasses (sources.py, generator.py, batching.py, transformations.py,
combinations.py) give ``_elements()``, a generator of structures of arrays or tensors,
``_cardinality()`` and ``_element_spec()``; a source over arrays may also give
``_batches()`` (Note [Batches slice] in batching.py).
"""

from .._constant_op import constant
from .._dtypes import int64
from . import structure as _structure
from .components import to_numpy
from .iterator import Iterator

__all__ = ["Dataset", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _numpy_value(component):
    array = to_numpy(component)
    return array[()] if array.ndim == 0 else array


# The kinds of dataset the methods below make, by class name: each subclass registers
# itself when its module (sources.py, batching.py, ...; data/__init__.py imports them all)
# defines it, so that this module, which they import, imports none of them.
_KINDS = {}


def _kind(name):
    return _KINDS[name]


class Dataset:
    """A sequence of elements, each a component or a tuple or dict of components."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _KINDS[cls.__name__] = cls

    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """Returns a dataset whose element i is ``tensors`` sliced at i along dimension 0.
        ``tensors`` is an array-like (NumPy array, list, mt tensor) or a tuple or dict of
        them. Raises ValueError for no components, a scalar component, or components whose
        first dimensions differ."""
        return _kind("TensorSliceDataset")(tensors)

    @staticmethod
    def from_tensors(tensors, name=None):
        """Returns a dataset of one element: ``tensors`` (an array-like or a tuple or dict of
        them) as a whole."""
        return _kind("TensorDataset")(tensors)

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        """Returns the elements ``generator(*args)`` yields (called again at each
        iteration), converted to the dtypes of ``output_signature`` (a structure of
        TensorSpecs; or ``output_types`` with ``output_shapes``) as NumPy converts, and
        checked against its shapes. Raises TypeError for a generator that is not callable
        or a missing or doubled signature; a yielded element that does not fit raises
        InvalidArgumentError when it is reached, as in TensorFlow."""
        return _kind("GeneratorDataset")(generator, output_types, output_shapes, args,
                                         output_signature)

    @staticmethod
    def zip(*args, datasets=None, name=None):
        """Returns the datasets side by side: element i is the structure of datasets (one
        tuple or dict, or several arguments) with each one's element i; it ends with the
        shortest. Raises TypeError for no dataset or a list of them (use a tuple)."""
        if datasets is not None and args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        if datasets is None:
            if not args:
                raise TypeError("Must pass at least one dataset to `zip`.")
            datasets = args[0] if len(args) == 1 else args
        return _kind("ZipDataset")(datasets)

    @staticmethod
    def range(*args):
        """Returns the int64 elements of ``range(*args)`` (tf.data.Dataset.range)."""
        return _kind("RangeDataset")(*args)

    def batch(self, batch_size, drop_remainder=False, name=None):
        """Stacks ``batch_size`` consecutive elements into one; the last batch is smaller
        unless ``drop_remainder``. Raises ValueError for a batch_size below 1."""
        return _kind("BatchDataset")(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        """Batches as ``batch``, each component padded first to ``padded_shapes`` (a shape
        per component; None or -1 for a dimension, or None for the whole shape, pads to the
        longest in the batch) with ``padding_values`` (a scalar, or one per component; 0 by
        default). Raises ValueError for a padded shape that does not fit the component's;
        DataLossError, when reached, for an element longer than its padded shape."""
        return _kind("PaddedBatchDataset")(self, batch_size, padded_shapes, padding_values,
                                  drop_remainder)

    def unbatch(self, name=None):
        """Splits each element along its first dimension into elements. Raises ValueError
        for a scalar component or components whose first dimensions differ."""
        return _kind("UnbatchDataset")(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffles through a buffer of ``buffer_size`` elements, as tf.data does: each step
        yields a random element of the buffer and refills it. ``seed`` (or, without it, a
        seed drawn from NumPy's global generator, which ``mt.keras.utils.set_random_seed``
        sets) makes the orders repeatable; the order changes at each iteration unless
        ``reshuffle_each_iteration`` is False. Raises ValueError for a buffer_size below 1."""
        return _kind("ShuffleDataset")(self, buffer_size, seed, reshuffle_each_iteration)

    def repeat(self, count=None, name=None):
        """Repeats the dataset ``count`` times; forever for None or -1."""
        return _kind("RepeatDataset")(self, count)

    def take(self, count, name=None):
        """Returns the first ``count`` elements; all of them for -1."""
        return _kind("TakeDataset")(self, count)

    def skip(self, count, name=None):
        """Returns the elements after the first ``count``; none for -1."""
        return _kind("SkipDataset")(self, count)

    def shard(self, num_shards, index, name=None):
        """Returns every ``num_shards``-th element from element ``index`` on (one worker's
        share: ``InputContext.num_input_pipelines`` and ``input_pipeline_id``). Raises
        InvalidArgumentError, as TensorFlow, unless 0 <= index < num_shards."""
        return _kind("ShardDataset")(self, num_shards, index)

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """Applies ``map_func`` to each element, as mt tensors (a tuple element is passed as
        separate arguments); its results become the new elements."""
        return _kind("MapDataset")(self, map_func)

    def filter(self, predicate, name=None):
        """Keeps the elements for which ``predicate`` (on mt tensors, a tuple element as
        separate arguments) returns true: a scalar bool tensor or a Python bool. Raises
        ValueError for another result, when reached."""
        return _kind("FilterDataset")(self, predicate)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        """Reads the datasets ``map_func`` makes of the elements in turn: ``block_length``
        (1) elements from each of ``cycle_length`` (AUTOTUNE or None: the CPUs this process
        may use, as TensorFlow) open ones, a finished one replaced by the next element's.
        Raises TypeError when ``map_func`` returns something else than a dataset."""
        return _kind("InterleaveDataset")(self, map_func, cycle_length, block_length)

    def cache(self, filename="", name=None):
        """Keeps the elements of the first complete pass in memory (or, with a
        ``filename``, in that file, which later passes and processes read) and gives them
        at later passes without running the pipeline before it."""
        return _kind("CacheDataset")(self, filename)

    def prefetch(self, buffer_size, name=None):
        """Returns this dataset: elements are made when asked for, so there is nothing to
        prefetch (kept so that pipelines written for tf.data run)."""
        return self

    def __iter__(self):
        """Returns an iterator of the elements as mt tensors, in the element's structure,
        which a checkpoint can hold (mt.data.Iterator)."""
        return Iterator(self)

    def as_numpy_iterator(self):
        """Yields each element as NumPy arrays (a scalar as a NumPy scalar)."""
        for element in self._elements():
            yield _structure.map_structure(_numpy_value, element)

    def cardinality(self):
        """Returns the number of elements as an int64 scalar tensor: INFINITE_CARDINALITY
        (-1) for a dataset that repeats forever, UNKNOWN_CARDINALITY (-2) when it is not
        known without iterating."""
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

    def _batches(self, batch_size, drop_remainder):
        """Returns an iterator of this dataset's batches made without stacking, or None."""
        return None

    def _cardinality(self):
        raise NotImplementedError

    def _element_spec(self):
        raise NotImplementedError
