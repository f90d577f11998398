"""Random tensors (tf.random): stateful ops that follow ``set_seed`` and ``seed=``, and the
stateless ops whose numbers are a function of ``seed=[a, b]`` alone::

    mt.random.set_seed(42)
    u = mt.random.uniform([2, 3])                        # float32 in [0, 1)
    i = mt.random.uniform([4], maxval=10, dtype=mt.int32)
    s = mt.random.stateless_normal([3], seed=[1, 2])     # TensorFlow's algorithm
    g = mt.random.Generator.from_seed(1234)              # tf.random.Generator
    x = g.normal([2, 2])                                 # a checkpoint restores g's draws

Bounds, means and standard deviations are scalars (TensorFlow also takes tensors that
broadcast against the shape).
"""

from __future__ import annotations

from typing import Any as _Any, Optional as _Optional

import numpy as _np

from . import _minitensor as _mt
from ._dtypes import as_dtype, int64 as _int64
from ._variables import Variable as _Variable

__all__ = ["Algorithm", "Generator", "create_rng_state", "get_global_generator", "normal",
           "set_global_generator", "set_seed", "stateless_normal",
           "stateless_truncated_normal", "stateless_uniform", "truncated_normal", "uniform"]


def _dtype(dtype):
    return as_dtype(dtype)


def _is_int(dtype) -> bool:
    return dtype in (_mt.DType.int32, _mt.DType.int64)


def _array(value) -> _np.ndarray:
    return _np.asarray(value.numpy() if isinstance(value, _mt.Tensor) else value)


def _shape(shape) -> list:
    dims = _array(shape)
    if dims.ndim > 1 or (dims.size and not _np.issubdtype(dims.dtype, _np.integer)):
        raise ValueError(f"shape must be a vector of integers, not {shape!r}")
    return [int(d) for d in dims.reshape(-1)]


def _scalar(value, name: str):
    array = _array(value)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a scalar, not of shape {list(array.shape)}")
    return array.item()


def _seed_pair(seed) -> list:
    pair = _array(seed)
    if pair.shape != (2,) or not _np.issubdtype(pair.dtype, _np.integer):
        raise ValueError(f"seed must be a shape [2] integer tensor, not {seed!r}")
    return [int(s) for s in pair]


def set_seed(seed: _Optional[int]) -> None:
    """Sets the global random seed (tf.random.set_seed); None clears it."""
    _mt.random_set_seed(None if seed is None else int(seed))


def uniform(shape, minval: _Any = 0, maxval: _Any = None, dtype=_mt.DType.float32,
            seed: _Optional[int] = None, name: _Optional[str] = None):
    """Returns values uniform in [minval, maxval) (tf.random.uniform)."""
    dtype = _dtype(dtype)
    dims = _shape(shape)
    if _is_int(dtype):
        if maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        return _mt.random_uniform_int(dims, int(_scalar(minval, "minval")),
                                      int(_scalar(maxval, "maxval")), dtype, seed)
    maxval = 1 if maxval is None else maxval
    return _mt.random_uniform(dims, float(_scalar(minval, "minval")),
                              float(_scalar(maxval, "maxval")), dtype, seed)


def normal(shape, mean: _Any = 0.0, stddev: _Any = 1.0, dtype=_mt.DType.float32,
           seed: _Optional[int] = None, name: _Optional[str] = None):
    """Returns normal values (tf.random.normal)."""
    return _mt.random_normal(_shape(shape), float(_scalar(mean, "mean")),
                             float(_scalar(stddev, "stddev")), _dtype(dtype), seed)


def truncated_normal(shape, mean: _Any = 0.0, stddev: _Any = 1.0, dtype=_mt.DType.float32,
                     seed: _Optional[int] = None, name: _Optional[str] = None):
    """Returns normal values within two standard deviations (tf.random.truncated_normal)."""
    return _mt.random_truncated_normal(_shape(shape), float(_scalar(mean, "mean")),
                                       float(_scalar(stddev, "stddev")), _dtype(dtype), seed)


def stateless_uniform(shape, seed, minval: _Any = 0, maxval: _Any = None,
                      dtype=_mt.DType.float32, name: _Optional[str] = None, alg="auto_select"):
    """Returns values uniform in [minval, maxval) from ``seed`` alone
    (tf.random.stateless_uniform with the Philox algorithm)."""
    dtype = _dtype(dtype)
    dims, pair = _shape(shape), _seed_pair(seed)
    if _is_int(dtype):
        if minval is None or maxval is None:
            raise ValueError(f"For integer dtype {dtype!r}, minval and maxval must be given "
                             f"(minitensor has no full-range form); got minval={minval} and "
                             f"maxval={maxval}")
        return _mt.random_stateless_uniform_int(dims, pair, int(_scalar(minval, "minval")),
                                                int(_scalar(maxval, "maxval")), dtype)
    maxval = 1 if maxval is None else maxval
    return _mt.random_stateless_uniform(dims, pair, float(_scalar(minval, "minval")),
                                        float(_scalar(maxval, "maxval")), dtype)


def stateless_normal(shape, seed, mean: _Any = 0.0, stddev: _Any = 1.0,
                     dtype=_mt.DType.float32, name: _Optional[str] = None, alg="auto_select"):
    """Returns normal values from ``seed`` alone (tf.random.stateless_normal)."""
    return _mt.random_stateless_normal(_shape(shape), _seed_pair(seed),
                                       float(_scalar(mean, "mean")),
                                       float(_scalar(stddev, "stddev")), _dtype(dtype))


