"""Dropout (tf.keras.layers.Dropout): zeroes a random fraction ``rate`` of its inputs while
training and scales the rest by 1 / (1 - rate), so that sums keep their expected value.

    mt.keras.layers.Dropout(0.2)(x, training=True)   # about 20% zeros, the rest x / 0.8
    mt.keras.layers.Dropout(0.2)(x)                  # x: inactive outside training

It is active only in training: in ``fit``, and when called with ``training=True`` or
inside a call that is (call_context.py). The masks come from
mt.nn.experimental.stateless_dropout (Philox, the same bits on every device) keyed by
[seed, number of the call], so a layer of a given ``seed`` drops the same elements on every
run; without a seed it draws one from Python's ``random`` when made, which
``mt.keras.utils.set_random_seed`` seeds, as Keras's seed generator does.
"""

import numbers as _numbers
import random as _random

from ... import _minitensor as _mt
from ..._dropout import stateless_dropout
from .layer import Layer

__all__ = ["Dropout"]


class Dropout(Layer):
    """Dropout of ``rate`` (a number in [0, 1]); ``noise_shape`` (None entries taking the
    input's dimension) shares one mask element along dimensions of size 1, ``seed`` (an
    int) fixes the masks. Raises ValueError, with Keras's message, for another rate."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        if isinstance(rate, bool) or not isinstance(rate, _numbers.Real) or \
                not 0 <= rate <= 1:
            raise ValueError("Invalid value received for argument `rate`. Expected a float "
                             f"value between 0 and 1. Received: rate={rate}")
        super().__init__(**kwargs)
        self.rate = rate
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed
        self._seed = int(seed) if seed is not None else _random.randint(1, 10**9)
        self._calls = 0

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        if self.rate == 1:
            return _mt.zeros_like(inputs)
        _mt._mark_unreplayable(
            "[Dropout] a new mask at every call cannot replay; the function runs eagerly "
            "(a replay would drop the same elements at every step)")
        self._calls += 1
        return stateless_dropout(inputs, self.rate, [self._seed, self._calls],
                                 noise_shape=self.noise_shape)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed,
                "noise_shape": self.noise_shape}
