"""Conv2D (tf.keras.layers.Conv2D): activation(conv2d(inputs, kernel) + bias), a 2-D
convolution over images with a learned kernel of shape (kernel height, kernel width,
input channels, filters).

    conv = mt.keras.layers.Conv2D(32, 3, activation="relu", padding="same")
    conv(images)                          # (batch, 28, 28, 1) -> (batch, 28, 28, 32)

Keras 3's arguments, defaults, initialisers and weight names (conv2d/kernel, conv2d/bias),
so that its weights files load both ways. Only ``groups=1``: grouped convolutions raise
ValueError.
"""

from ... import _minitensor as _mt
from ... import nn
from ..._constant_op import convert_to_tensor
from .. import activations, initializers, regularizers
from .conv_arguments import (as_array_text, check_image_rank, output_length,
                             standardize_padding, standardize_tuple, too_small)
from .data_format import standardize_data_format
from .layer import Layer

__all__ = ["Conv2D", "Convolution2D"]


def _filters(filters):
    """Returns ``filters`` as an int; ValueError, with Keras's message, unless a positive
    whole number."""
    whole = isinstance(filters, (int, float)) and not isinstance(filters, bool) and \
        float(filters).is_integer()
    if not whole or filters <= 0:
        raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                         f"value. Received filters={filters}.")
    return int(filters)


class Conv2DBase(Layer):
    """What Conv2D and DepthwiseConv2D share: the window arguments (Keras 3's checks and
    messages), the data format's axes, the bias, the output shape and the input checks.
    A subclass says how many channels it outputs for a count of input channels."""

    def __init__(self, kernel_size, strides, padding, data_format, dilation_rate, activation,
                 use_bias, bias_initializer, bias_regularizer, **kwargs):
        kernel_size = standardize_tuple(kernel_size, 2, "kernel_size")
        strides = standardize_tuple(strides, 2, "strides")
        dilation_rate = standardize_tuple(dilation_rate, 2, "dilation_rate")
        padding = standardize_padding(padding)
        if max(strides) > 1 and max(dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > "
                             f"1`. Received: strides={strides} and dilation_rate={dilation_rate}")
        data_format = standardize_data_format(data_format)
        activation = activations.get(activation)
        super().__init__(**kwargs)
        self.kernel_size, self.strides = kernel_size, strides
        self.padding, self.data_format, self.dilation_rate = padding, data_format, dilation_rate
        self.activation = activation
        self.use_bias = use_bias
        self.bias_initializer = initializers.get(bias_initializer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel = None
        self.bias = None

    def _output_channels(self, channels):
        raise NotImplementedError

    @property
    def _channel_axis(self):
        return -1 if self.data_format == "channels_last" else 1

    def _spatial(self, shape):
        return tuple(shape[1:3]) if self.data_format == "channels_last" else tuple(shape[2:4])

    def _input_channels(self, input_shape):
        """The channel count of ``input_shape``; Keras's ValueError when it is unknown."""
        channels = input_shape[self._channel_axis]
        if channels is None:
            raise ValueError(
                "The channel dimension of the inputs should be defined. The input_shape "
                f"received is {tuple(input_shape)}, where axis {self._channel_axis} (0-based) "
                "is the channel dimension, which found to be `None`.")
        return channels

    def _finish(self, outputs):
        """activation(outputs + bias)."""
        if self.use_bias:
            if self.data_format == "channels_last":
                outputs = nn.bias_add(outputs, self.bias)
            else:  # BiasAdd is NHWC only here: broadcast over (batch, channels, h, w)
                outputs = outputs + _mt.reshape(convert_to_tensor(self.bias), [1, -1, 1, 1])
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        lengths = [output_length(n, k, s, self.padding, d) for n, k, s, d in
                   zip(self._spatial(input_shape), self.kernel_size, self.strides,
                       self.dilation_rate)]
        out = self._output_channels(input_shape[self._channel_axis])
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
            kernel = self.kernel_size + (shape[axis], self._output_channels(shape[axis]))
            raise ValueError(
                "Computed output size would be zero or negative. Received `inputs "
                f"shape={shape}`, `kernel shape={kernel}`, `dilation_rate="
                f"{as_array_text(self.dilation_rate)}`, `strides={self.strides}`, "
                f"`padding={self.padding}`.")

    def get_config(self):
        return {**super().get_config(), "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": getattr(self.activation, "__name__", "linear"),
                "use_bias": self.use_bias}


class Conv2D(Conv2DBase):
    """A 2-D convolution of ``filters`` outputs with a ``kernel_size`` window (an int or a
    pair), moved by ``strides``, dilated by ``dilation_rate`` (not both above 1), with
    ``padding`` 'valid' (none) or 'same' (output size ceil(input / stride)), on inputs
    (batch, height, width, channels) or, with ``data_format='channels_first'``, (batch,
    channels, height, width). Its kernel and bias (filters) are made on the first call.
    Raises ValueError, with Keras's messages, for bad arguments, inputs of another rank or
    channel count, and windows larger than the (padded) input."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1), groups=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        filters = _filters(filters)
        if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
            raise ValueError("The number of groups must be a positive integer. Received: "
                             f"groups={groups}.")
        if filters % groups:
            raise ValueError("The number of filters must be evenly divisible by the number of "
                             f"groups. Received: groups={groups}, filters={filters}.")
        if groups != 1:
            raise ValueError(f"Conv2D(groups={groups}): grouped convolutions are not supported "
                             "by minitensor; groups must be 1")
        super().__init__(kernel_size, strides, padding, data_format, dilation_rate, activation,
                         use_bias, bias_initializer, bias_regularizer, **kwargs)
        self.filters = filters
        self.groups = groups
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)

    def _output_channels(self, channels):
        return self.filters

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight("kernel", self.kernel_size + (channels, self.filters),
                                      self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.filters,), self.bias_initializer,
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        return self._finish(nn.conv2d(
            inputs, self.kernel, self.strides, self.padding.upper(),
            data_format="NHWC" if self.data_format == "channels_last" else "NCHW",
            dilations=self.dilation_rate))

    def get_config(self):
        return {**super().get_config(), "filters": self.filters, "groups": self.groups}


Convolution2D = Conv2D
