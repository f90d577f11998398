"""Dot-product attention over the op table's DotProductAttention row: ``mt.nn.dot_product_attention``
is Keras 3's ``keras.ops.dot_product_attention``: query (B, T, N, H), key and value (B, S, K,
H) with K dividing N (grouped-query attention when K < N), the output (B, T, N, H). Without a
``bias`` or a ``mask`` it is one fused kernel forward and one backward (no (T, S) score matrix
in memory); with them, Keras's formula in ops. It differentiates through a GradientTape and
an mt.function records it.

    y = mt.nn.dot_product_attention(q, k, v, is_causal=True)   # GPT's self-attention
    y = mt.nn.dot_product_attention(q, k, v, mask=padding)     # (B, N, T, S) booleans

``is_causal`` lets query i see keys j <= i, aligned at the top left as Keras's (and torch's
``is_causal``) are when T != S. TensorFlow has no such op; torch's is
``scaled_dot_product_attention`` (layout (B, N, T, H)).
"""

import math as _math

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from ._converted_ops import cast

__all__ = ["dot_product_attention", "dot_product_attention_grad"]

_HALF = (_mt.DType.float16, _mt.DType.bfloat16)


def _tensor(value, dtype=None):
    """A tensor goes to the op as it is (the op names a wrong dtype); other values are
    converted to ``dtype``."""
    if isinstance(value, _mt.Tensor):
        return value
    return convert_to_tensor(value, dtype)


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None, is_causal=False,
                          flash_attention=None, name=None):
    """Returns softmax(scale * query key^T + bias, masked) value for each head, as Keras 3's
    ``ops.dot_product_attention``: ``scale`` defaults to 1 / sqrt(H); ``mask`` (booleans
    broadcasting to (B, N, T, S)) keeps the scores where it is true, the others taking
    -0.7 times the dtype's largest value (so a row with every key masked averages them all,
    as Keras's); ``is_causal`` keeps keys j <= i. The 2-byte floats compute the softmax in
    float32 (the fused kernel all of it, rounding once). ``flash_attention=True`` asks for
    the fused kernel: ValueError with a bias or a mask, which it does not take.
    InvalidArgumentError for shapes or dtypes the op rejects (rank 4 each, matching batch,
    keys and depth, K dividing N)."""
    del name
    query = _tensor(query)
    key, value = _tensor(key, query.dtype), _tensor(value, query.dtype)
    if bias is None and mask is None:
        s = None if scale is None else float(scale)
        return _mt.dot_product_attention(query, key, value, s, bool(is_causal))[0]
    if flash_attention:
        raise ValueError("Flash attention does not take a `bias` or a `mask`; pass "
                         "flash_attention=None or False to compute them in ops")
    if scale is None:
        scale = 1.0 / _math.sqrt(float(query.shape[-1]))
    return _composite(query, key, value, bias, mask, float(scale), bool(is_causal))


def _repeat_heads(t, group):
    """(B, S, K, H) with each head repeated for the ``group`` query heads that read it."""
    if group == 1:
        return t
    b, s, k, h = t.shape
    each = _mt.broadcast_to(_mt.reshape(t, [b, s, k, 1, h]), [b, s, k, group, h])
    return _mt.reshape(each, [b, s, k * group, h])


def _composite(query, key, value, bias, mask, scale, is_causal):
    """Keras's formula in ops, heads first."""
    group = query.shape[2] // max(key.shape[2], 1)
    q = _mt.transpose(query, [0, 2, 1, 3])
    k = _mt.transpose(_repeat_heads(key, group), [0, 2, 1, 3])
    v = _mt.transpose(_repeat_heads(value, group), [0, 2, 1, 3])
    logits = _mt.matmul(q, k, transpose_b=True) * scale  # (B, N, T, S)
    if bias is not None:
        logits = logits + _tensor(bias, logits.dtype)
    keep = None
    if mask is not None:
        keep = cast(_tensor(mask), _mt.DType.bool)
    if is_causal:
        t, s = logits.shape[-2], logits.shape[-1]
        rows = _mt.reshape(_mt.range(0, t, 1, _mt.DType.int32), [t, 1])
        cols = _mt.reshape(_mt.range(0, s, 1, _mt.DType.int32), [1, s])
        causal = _mt.greater_equal(rows, cols)
        keep = causal if keep is None else _mt.logical_and(keep, causal)
    if keep is not None:
        fill = _mt.fill([], -0.7 * float(logits.dtype.max), logits.dtype)
        logits = _mt.select_v2(keep, logits, fill)
    dtype = logits.dtype
    if dtype in _HALF:
        logits = cast(logits, _mt.DType.float32)
    probs = _mt.softmax(logits)
    if dtype in _HALF:
        probs = cast(probs, dtype)
    return _mt.transpose(_mt.matmul(probs, v), [0, 2, 1, 3])


def dot_product_attention_grad(do, query, key, value, output, lse, scale=None, is_causal=False,
                               name=None):
    """Returns ``(dq, dk, dv)``, the gradient of the fused attention's output given ``do``,
    its inputs, its output and the log-sum-exp of each query row's scores, ``lse`` (B, N, T)
    in float32 (float64 for float64), with the forward call's ``scale`` and ``is_causal``."""
    del name
    query = _tensor(query)
    u = _mt.DType.float32 if query.dtype in _HALF else query.dtype
    s = None if scale is None else float(scale)
    return _mt.dot_product_attention_grad(
        _tensor(do, query.dtype), query, _tensor(key, query.dtype), _tensor(value, query.dtype),
        _tensor(output, query.dtype), _tensor(lse, u), s, bool(is_causal))
