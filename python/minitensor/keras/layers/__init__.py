"""tf.keras.layers: the Layer base class, Input, and the layers minitensor has, each in a
file named for its kind (docs/keras.md lists them)."""

from .activation_layers import Activation, ReLU, Softmax
from .dense import Dense
from .dropout import Dropout
from .embedding import Embedding
from .input_layer import Input, InputLayer
from .layer import Layer
from .layer_normalization import LayerNormalization
from .merging import Add, Concatenate
from .pooling import GlobalAveragePooling2D
from .reshaping import Flatten, Reshape

__all__ = ["Activation", "Add", "Concatenate", "Dense", "Dropout", "Embedding", "Flatten",
           "GlobalAveragePooling2D", "Input", "InputLayer", "Layer", "LayerNormalization",
           "ReLU", "Reshape", "Softmax"]
