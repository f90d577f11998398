"""Random tensors (tf.random): stateful ops that follow ``set_seed`` and ``seed=``, and the
stateless ops whose numbers are a function of ``seed=[a, b]`` alone::

    mt.random.set_seed(42)
    u = mt.random.uniform([2, 3])                        # float32 in [0, 1)
    i = mt.random.uniform([4], maxval=10, dtype=mt.int32)
    s = mt.random.stateless_normal([3], seed=[1, 2])     # TensorFlow's algorithm

Bounds, means and standard deviations are scalars (TensorFlow also takes tensors that
broadcast against the shape).
"""

from __future__ import annotations

from typing import Any as _Any, Optional as _Optional

import numpy as _np

from . import _minitensor as _mt
from ._dtypes import as_dtype

__all__ = ["normal", "set_seed", "stateless_normal", "stateless_truncated_normal",
           "stateless_uniform", "truncated_normal", "uniform"]


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
