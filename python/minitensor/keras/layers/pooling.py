"""Global pooling (tf.keras.layers.GlobalAveragePooling2D): the mean of each channel over
the height and width of an image batch.

    mt.keras.layers.GlobalAveragePooling2D()(images)    # (batch, h, w, c) -> (batch, c)
"""

from ... import _minitensor as _mt
from .data_format import standardize_data_format
from .layer import Layer

__all__ = ["GlobalAveragePooling2D"]


class GlobalAveragePooling2D(Layer):
    """Averages a rank-4 input over its spatial axes: 1 and 2 for ``data_format``
    'channels_last' (the default), 2 and 3 for 'channels_first'; ``keepdims`` keeps them
    with size 1. Raises ValueError, with Keras's messages, for another rank or format."""

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        super().__init__(**kwargs)
        self.data_format = standardize_data_format(data_format)
        self.keepdims = keepdims

    def _spatial_axes(self):
        return [1, 2] if self.data_format == "channels_last" else [2, 3]

    def _check_input(self, shape):
        if isinstance(shape, list) or len(shape) != 4:
            rank = len(shape[0]) if isinstance(shape, list) else len(shape)
            raise ValueError(f"Input 0 with name 'None' of layer '{self.name}' is incompatible "
                             f"with the layer: expected ndim=4, found ndim={rank}. Full shape "
                             f"received: {shape}")

    def call(self, inputs):
        return _mt.reduce_mean(inputs, self._spatial_axes(), keepdims=self.keepdims)

    def compute_output_shape(self, input_shape):
        axes = self._spatial_axes()
        if self.keepdims:
            return tuple(1 if i in axes else d for i, d in enumerate(input_shape))
        return tuple(d for i, d in enumerate(input_shape) if i not in axes)

    def get_config(self):
        return {**super().get_config(), "data_format": self.data_format,
                "keepdims": self.keepdims}
