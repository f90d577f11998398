"""MultiHeadAttention (tf.keras.layers.MultiHeadAttention): scaled dot-product attention of
``num_heads`` heads, each projecting the query and key to ``key_dim`` and the value to
``value_dim``, then one projection of the heads back to the query's width.

    mha = mt.keras.layers.MultiHeadAttention(num_heads=2, key_dim=16)
    y = mha(x, x, use_causal_mask=True)                      # self-attention, (B, T, D)
    y, scores = mha(q, v, return_attention_scores=True)      # scores: (B, heads, T, S)

Its weights are those of four EinsumDense sublayers, ``query_dense``, ``key_dense``,
``value_dense`` and ``output_dense`` (kernel, bias each, in that order), which is also how
Keras 3's weights files name them, so weights cross with TensorFlow both ways. The
attention runs over axis 1 of (batch, sequence, features) inputs, Keras's default.

Without dropout, returned scores or masks other than the causal one, the attention is one
fused op (mt.nn.dot_product_attention, the DotProductAttention row), as Keras takes its fused
path there. A query row whose values are all masked follows Keras on both of its other
paths: zeros with dropout or returned scores (the Softmax layer's mask), an even average
otherwise (Keras's fused dot_product_attention).
"""

import math as _math

from ... import _minitensor as _mt
from ..._converted_ops import cast
from ..._attention import dot_product_attention
from ..._einsum import einsum
from .. import activations
from ..keras_tensor import is_symbolic
from .activation_layers import Softmax
from .dropout import Dropout
from .einsum_dense import EinsumDense
from .layer import Layer

__all__ = ["MultiHeadAttention"]


def _causal_mask(query_length, value_length):
    """(1, T, S): 1 where query position i may attend value position j, that is j <= i."""
    rows = _mt.reshape(_mt.range(0, query_length, 1, _mt.DType.int32), [query_length, 1])
    cols = _mt.reshape(_mt.range(0, value_length, 1, _mt.DType.int32), [1, value_length])
    return cast(_mt.reshape(_mt.greater_equal(rows, cols), [1, query_length, value_length]),
                _mt.DType.float32)


