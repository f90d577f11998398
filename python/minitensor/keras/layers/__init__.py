"""tf.keras.layers: the Layer base class, Input, and the layers minitensor has, each in a
file named for its kind (docs/keras.md lists them)."""

from .activation_layers import Activation, ReLU, Softmax
from .batch_normalization import BatchNormalization
from .convolutional import Conv2D, Convolution2D
from .depthwise_conv import DepthwiseConv2D
from .dense import Dense
from .dropout import Dropout
from .einsum_dense import EinsumDense
from .embedding import Embedding
from .input_layer import Input, InputLayer
from .layer import Layer
from .layer_normalization import LayerNormalization
from .merging import Add, Concatenate
from .multi_head_attention import MultiHeadAttention
from .pooling import (AveragePooling2D, AvgPool2D, GlobalAveragePooling2D, GlobalAvgPool2D,
                      GlobalMaxPool2D, GlobalMaxPooling2D, MaxPool2D, MaxPooling2D)
from .reshaping import Flatten, Reshape

__all__ = ["Activation", "Add", "AveragePooling2D", "AvgPool2D", "BatchNormalization",
           "Concatenate", "Conv2D", "Convolution2D", "Dense", "DepthwiseConv2D", "Dropout", "EinsumDense", "Embedding", "Flatten",
           "GlobalAveragePooling2D", "GlobalAvgPool2D", "GlobalMaxPool2D",
           "GlobalMaxPooling2D", "Input", "InputLayer", "Layer", "LayerNormalization",
           "MaxPool2D", "MaxPooling2D", "MultiHeadAttention", "ReLU", "Reshape", "Softmax"]
