"""The layers that apply an activation (tf.keras.layers.Activation, ReLU and Softmax): no
weights, the output of the input's shape.

    mt.keras.layers.Activation("gelu")(x)
    mt.keras.layers.ReLU(max_value=6.0)(x)
    mt.keras.layers.Softmax(axis=-1)(logits)
"""

from ... import _minitensor as _mt
from ..._composite_reductions import reduce_logsumexp
from ..._converted_ops import cast
from .. import activations
from .layer import Layer

__all__ = ["Activation", "ReLU", "Softmax"]


class _Elementwise(Layer):
    """A layer whose output has its input's shape."""

    def compute_output_shape(self, input_shape):
        return input_shape


class Activation(_Elementwise):
    """Applies ``activation`` (a name of mt.keras.activations, a callable, or None for
    linear); ValueError, with Keras's message, for a name it does not know."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def get_config(self):
        return {**super().get_config(),
                "activation": getattr(self.activation, "__name__", self.activation)}


def _non_negative(value, name, none_allowed):
    if (value is None and not none_allowed) or (value is not None and value < 0):
        raise ValueError(f"{name} of a ReLU layer cannot be "
                         f"{'a' if none_allowed else 'None or a'} negative value. "
                         f"Received: {name}={value}")


class ReLU(_Elementwise):
    """max(x, 0), clipped at ``max_value`` when given; below ``threshold`` (default 0) it
    is ``negative_slope * (x - threshold)`` (mt.keras.activations.relu). Raises
    ValueError, with Keras's messages, for a negative or missing argument."""

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        _non_negative(max_value, "max_value", none_allowed=True)
        _non_negative(negative_slope, "negative_slope", none_allowed=False)
        _non_negative(threshold, "threshold", none_allowed=False)
        super().__init__(**kwargs)
        self.max_value = max_value
        self.negative_slope = negative_slope
        self.threshold = threshold

    def call(self, inputs):
        return activations.relu(inputs, negative_slope=self.negative_slope,
                                max_value=self.max_value, threshold=self.threshold)

    def get_config(self):
        return {**super().get_config(), "max_value": self.max_value,
                "negative_slope": self.negative_slope, "threshold": self.threshold}


class Softmax(_Elementwise):
    """Softmax over ``axis`` (an int, or a tuple of axes normalised together). A ``mask``
    (1 to keep, 0 to leave out) gives the left-out elements probability 0, as Keras's."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs, mask=None):
        if mask is not None:
            large = -3e4 if inputs.dtype == _mt.DType.float16 else -1e9
            inputs = inputs + (1.0 - cast(mask, inputs.dtype)) * large
        if isinstance(self.axis, (tuple, list)) and len(self.axis) > 1:
            axes = list(self.axis)
            outputs = _mt.exp(inputs - reduce_logsumexp(inputs, axes, keepdims=True))
        else:
            axis = self.axis[0] if isinstance(self.axis, (tuple, list)) else self.axis
            outputs = activations.softmax(inputs, axis=axis)
        if mask is not None:
            outputs = outputs * cast(mask, outputs.dtype)
        return outputs

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
