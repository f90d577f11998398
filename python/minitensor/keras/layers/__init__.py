"""tf.keras.layers: Input, Dense and the Layer base class."""

from .dense import Dense
from .input_layer import Input, InputLayer
from .layer import Layer

__all__ = ["Dense", "Input", "InputLayer", "Layer"]
