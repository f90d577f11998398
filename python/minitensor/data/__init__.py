"""Input pipelines (tf.data): ``mt.data.Dataset`` over NumPy arrays, lists or tensors.

    ds = mt.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(32)
    for xb, yb in ds:
        ...
"""

from .dataset import Dataset, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY
from .iterator import Iterator
# The modules of the dataset kinds, each registering its own with Dataset when imported.
from . import batching, combinations, generator, sources, transformations  # noqa: F401
from .tensor_spec import TensorSpec

AUTOTUNE = -1  # tf.data.AUTOTUNE: accepted by prefetch and map, which ignore it

__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "Iterator", "TensorSpec",
           "UNKNOWN_CARDINALITY"]
