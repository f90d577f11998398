"""Pooling over the height and width of an image batch: windowed (tf.keras.layers.
MaxPooling2D, AveragePooling2D) and global (GlobalMaxPooling2D, GlobalAveragePooling2D).

    mt.keras.layers.MaxPooling2D()(images)           # (batch, 8, 8, c) -> (batch, 4, 4, c)
    mt.keras.layers.AveragePooling2D(3, 1, "same")(images)
    mt.keras.layers.GlobalAveragePooling2D()(images)  # (batch, h, w, c) -> (batch, c)
"""

from ... import _minitensor as _mt
from ... import nn
from .conv_arguments import (as_array_text, check_image_rank, output_length,
                             standardize_tuple, too_small)
from .data_format import standardize_data_format
from .layer import Layer

__all__ = ["AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D", "GlobalAvgPool2D",
           "GlobalMaxPool2D", "GlobalMaxPooling2D", "MaxPool2D", "MaxPooling2D"]


class _Pooling2D(Layer):
    """A window of ``pool_size`` (an int or a pair) moved by ``strides`` (``pool_size``
    when None) over each channel, with ``padding`` 'valid' or 'same' (padding is never
    part of a window's result). Raises ValueError, with Keras's messages, for bad
    arguments, inputs of another rank than 4 and windows larger than the input."""

    _op = None  # nn.max_pool2d or nn.avg_pool2d

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        pool_size = standardize_tuple(pool_size, 2, "pool_size")
        # Keras allows strides of 0 here and fails when called; refused at once instead.
        strides = pool_size if strides is None else standardize_tuple(strides, 2, "strides")
        standard = padding.lower() if isinstance(padding, str) else padding
        if standard not in ("valid", "same"):
            raise ValueError("Argument `padding` must be either 'valid' or 'same'. Received: "
                             f"padding={padding}")
        data_format = standardize_data_format(data_format)
        super().__init__(name=name, **kwargs)
        self.pool_size, self.strides, self.padding = pool_size, strides, standard
        self.data_format = data_format

    def _spatial(self, shape):
        return tuple(shape[1:3]) if self.data_format == "channels_last" else tuple(shape[2:4])

    def call(self, inputs):
        return type(self)._op(inputs, self.pool_size, self.strides, self.padding.upper(),
                              "NHWC" if self.data_format == "channels_last" else "NCHW")

    def compute_output_shape(self, input_shape):
        lengths = [output_length(n, k, s, self.padding) for n, k, s in
                   zip(self._spatial(input_shape), self.pool_size, self.strides)]
        if self.data_format == "channels_last":
            return (input_shape[0], *lengths, input_shape[3])
        return (input_shape[0], input_shape[1], *lengths)

    def _check_input(self, shape):
        check_image_rank(self, shape)
        if too_small(self._spatial(shape), self.pool_size, self.strides, self.padding):
            raise ValueError(
                "Computed output size would be zero or negative. Received: `inputs.shape="
                f"{as_array_text(shape)}`, `pool_size={as_array_text(self.pool_size)}`, "
                f"`strides={self.strides}`, `padding={self.padding}`.")

    def get_config(self):
        return {**super().get_config(), "pool_size": self.pool_size, "padding": self.padding,
                "strides": self.strides, "data_format": self.data_format}


class MaxPooling2D(_Pooling2D):
    """The maximum of each window (MaxPool); by default 2x2 windows 2 apart, halving the
    height and width."""

    _op = staticmethod(nn.max_pool2d)

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None,
                 name=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class AveragePooling2D(_Pooling2D):
    """The mean of each window (AvgPool), over the input elements it covers (with 'same',
    a window at the edge divides by fewer). ``pool_size`` has no default, as in Keras 3."""

    _op = staticmethod(nn.avg_pool2d)

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, name=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, name, **kwargs)


class _GlobalPooling2D(Layer):
    """Reduces a rank-4 input over its spatial axes: 1 and 2 for ``data_format``
    'channels_last' (the default), 2 and 3 for 'channels_first'; ``keepdims`` keeps them
    with size 1. Raises ValueError, with Keras's messages, for another rank or format."""

    _reduce = None  # _mt.reduce_max or _mt.reduce_mean

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.keepdims = keepdims

    def _spatial_axes(self):
        return [1, 2] if self.data_format == "channels_last" else [2, 3]

    def _check_input(self, shape):
        check_image_rank(self, shape)

    def call(self, inputs):
        return type(self)._reduce(inputs, self._spatial_axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        axes = self._spatial_axes()
        if self.keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(input_shape))
        return tuple(d for i, d in enumerate(input_shape) if i not in axes)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}


class GlobalAveragePooling2D(_GlobalPooling2D):
    """The mean of each channel over the height and width."""

    _reduce = staticmethod(_mt.reduce_mean)


class GlobalMaxPooling2D(_GlobalPooling2D):
    """The maximum of each channel over the height and width."""

    _reduce = staticmethod(_mt.reduce_max)


# Keras's other names for the same classes.
MaxPool2D, AvgPool2D = MaxPooling2D, AveragePooling2D
GlobalMaxPool2D, GlobalAvgPool2D = GlobalMaxPooling2D, GlobalAveragePooling2D
