"""Embedding (tf.keras.layers.Embedding): turns integer ids into learned vectors, the rows
of an (input_dim, output_dim) table.

    layer = mt.keras.layers.Embedding(input_dim=1000, output_dim=64)
    layer(np.array([[4, 20, 7]]))          # shape (1, 3, 64)
"""

import numpy as _np

from ... import _minitensor as _mt
from ..._converted_ops import cast
from ..._dtypes import as_dtype
from ...nn import embedding_lookup
from .. import initializers, regularizers
from .layer import Layer
from ..._constant_op import convert_to_tensor

__all__ = ["Embedding"]

_INDEX_DTYPES = (_mt.DType.int32, _mt.DType.int64)


def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, _np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer. Received: {name}={value} "
                         f"(of type {type(value).__name__}).")
    return int(value)


class Embedding(Layer):
    """A table of ``input_dim`` rows of ``output_dim`` values, filled by
    ``embeddings_initializer`` (Keras's 'uniform': RandomUniform(-0.05, 0.05)); calling it
    on ids of shape S gives S + (output_dim,). Ids of another type than int32 or int64 are
    cast to int32, as Keras's; an id outside [0, input_dim) raises InvalidArgumentError.
    ``mask_zero`` needs masks, which minitensor's Keras does not have (ValueError)."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, mask_zero=False, **kwargs):
        input_dim = _positive(input_dim, "input_dim")
        output_dim = _positive(output_dim, "output_dim")
        if mask_zero:
            raise ValueError("Embedding(mask_zero=True) needs masks, which minitensor's "
                             "Keras does not support")
        super().__init__(**kwargs)
        self.input_dim, self.output_dim = input_dim, output_dim
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.mask_zero = mask_zero
        self.embeddings = None

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", (self.input_dim, self.output_dim),
                                          self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer)

    def _converted(self, inputs):
        """Keeps integer ids as they are (the base class would cast them to float32)."""
        ids = convert_to_tensor(_np.asarray(inputs) if isinstance(inputs, list) else inputs)
        return ids if ids.dtype in _INDEX_DTYPES else cast(ids, _mt.DType.int32)

    _autocast_variables = False  # the rows it reads are cast, not the whole table

    def call(self, inputs):
        outputs = embedding_lookup(self.embeddings, inputs)
        if outputs.dtype.name != self.compute_dtype:
            outputs = cast(outputs, as_dtype(self.compute_dtype))
        return outputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.output_dim,)

    def get_config(self):
        return {**super().get_config(), "input_dim": self.input_dim,
                "output_dim": self.output_dim, "mask_zero": self.mask_zero}