def stateless_truncated_normal(shape, seed, mean: _Any = 0.0, stddev: _Any = 1.0,
                               dtype=_mt.DType.float32, name: _Optional[str] = None,
                               alg="auto_select"):
    """Returns truncated normal values from ``seed`` alone
    (tf.random.stateless_truncated_normal)."""
    return _mt.random_stateless_truncated_normal(_shape(shape), _seed_pair(seed),
                                                 float(_scalar(mean, "mean")),
                                                 float(_scalar(stddev, "stddev")), _dtype(dtype))


class Algorithm:
    """The generator algorithms (tf.random.Algorithm): Philox only here."""
    PHILOX = 1


def _check_alg(alg):
    if alg not in (None, "philox", Algorithm.PHILOX):
        raise ValueError(f"Unsupported algorithm {alg!r}: minitensor's generators are Philox "
                         f"(1 or 'philox')")


def _as_int64(word: int) -> int:
    word &= (1 << 64) - 1
    return word - (1 << 64) if word >= 1 << 63 else word


def create_rng_state(seed, alg="philox"):
    """Returns the int64 [3] Philox state of ``seed`` (tf.random.create_rng_state): an
    integer is cut into 64-bit words, low first; a vector is padded with zeros."""
    _check_alg(alg)
    if isinstance(seed, (int, _np.integer)):
        seed, words = int(seed), []
        for _ in range(3):
            words.append(_as_int64(seed))
            seed >>= 64
    else:
        array = _array(seed)
        if array.ndim != 1 or not _np.issubdtype(array.dtype, _np.integer):
            raise ValueError(f"seed must be an integer or a vector of integers, not {seed!r}")
        words = [_as_int64(int(w)) for w in array[:3]] + [0] * max(0, 3 - array.size)
    return _np.array(words, _np.int64)


class Generator:
    """A random number generator whose state is an int64 [3] variable (tf.random.Generator
    with Philox): uniform numbers are TensorFlow's for the same state, and a checkpoint
    that holds the generator (``mt.train.Checkpoint(rng=g)``) restores its next draws.
    Raises ValueError for a state that is not three int64 words."""

    def __init__(self, copy_from=None, state=None, alg=None):
        _check_alg(alg)
        if copy_from is not None:
            state = copy_from.state.numpy()
        if state is None:
            raise ValueError("Generator needs copy_from or state (or use from_seed, "
                             "from_state or from_non_deterministic_state)")
        self._state_var = _Variable(self._checked(state), trainable=False, name="StateVar",
                                    dtype=_int64)
        self._impl = _mt._Generator(self._state_var)

    @staticmethod
    def _checked(state):
        array = _array(state)
        if array.shape != (3,) or not _np.issubdtype(array.dtype, _np.integer):
            raise ValueError(f"The state of a Philox generator must be 3 integers, not "
                             f"{state!r}")
        return array.astype(_np.int64)

    @classmethod
    def from_seed(cls, seed, alg=None):
        """Returns a generator of state ``create_rng_state(seed)``."""
        return cls(state=create_rng_state(seed), alg=alg)

    @classmethod
    def from_state(cls, state, alg=None):
        """Returns a generator of state ``state`` (three int64 words)."""
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        """Returns a generator of a state drawn from the operating system's entropy."""
        words = _np.random.SeedSequence().generate_state(3, _np.uint64)
        return cls(state=words.view(_np.int64), alg=alg)

    @property
    def state(self):
        """The state variable: counter (two words, low first) and key."""
        return self._state_var

    @property
    def algorithm(self):
        return Algorithm.PHILOX

    def _checkpoint_children(self):
        return [("state", self._state_var)]

    def reset(self, state):
        """Sets the state to ``state``."""
        self._state_var.assign(self._checked(state))

    def reset_from_seed(self, seed):
        """Sets the state to ``create_rng_state(seed)``."""
        self.reset(create_rng_state(seed))

    def uniform(self, shape, minval=0, maxval=None, dtype=_mt.DType.float32, name=None):
        """Returns values uniform in [minval, maxval); integer dtypes need maxval."""
        dtype = _dtype(dtype)
        if _is_int(dtype) and maxval is None:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        return self._impl.uniform(_shape(shape), float(_scalar(minval, "minval")),
                                  None if maxval is None else float(_scalar(maxval, "maxval")),
                                  dtype)

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=_mt.DType.float32, name=None):
        """Returns normal values."""
        return self._impl.normal(_shape(shape), float(_scalar(mean, "mean")),
                                 float(_scalar(stddev, "stddev")), _dtype(dtype))

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=_mt.DType.float32,
                         name=None):
        """Returns normal values within two standard deviations."""
        return self._impl.truncated_normal(_shape(shape), float(_scalar(mean, "mean")),
                                           float(_scalar(stddev, "stddev")), _dtype(dtype))


_global_generator = None


def get_global_generator():
    """Returns the global generator (tf.random.get_global_generator), made at the first
    call from a non-deterministic state."""
    global _global_generator
    if _global_generator is None:
        _global_generator = Generator.from_non_deterministic_state()
    return _global_generator


def set_global_generator(generator):
    """Replaces the global generator (tf.random.set_global_generator)."""
    global _global_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator takes a Generator, not {generator!r}")
    _global_generator = generator
