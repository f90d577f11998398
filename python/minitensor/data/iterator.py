"""mt.data.Iterator: what ``iter(dataset)`` returns, and the object a checkpoint saves to
resume a pipeline where it was (tf.data's iterator checkpointing)::

    it = iter(ds)                                   # ds = range(100).shuffle(10).batch(4)
    ckpt = mt.train.Checkpoint(iterator=it)
    next(it); path = ckpt.save("/tmp/run/ckpt")     # saves the position: 1 element given
    ckpt.restore(path)                              # next(it) is the saved one's next

Note [Iterator checkpoints]: a pipeline of minitensor is a chain of Python generators
whose state cannot be read, but it is a function of a few numbers: how many elements the
iterator gave, and each shuffle's seed and the passes it had begun when the iterator
began (its first element). A checkpoint saves those ("<path>/position", and
"<path>/shuffles", an int64 [k, 2] of (seed, passes) per shuffle in the pipeline's order);
a restore sets the shuffles back, starts the pipeline again and replays it to the
position, dropping the elements (never made into tensors). The replay costs the time the
skipped elements took to make, and gives the saved elements only if the functions given
to ``map``, ``filter`` and ``interleave`` give the same results again (TensorFlow saves its
pipeline's buffers instead); datasets that ``interleave``'s function makes are not seen,
so an unseeded shuffle among them is not restored. A pipeline with a source whose
position cannot be recorded (``from_generator``) raises FailedPreconditionError naming it
when saved, as TensorFlow does.
"""

import numpy as _np

from .._constant_op import constant
from .._dtypes import int64
from .._minitensor import Tensor
from ..errors import FailedPreconditionError, OutOfRangeError
from . import structure as _structure

__all__ = ["Iterator"]


def _inputs(dataset):
    """Returns the datasets ``dataset`` reads: its attributes that are datasets, or tuples,
    lists and dicts of them."""
    out = []
    for value in vars(dataset).values():
        values = value.values() if isinstance(value, dict) else \
            value if isinstance(value, (tuple, list)) else (value,)
        out += [v for v in values if hasattr(v, "_elements") and hasattr(v, "_cardinality")]
    return out


def _pipeline(dataset):
    """Returns every dataset of the pipeline ending at ``dataset``, each once, depth first."""
    out, stack, seen = [], [dataset], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        stack.extend(reversed(_inputs(node)))
    return out


def _as_tensor(component):
    return component if isinstance(component, Tensor) else constant(component)


class Iterator:
    """The elements of a dataset, one ``next`` at a time, as mt tensors (tf.data.Iterator).
    A checkpoint that holds it saves and restores its position (Note [Iterator
    checkpoints])."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._shuffles = [n for n in _pipeline(dataset) if hasattr(n, "_shuffle_state")]
        self._start = None  # the shuffles' states when the first element was asked for
        self._elements = dataset._elements()
        self._position = 0

    def _shuffle_states(self):
        return [n._shuffle_state() for n in self._shuffles]

    def __iter__(self):
        return self

    def __next__(self):
        if self._start is None:
            self._start = self._shuffle_states()
        element = next(self._elements)
        self._position += 1
        return _structure.map_structure(_as_tensor, element)

    def get_next(self):
        """Returns the next element; raises OutOfRangeError at the end (as tf.data)."""
        try:
            return next(self)
        except StopIteration:
            raise OutOfRangeError(None, None, "End of sequence") from None

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def _serialize_to_tensors(self):
        """Returns the iterator's state as named tensors; FailedPreconditionError when the
        pipeline has a dataset whose position cannot be recorded."""
        for node in _pipeline(self._dataset):
            reason = getattr(node, "_unsaveable_reason", None)
            if reason is not None:
                raise FailedPreconditionError(
                    None, None, f"The iterator cannot be saved: {reason}.")
        start = self._start if self._start is not None else self._shuffle_states()
        shuffles = _np.array(start, _np.int64).reshape(-1, 2)
        return {"position": constant(self._position, dtype=int64),
                "shuffles": constant(shuffles, dtype=int64)}

    def _check_tensors(self, tensors):
        """Raises ValueError unless ``tensors`` are the state of an iterator over a pipeline
        like this one (a position, and as many shuffles)."""
        if sorted(tensors) != ["position", "shuffles"]:
            raise ValueError(f"An iterator's state is 'position' and 'shuffles', not "
                             f"{sorted(tensors)}.")
        position = _np.asarray(tensors["position"])
        shuffles = _np.asarray(tensors["shuffles"])
        if position.shape != () or position < 0 or shuffles.ndim != 2 or \
                shuffles.shape[1] != 2 or len(shuffles) != len(self._shuffles):
            raise ValueError(
                f"The checkpoint's iterator state (position {position.tolist()}, shuffles of "
                f"shape {list(shuffles.shape)}) does not fit this iterator, whose pipeline has "
                f"{len(self._shuffles)} shuffles.")

    def _restore_from_tensors(self, tensors):
        """Sets the pipeline back to the saved position (replaying it)."""
        self._check_tensors(tensors)
        position = int(_np.asarray(tensors["position"]))
        shuffles = _np.asarray(tensors["shuffles"])
        for node, (seed, passes) in zip(self._shuffles, shuffles.tolist()):
            node._set_shuffle_state(seed, passes)
        self._start = self._shuffle_states() if position > 0 else None
        self._elements = self._dataset._elements()
        for _ in range(position):
            if next(self._elements, _END) is _END:
                break
        self._position = position


_END = object()
