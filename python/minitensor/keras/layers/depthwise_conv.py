"""DepthwiseConv2D (tf.keras.layers.DepthwiseConv2D): activation(depthwise_conv2d(inputs,
kernel) + bias), each input channel convolved with its own ``depth_multiplier`` filters
(the kernel is (kernel height, kernel width, channels, depth_multiplier); outputs
channels * depth_multiplier), as in MobileNet's blocks.

    mt.keras.layers.DepthwiseConv2D(3, padding="same")   # (b, 28, 28, 32) -> (b, 28, 28, 32)

Keras 3's arguments, defaults, initialisers and weight names (depthwise_conv2d/kernel,
depthwise_conv2d/bias). It runs mt.nn.depthwise_conv2d, a composite (_depthwise_conv.py).
"""

from ... import _minitensor as _mt
from ... import nn
from ..._constant_op import convert_to_tensor
from .. import activations, initializers, regularizers
from .conv_arguments import (as_array_text, check_image_rank, output_length,
                             standardize_padding, standardize_tuple, too_small)
from .data_format import standardize_data_format
from .layer import Layer

__all__ = ["DepthwiseConv2D"]


class DepthwiseConv2D(Layer):
    """A depthwise 2-D convolution with a ``kernel_size`` window (an int or a pair) and
    ``depth_multiplier`` filters per input channel, moved by ``strides``, dilated by
    ``dilation_rate`` (not both above 1), with ``padding`` 'valid' or 'same', on inputs
    (batch, height, width, channels) or, with ``data_format='channels_first'``, (batch,
    channels, height, width). Raises ValueError, with Keras's messages, for bad arguments
    and windows larger than the (padded) input."""

    def __init__(self, kernel_size, strides=(1, 1), padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, **kwargs):
        whole = isinstance(depth_multiplier, int) and not isinstance(depth_multiplier, bool)
        if not whole or depth_multiplier <= 0:
            raise ValueError("Invalid value for argument `depth_multiplier`. Expected a "
                             "strictly positive value. Received "
                             f"depth_multiplier={depth_multiplier}.")
        kernel_size = standardize_tuple(kernel_size, 2, "kernel_size")
        strides = standardize_tuple(strides, 2, "strides")
        dilation_rate = standardize_tuple(dilation_rate, 2, "dilation_rate")
        padding = standardize_padding(padding)
        if max(strides) > 1 and max(dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                             f"1`. Received: strides={strides} and dilation_rate={dilation_rate}")
        super().__init__(**kwargs)
        self.depth_multiplier, self.kernel_size, self.strides = \
            depth_multiplier, kernel_size, strides
        self.padding, self.dilation_rate = padding, dilation_rate
        self.data_format = standardize_data_format(data_format)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel = None
        self.bias = None

    @property
    def _channel_axis(self):
        return -1 if self.data_format == "channels_last" else 1

    def _spatial(self, shape):
        return tuple(shape[1:3]) if self.data_format == "channels_last" else tuple(shape[2:4])

    def build(self, input_shape):
        channels = input_shape[self._channel_axis]
        if channels is None:
            raise ValueError(
                "The channel dimension of the inputs should be defined. The input_shape "
                f"received is {tuple(input_shape)}, where axis {self._channel_axis} (0-based) "
                "is the channel dimension, which found to be `None`.")
        self.kernel = self.add_weight(
            "kernel", self.kernel_size + (channels, self.depth_multiplier),
            self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (channels * self.depth_multiplier,),
                                        self.bias_initializer, regularizer=self.bias_regularizer)

    def call(self, inputs):
        channels_last = self.data_format == "channels_last"
        strides = [1, *self.strides, 1] if channels_last else [1, 1, *self.strides]
        outputs = nn.depthwise_conv2d(inputs, self.kernel, strides, self.padding.upper(),
                                      data_format="NHWC" if channels_last else "NCHW",
                                      dilations=list(self.dilation_rate))
        if self.use_bias:
            if channels_last:
                outputs = nn.bias_add(outputs, self.bias)
            else:
                outputs = outputs + _mt.reshape(convert_to_tensor(self.bias), [1, -1, 1, 1])
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        lengths = [output_length(n, k, s, self.padding, d) for n, k, s, d in
                   zip(self._spatial(input_shape), self.kernel_size, self.strides,
                       self.dilation_rate)]
        channels = input_shape[self._channel_axis]
        out = None if channels is None else channels * self.depth_multiplier
        if self.data_format == "channels_last":
            return (input_shape[0], *lengths, out)
        return (input_shape[0], out, *lengths)

    def _check_input(self, shape):
        check_image_rank(self, shape, minimum=True)
        axis = self._channel_axis
        if self.kernel is not None and shape[axis] != self.kernel.shape[2]:
            raise ValueError(
                f"Input 0 with name 'None' of layer '{self.name}' is incompatible with the "
                f"layer: expected axis {axis} of input shape to have value "
                f"{self.kernel.shape[2]}, but received input with shape {shape}")
        if too_small(self._spatial(shape), self.kernel_size, self.strides, self.padding,
                     self.dilation_rate):
            kernel = self.kernel_size + (shape[axis], shape[axis] * self.depth_multiplier)
            raise ValueError(
                "Computed output size would be zero or negative. Received `inputs "
                f"shape={shape}`, `kernel shape={kernel}`, `dilation_rate="
                f"{as_array_text(self.dilation_rate)}`, `strides={self.strides}`, "
                f"`padding={self.padding}`.")

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier,
                "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate,
                "activation": getattr(self.activation, "__name__", "linear"),
                "use_bias": self.use_bias}
