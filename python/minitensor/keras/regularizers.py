"""tf.keras.regularizers: penalties on a layer's weights that ``fit`` adds to the loss.

    dense = mt.keras.layers.Dense(10, kernel_regularizer=mt.keras.regularizers.L2(1e-4))
    model.losses        # [1e-4 * sum(kernel ** 2)], computed from the current weights

A regularizer is a callable of a weight returning a scalar tensor; a layer keeps the
regularizers of its weights and ``layer.losses`` computes them at each access, as Keras 3
does, so the penalty read inside a GradientTape is differentiable.
"""

import math as _math

from .. import _minitensor as _mt

__all__ = ["L1", "L1L2", "L2", "Regularizer", "get", "l1", "l1_l2", "l2"]


def _checked(value, name):
    """Returns ``value`` as a float; ValueError, with Keras's message, unless it is a
    finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or \
            not _math.isfinite(value):
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative "
                         f"float.Received: {name}={value}")
    return float(value)


class Regularizer:
    """A penalty on a weight: ``regularizer(weight)`` returns a scalar tensor."""

    def __call__(self, x):
        return _mt.fill([], 0.0, x.dtype)

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x ** 2)``; both factors 0 by default."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _checked(0.0 if l1 is None else l1, "l1")
        self.l2 = _checked(0.0 if l2 is None else l2, "l2")

    def __call__(self, x):
        penalty = super().__call__(x)
        if self.l1:
            penalty = penalty + self.l1 * _mt.reduce_sum(_mt.abs(x))
        if self.l2:
            penalty = penalty + self.l2 * _mt.reduce_sum(_mt.square(x))
        return penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)``, with l1 = 0.01 by default."""

    def __init__(self, l1=0.01):
        self.l1 = _checked(0.01 if l1 is None else l1, "l1")

    def __call__(self, x):
        return self.l1 * _mt.reduce_sum(_mt.abs(x))

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x ** 2)``, with l2 = 0.01 by default."""

    def __init__(self, l2=0.01):
        self.l2 = _checked(0.01 if l2 is None else l2, "l2")

    def __call__(self, x):
        return self.l2 * _mt.reduce_sum(_mt.square(x))

    def get_config(self):
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2  # Keras's lower-case aliases

_BY_NAME = {"l1": L1, "l2": L2, "L1": L1, "L2": L2, "L1L2": L1L2}


def get(identifier):
    """Returns the regularizer ``identifier`` names ('l1', 'l2', 'L1L2', ...), the
    regularizer or callable itself, or None for None; ValueError for anything else, with
    Keras's message."""
    if identifier is None:
        return None
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]()
    if callable(identifier) and not isinstance(identifier, type):
        return identifier
    raise ValueError(f"Could not interpret regularizer identifier: {identifier}")
