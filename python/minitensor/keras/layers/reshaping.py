"""The layers that only change a tensor's shape (tf.keras.layers.Flatten and Reshape).

    mt.keras.layers.Flatten()(x)             # (batch, 28, 28) -> (batch, 784)
    mt.keras.layers.Reshape((-1, 2))(x)      # (batch, 8) -> (batch, 4, 2)
"""

import math as _math

from ... import _minitensor as _mt
from .data_format import standardize_data_format
from .layer import Layer

__all__ = ["Flatten", "Reshape"]


class Flatten(Layer):
    """Reshapes each example to one dimension: (batch, ...) -> (batch, product of the
    rest); a rank-1 input becomes (batch, 1). ``data_format='channels_first'`` moves the
    channels axis (1) last before flattening, so that the order matches channels_last."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)

    def call(self, inputs):
        rank = len(inputs.shape)
        if self.data_format == "channels_first" and rank > 2:
            inputs = _mt.transpose(inputs, [0, *range(2, rank), 1])
        return _mt.reshape(inputs, [inputs.shape[0], _math.prod(inputs.shape[1:])])

    def compute_output_shape(self, input_shape):
        rest = input_shape[1:]
        size = None if any(d is None for d in rest) else _math.prod(rest)
        return (input_shape[0], size)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format}


class Reshape(Layer):
    """Reshapes each example to ``target_shape`` (a tuple of ints, at most one of them -1,
    which is inferred); the batch dimension is kept. Raises ValueError, with Keras's
    messages, for two -1 and for a target of another size than the input's examples."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        target_shape = tuple(target_shape)
        if target_shape.count(-1) > 1:
            raise ValueError("There must be at most one unknown dimension (-1) in "
                             f"`target_shape`. Received: target_shape={target_shape}.")
        self.target_shape = target_shape

    def call(self, inputs):
        return _mt.reshape(inputs, [-1, *self._resolved(tuple(inputs.shape[1:]))])

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self._resolved(tuple(input_shape[1:]))

    def _resolved(self, example_shape):
        """Returns the target shape with its -1 inferred from ``example_shape`` (kept
        -1, as None, when that shape has an unknown dimension)."""
        known = _math.prod(d for d in self.target_shape if d != -1)
        if any(d is None for d in example_shape):
            return tuple(None if d == -1 else d for d in self.target_shape)
        size = _math.prod(example_shape)
        if (-1 in self.target_shape and (known == 0 or size % known)) or \
                (-1 not in self.target_shape and size != known):
            raise ValueError("The total size of the tensor must be unchanged. Received: "
                             f"input_shape={example_shape}, target_shape={self.target_shape}")
        return tuple(size // known if d == -1 else d for d in self.target_shape)

    def get_config(self):
        return {**super().get_config(), "target_shape": self.target_shape}
