"""tf.keras.activations: the element-wise functions a layer may end with, and ``get``,
which turns a name into one.

    mt.keras.activations.get("relu")(x)
    mt.keras.activations.relu(x, negative_slope=0.1, max_value=6.0)
"""

from .. import _minitensor as _mt
from .. import nn as _nn
from .._converted_ops import cast as _cast
from .._index_ops import where as _where
from .._constant_op import convert_to_tensor as _convert

__all__ = ["elu", "exponential", "gelu", "get", "leaky_relu", "linear", "log_softmax", "relu",
           "relu6", "sigmoid", "silu", "softmax", "softplus", "swish", "tanh"]


def linear(x):
    """Returns ``x`` unchanged."""
    return x


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """Returns x where x > threshold, else 0; above ``max_value`` (if given) max_value;
    below ``threshold``, ``negative_slope * (x - threshold)`` is added, as Keras 3's."""
    x = _convert(x)
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return _nn.relu(x)
    if threshold != 0.0:
        outputs = x * _cast(_mt.greater(x, threshold), x.dtype)
    else:
        outputs = _nn.relu(x)
    if max_value is not None:
        outputs = _mt.minimum(outputs, max_value)
    if negative_slope != 0.0:
        outputs = outputs - negative_slope * _nn.relu(threshold - x)
    return outputs


def relu6(x):
    """Returns min(max(x, 0), 6)."""
    return _nn.relu6(x)


def leaky_relu(x, negative_slope=0.2):
    """Returns x where x > 0, else negative_slope * x."""
    return _nn.leaky_relu(x, alpha=negative_slope)


def elu(x, alpha=1.0):
    """Returns x where x > 0, else alpha * (exp(x) - 1)."""
    x = _convert(x)
    if alpha == 1.0:
        return _nn.elu(x)
    return _where(_mt.greater(x, 0.0), x, alpha * _nn.elu(_mt.minimum(x, 0.0)))


def gelu(x, approximate=False):
    """Returns the Gaussian error linear unit (exact, through erf, unless ``approximate``)."""
    return _nn.gelu(x, approximate=approximate)


def silu(x):
    """Returns x * sigmoid(x)."""
    return _nn.silu(x)


swish = silu


def softplus(x):
    """Returns log(1 + exp(x))."""
    return _nn.softplus(x)


def exponential(x):
    """Returns exp(x)."""
    return _mt.exp(x)


def sigmoid(x):
    """Returns 1 / (1 + exp(-x))."""
    return _mt.sigmoid(x)


def tanh(x):
    """Returns the hyperbolic tangent of ``x``."""
    return _mt.tanh(x)


def softmax(x, axis=-1):
    """Returns softmax over ``axis`` (the last by default)."""
    return _nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    """Returns log(softmax) over ``axis`` (the last by default)."""
    return _nn.log_softmax(x, axis=axis)


_BY_NAME = {f.__name__: f for f in [
    elu, exponential, gelu, leaky_relu, linear, log_softmax, relu, relu6, sigmoid, silu,
    softmax, softplus, tanh]}
_BY_NAME["swish"] = silu


def get(identifier):
    """Returns the activation ``identifier`` names (None is linear) or the callable itself;
    ValueError for anything else, with Keras's message."""
    if identifier is None:
        return linear
    if isinstance(identifier, str) and identifier in _BY_NAME:
        return _BY_NAME[identifier]
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret activation function identifier: {identifier}")
