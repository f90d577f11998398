"""tf.nn.dropout and tf.nn.experimental.stateless_dropout, composed of a uniform random op,
a comparison and two products, as TensorFlow computes them: each element is kept where its
uniform number is >= rate, and the kept ones are scaled by 1 / (1 - rate).

    mt.nn.dropout(x, 0.2)                                     # mt.random's stateful numbers
    mt.nn.experimental.stateless_dropout(x, 0.2, seed=[1, 2]) # TensorFlow's mask, bit for bit

The stateless form draws its numbers from ``mt.random.stateless_uniform`` (Philox, the same
bits on every device and as TensorFlow's for the same seed), so its mask is a function of
the seed alone; Keras's Dropout layer uses it.
"""

import numbers as _numbers

from . import _minitensor as _mt
from . import random as _random
from ._converted_ops import cast
from ._constant_op import convert_to_tensor

__all__ = ["dropout", "stateless_dropout"]

_FLOATS = (_mt.DType.float32, _mt.DType.float64, _mt.DType.float16, _mt.DType.bfloat16)


def _checked(x, rate, noise_shape):
    """Returns (x as a tensor, the mask's shape); ValueError, with TensorFlow's messages,
    for a rate outside [0, 1) or an x that is not floating-point. A scalar tensor rate (a
    variable's value) is taken as TensorFlow takes it: by ops, unchecked, never read on
    the host, so a function replays it."""
    if isinstance(rate, (_mt.Tensor, _mt._Variable)):
        rate = convert_to_tensor(rate)
        if rate.ndim != 0:
            raise ValueError(f"Shape {tuple(rate.shape)} must have rank 0")
    elif rate is None or isinstance(rate, bool) or not isinstance(rate, _numbers.Real):
        raise ValueError(f"`rate` must be a scalar or scalar tensor. Received: rate={rate}")
    elif not 0 <= rate < 1:
        raise ValueError("`rate` must be a scalar tensor or a float in the range [0, 1). "
                         f"Received: rate={rate}")
    x = convert_to_tensor(x)
    if x.dtype not in _FLOATS:
        raise ValueError("`x.dtype` must be a floating point tensor as `x` will be scaled. "
                         f"Received: x_dtype={x.dtype!r}")
    shape = list(x.shape) if noise_shape is None else [
        x.shape[i] if d is None else int(d) for i, d in enumerate(noise_shape)]
    return x, shape


def _dropped(x, rate, noise):
    if isinstance(rate, _mt.Tensor):  # a scalar tensor: the arithmetic in x's dtype, by ops
        rate = cast(rate, x.dtype)
    keep = cast(_mt.greater_equal(noise, rate), x.dtype)
    return (x * (1.0 / (1.0 - rate))) * keep


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Returns ``x`` with each element zeroed with probability ``rate`` (in [0, 1)) and
    the others scaled by 1 / (1 - rate); ``noise_shape`` (None entries taking x's
    dimension) shares one decision along dimensions of size 1. The numbers come from
    ``mt.random.uniform`` with ``seed``, so they follow ``mt.random.set_seed``."""
    del name
    x, shape = _checked(x, rate, noise_shape)
    if isinstance(rate, _numbers.Real) and rate == 0:
        return x
    return _dropped(x, rate, _random.uniform(shape, dtype=x.dtype, seed=seed))


def stateless_dropout(x, rate, seed, rng_alg=None, noise_shape=None, name=None):
    """Returns ``x`` dropped as ``dropout`` does, the mask a function of ``seed`` (a pair
    of ints) alone: the same on every device and as TensorFlow's for the same seed."""
    del rng_alg, name
    x, shape = _checked(x, rate, noise_shape)
    return _dropped(x, rate, _random.stateless_uniform(shape, seed, dtype=x.dtype))