class MultiHeadAttention(Layer):
    """Multi-head attention as Keras 3's, for inputs of rank 3 (batch, sequence, features).
    Raises ValueError, with Keras's messages, for a num_heads or key_dim below 1, and for
    inputs of another rank; ``attention_axes`` other than the sequence's, ``use_gate`` and
    ``sliding_window`` are not supported (ValueError)."""

    _sublayer_names = ("query_dense", "key_dense", "value_dense", "output_dense")

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 seed=None, use_gate=False, sliding_window=None, **kwargs):
        for name, value in (("num_heads", num_heads), ("key_dim", key_dim)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Received an invalid value for `{name}`, expected a positive "
                                 f"integer. Received: {name}={value}")
        if attention_axes not in (None, 1, (1,), [1], -2, (-2,), [-2]):
            raise ValueError("MultiHeadAttention attends over the sequence axis (1) only; "
                             f"attention_axes={attention_axes} is not supported")
        if use_gate or sliding_window is not None:
            raise ValueError("MultiHeadAttention's use_gate and sliding_window are not "
                             "supported")
        super().__init__(**kwargs)
        self.num_heads = num_heads
        self.key_dim = key_dim
        self.value_dim = value_dim if value_dim is not None else key_dim
        self.dropout = dropout
        self.use_bias = use_bias
        self.output_shape_arg = output_shape
        self.seed = seed
        self._dense_args = dict(kernel_initializer=kernel_initializer,
                                bias_initializer=bias_initializer,
                                kernel_regularizer=kernel_regularizer,
                                bias_regularizer=bias_regularizer, dtype=self.dtype_policy)
        self._softmax = Softmax(axis=-1, dtype=self.dtype_policy)
        self._dropout_layer = Dropout(dropout, seed=seed, dtype=self.dtype_policy)
        self.query_dense = self.key_dense = self.value_dense = self.output_dense = None

    def _projection(self, name, heads_dim):
        return EinsumDense("abc,cde->abde", (None, self.num_heads, heads_dim),
                           bias_axes="de" if self.use_bias else None,
                           name=f"{self.name}/{name}", **self._dense_args)

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        for shape in (query_shape, value_shape, key_shape):
            if len(shape) != 3:
                raise ValueError("MultiHeadAttention takes inputs of rank 3 (batch, sequence, "
                                 f"features); received shape {tuple(shape)}")
        self.query_dense = self._projection("query", self.key_dim)
        self.key_dense = self._projection("key", self.key_dim)
        self.value_dense = self._projection("value", self.value_dim)
        out = self.output_shape_arg if self.output_shape_arg is not None else query_shape[-1]
        out = tuple(out) if isinstance(out, (list, tuple)) else (out,)
        if len(out) != 1:
            raise ValueError("MultiHeadAttention's output_shape is one width here; received "
                             f"{self.output_shape_arg}")
        self.output_dense = EinsumDense("abcd,cde->abe", (None, out[0]),
                                        bias_axes="e" if self.use_bias else None,
                                        name=f"{self.name}/attention_output",
                                        **self._dense_args)
        self.query_dense.build(tuple(query_shape))
        self.key_dense.build(tuple(key_shape))
        self.value_dense.build(tuple(value_shape))
        self.output_dense.build((query_shape[0], query_shape[1], self.num_heads,
                                 self.value_dim))
        self.built = True

    def __call__(self, query, value=None, key=None, query_mask=None, value_mask=None,
                 key_mask=None, attention_mask=None, return_attention_scores=False,
                 training=None, use_causal_mask=False):
        if isinstance(query, (list, tuple)) and value is None:  # a functional model's replay
            query, value, key = (list(query) + [None])[:3]
        if value is None:
            raise TypeError("MultiHeadAttention needs a `value` (the same tensor as the "
                            "query for self-attention)")
        inputs = [query, value] + ([key] if key is not None else [])
        if _is_symbolic(inputs):
            if return_attention_scores or any(m is not None for m in (
                    query_mask, value_mask, key_mask, attention_mask)):
                raise ValueError("In a functional model MultiHeadAttention takes "
                                 "use_causal_mask only: masks and attention scores need "
                                 "tensors, in a subclassed model or an eager call")
            output = super().__call__(inputs, training=training,
                                      use_causal_mask=use_causal_mask)
            output.node.kwargs = {"use_causal_mask": use_causal_mask}
            return output
        return super().__call__(
            inputs, training=training, query_mask=query_mask, value_mask=value_mask,
            key_mask=key_mask, attention_mask=attention_mask,
            return_attention_scores=return_attention_scores, use_causal_mask=use_causal_mask)

    def _build_once(self, input_shape):
        if not self.built:
            self.build(*input_shape)

    def _check_input(self, shape):
        if not isinstance(shape, list) or len(shape) not in (2, 3):
            raise ValueError("MultiHeadAttention takes a query, a value and optionally a key")

    def _mask(self, query, value, query_mask, value_mask, key_mask, attention_mask,
              use_causal_mask):
        """The (B, T, S) mask of Keras's _compute_attention_mask, as floats, or None."""
        mask = None

        def both(a, b):
            return b if a is None else a * b
        if query_mask is not None:
            mask = _mt.expand_dims(cast(query_mask, _mt.DType.float32), -1)
        for m in (value_mask, key_mask):
            if m is not None:
                mask = both(mask, _mt.expand_dims(cast(m, _mt.DType.float32), 1))
        if use_causal_mask:
            mask = both(mask, _causal_mask(query.shape[1], value.shape[1]))
        if attention_mask is not None:
            mask = both(mask, cast(cast(attention_mask, _mt.DType.bool), _mt.DType.float32))
        return mask

    def call(self, inputs, training=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, use_causal_mask=False):
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        masks = (query_mask, value_mask, key_mask, attention_mask)
        if self.dropout == 0 and not return_attention_scores and all(m is None for m in masks):
            # Keras's fused path, here the DotProductAttention row: the projections' (B, T,
            # heads, dim) layout is the op's, so no transpose and no (T, S) scores in memory.
            heads = dot_product_attention(
                self.query_dense(query), self.key_dense(key), self.value_dense(value),
                scale=1.0 / _math.sqrt(float(self.key_dim)), is_causal=use_causal_mask)
            return self.output_dense(heads)
        mask = self._mask(query, value, query_mask, value_mask, key_mask, attention_mask,
                          use_causal_mask)
        q = self.query_dense(query) * (1.0 / _math.sqrt(float(self.key_dim)))
        k = self.key_dense(key)
        v = self.value_dense(value)
        scores = einsum("aecd,abcd->acbe", k, q)  # (B, heads, T, S)
        if mask is not None:
            mask = _mt.expand_dims(mask, 1)  # one mask for every head
        if self.dropout > 0 or return_attention_scores:
            scores = self._softmax(scores, mask=mask)  # a fully masked query row: all 0
        else:
            scores = _fused_softmax(scores, mask)  # ... here uniform, as Keras's
        dropped = self._dropout_layer(scores, training=training)
        heads = einsum("acbe,aecd->abcd", dropped, v)  # (B, T, heads, value_dim)
        output = self.output_dense(heads)
        return (output, scores) if return_attention_scores else output

    def compute_output_shape(self, input_shape):
        query_shape = input_shape[0]
        out = self.output_shape_arg if self.output_shape_arg is not None else query_shape[-1]
        out = out[0] if isinstance(out, (list, tuple)) else out
        return tuple(query_shape[:-1]) + (out,)

    def get_config(self):
        return {**super().get_config(), "num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout,
                "use_bias": self.use_bias, "output_shape": self.output_shape_arg,
                "seed": self.seed}


def _fused_softmax(scores, mask):
    """Softmax over the last axis with the masked scores replaced by a very negative number,
    as Keras's fused path (ops.dot_product_attention, taken without dropout or returned
    scores) computes it: a query row with every value masked attends to all of them
    equally, where the Softmax layer's path gives it zeros. Both are Keras's results."""
    if mask is not None:
        fill = -0.7 * float(scores.dtype.max)
        mask = cast(mask, scores.dtype)
        scores = scores * mask + (1.0 - mask) * fill
    return activations.softmax(scores, axis=-1)


def _is_symbolic(inputs):
    return any(is_symbolic(t) for t in inputs if t is not None)
