"""tf.keras.layers: the Layer base class, Input, and the layers minitensor has, each in a
file named for its kind (docs/keras.md lists them)."""

from .activation_layers import Activation, ReLU, Softmax
from .dense import Dense
from .dropout import Dropout
from .input_layer import Input, InputLayer
from .layer import Layer
from .reshaping import Flatten, Reshape

__all__ = ["Activation", "Dense", "Dropout", "Flatten", "Input", "InputLayer", "Layer", "ReLU",
           "Reshape", "Softmax"]
