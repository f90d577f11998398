"""tf.keras.activations: the element-wise functions a layer may end with, and ``get``,
which turns a name into one.

    mt.keras.activations.get("relu")(x)
"""

__all__ = ["get", "linear", "relu", "sigmoid", "softmax", "tanh"]


def linear(x):
    """Returns ``x`` unchanged."""
    return x


def relu(x):
    """Returns max(x, 0)."""
    from .. import nn
    return nn.relu(x)


def sigmoid(x):
    """Returns 1 / (1 + exp(-x))."""
    from .. import sigmoid as _sigmoid
    return _sigmoid(x)


def tanh(x):
    """Returns the hyperbolic tangent of ``x``."""
    from .. import tanh as _tanh
    return _tanh(x)


def softmax(x, axis=-1):
    """Returns softmax over the last axis (the only one minitensor supports)."""
    from .. import nn
    return nn.softmax(x, axis=axis)


_BY_NAME = {"linear": linear, "relu": relu, "sigmoid": sigmoid, "softmax": softmax,
            "tanh": tanh}


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
