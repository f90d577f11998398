"""DepthwiseConv2D (tf.keras.layers.DepthwiseConv2D): activation(depthwise_conv2d(inputs,
kernel) + bias), each input channel convolved with its own ``depth_multiplier`` filters
(the kernel is (kernel height, kernel width, channels, depth_multiplier); outputs
channels * depth_multiplier), as in MobileNet's blocks.

    mt.keras.layers.DepthwiseConv2D(3, padding="same")   # (b, 28, 28, 32) -> (b, 28, 28, 32)

Keras 3's arguments, defaults, initialisers and weight names (depthwise_conv2d/kernel,
depthwise_conv2d/bias). It runs mt.nn.depthwise_conv2d, a composite (_depthwise_conv.py).
"""

from ... import nn
from .. import initializers, regularizers
from .convolutional import Conv2DBase

__all__ = ["DepthwiseConv2D"]


class DepthwiseConv2D(Conv2DBase):
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
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, **kwargs)
        self.depth_multiplier = depth_multiplier
        self.depthwise_initializer = initializers.get(depthwise_initializer)
        self.depthwise_regularizer = regularizers.get(depthwise_regularizer)

    def _output_channels(self, channels):
        return None if channels is None else channels * self.depth_multiplier

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight(
            "kernel", self.kernel_size + (channels, self.depth_multiplier),
            self.depthwise_initializer, regularizer=self.depthwise_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (channels * self.depth_multiplier,),
                                        self.bias_initializer, regularizer=self.bias_regularizer)

    def call(self, inputs):
        channels_last = self.data_format == "channels_last"
        strides = [1, *self.strides, 1] if channels_last else [1, 1, *self.strides]
        return self._finish(nn.depthwise_conv2d(
            inputs, self.kernel, strides, self.padding.upper(),
            data_format="NHWC" if channels_last else "NCHW", dilations=list(self.dilation_rate)))

    def get_config(self):
        return {**super().get_config(), "depth_multiplier": self.depth_multiplier}
