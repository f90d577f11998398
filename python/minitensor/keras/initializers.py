"""tf.keras.initializers: what fills a layer's new variables.

    init = mt.keras.initializers.GlorotUniform(seed=1)
    w = mt.Variable(init((2, 8)))

An initializer without a seed draws from ``mt.random`` (stateful), so that
``mt.random.set_seed`` or ``mt.keras.utils.set_random_seed`` makes models repeatable; one
with a seed gives the same values at every call, as Keras's.
"""

import math as _math

from .. import random
from .._constant_op import fill
from .._converted_ops import cast
from .._dtypes import as_dtype, float32

__all__ = ["Constant", "GlorotUniform", "Initializer", "Ones", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "Zeros", "get"]


class Initializer:
    """Returns a new tensor of ``shape`` when called: ``init(shape, dtype)``."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError

    def get_config(self):
        return {}


def _dtype(dtype):
    return float32 if dtype is None else as_dtype(dtype)


class Constant(Initializer):
    """Fills with ``value``."""

    def __init__(self, value=0.0):
        self.value = float(value)

    def __call__(self, shape, dtype=None):
        return cast(fill(list(shape), self.value), _dtype(dtype))

    def get_config(self):
        return {"value": self.value}


class Zeros(Constant):
    """Fills with 0."""

    def __init__(self):
        super().__init__(0.0)


class Ones(Constant):
    """Fills with 1."""

    def __init__(self):
        super().__init__(1.0)


def _fans(shape):
    """Returns (fan_in, fan_out) of a kernel of ``shape``, as Keras counts them."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = _math.prod(shape[:-2])
    return shape[-2] * receptive, shape[-1] * receptive


class GlorotUniform(Initializer):
    """Uniform in [-limit, limit] with limit = sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=None):
        fan_in, fan_out = _fans(tuple(shape))
        limit = _math.sqrt(6.0 / max(1.0, fan_in + fan_out))
        if self.seed is None:
            return random.uniform(list(shape), -limit, limit, _dtype(dtype))
        return random.stateless_uniform(list(shape), [int(self.seed), 0], -limit, limit,
                                        _dtype(dtype))

    def get_config(self):
        return {"seed": self.seed}


class _Random(Initializer):
    """Draws from ``mt.random`` (stateful) without a seed, from the stateless op keyed by
    [seed, 0] with one (the same values at every call)."""

    def __init__(self, seed=None):
        self.seed = seed

    def _draw(self, stateful, stateless, shape, dtype, *params):
        if self.seed is None:
            return stateful(list(shape), *params, _dtype(dtype))
        return stateless(list(shape), [int(self.seed), 0], *params, _dtype(dtype))


class RandomUniform(_Random):
    """Uniform in [minval, maxval): [-0.05, 0.05) by default (Keras's 'uniform')."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape, dtype=None):
        return self._draw(random.uniform, random.stateless_uniform, shape, dtype,
                          self.minval, self.maxval)

    def get_config(self):
        return {"seed": self.seed, "minval": self.minval, "maxval": self.maxval}


class RandomNormal(_Random):
    """Normal of ``mean`` 0 and ``stddev`` 0.05 by default."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape, dtype=None):
        return self._draw(random.normal, random.stateless_normal, shape, dtype, self.mean,
                          self.stddev)

    def get_config(self):
        return {"seed": self.seed, "mean": self.mean, "stddev": self.stddev}


class TruncatedNormal(RandomNormal):
    """Normal of ``mean`` 0 and ``stddev`` 0.05 by default, redrawn beyond two stddevs."""

    def __call__(self, shape, dtype=None):
        return self._draw(random.truncated_normal, random.stateless_truncated_normal, shape,
                          dtype, self.mean, self.stddev)


_BY_NAME = {"glorot_uniform": GlorotUniform, "zeros": Zeros, "ones": Ones,
            "constant": Constant, "uniform": RandomUniform, "random_uniform": RandomUniform,
            "normal": RandomNormal, "random_normal": RandomNormal,
            "truncated_normal": TruncatedNormal}
_BY_NAME.update({cls.__name__: cls for cls in list(_BY_NAME.values())})


def get(identifier):
    """Returns the initializer ``identifier`` names (snake_case or the class name), the
    instance or callable itself; ValueError for anything else, with Keras's message."""
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if isinstance(identifier, Initializer) or (callable(identifier) and
                                               not isinstance(identifier, type)):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")
