"""Neural-network ops (tf.nn): the kernels of the op table, and composites of ops with
TensorFlow's names and formulas (they differentiate through a GradientTape)."""

import types as _types

from . import _minitensor as _mt
from . import _batch_norm
from . import _layer_norm
from . import _attention
from . import _conv_ops
from . import errors as _errors
from ._clip_ops import clip_by_norm
from ._composite_reductions import l2_normalize, moments
from ._dropout import dropout, stateless_dropout
from ._converted_ops import cast
from ._depthwise_conv import depthwise_conv2d
from ._index_ops import where
from ._constant_op import convert_to_tensor
from ._sort_ops import top_k  # tf.nn.top_k is tf.math.top_k
from ._op_table import exports as _exports

# The op table's nn.* rows (relu and the rest); the wrappers below replace the bindings
# of those that take axis= or name=, of the convolutions and pools (TensorFlow's argument
# forms, _conv_ops.py), of batch normalisation (_batch_norm.py) and of layer normalisation
# (_layer_norm.py: its arguments converted, gamma and beta optional) and of attention
# (_attention.py: Keras 3's dot_product_attention, its output alone). The pool
# gradients, fused_batch_norm_v3 (all five outputs) and fused_batch_norm_grad stay the
# bindings; the convolution's two backprops take conv2d's forms too.
_rows = _exports("nn")
globals().update(_rows)
conv2d, convolution = _conv_ops.conv2d, _conv_ops.convolution
conv2d_backprop_filter = _conv_ops.conv2d_backprop_filter
conv2d_backprop_input = _conv_ops.conv2d_backprop_input
max_pool2d, avg_pool2d = _conv_ops.max_pool2d, _conv_ops.avg_pool2d
max_pool, avg_pool = _conv_ops.max_pool, _conv_ops.avg_pool
fused_batch_norm = _batch_norm.fused_batch_norm
batch_normalization = _batch_norm.batch_normalization
layer_norm, layer_norm_grad = _layer_norm.layer_norm, _layer_norm.layer_norm_grad
add_layer_norm = _layer_norm.add_layer_norm
dot_product_attention = _attention.dot_product_attention
dot_product_attention_grad = _attention.dot_product_attention_grad

__all__ = sorted({*_rows, *_conv_ops.__all__, *_batch_norm.__all__, *_layer_norm.__all__,
           *_attention.__all__,
           "bias_add",
           "depthwise_conv2d", "dropout",
           "elu", "embedding_lookup", "experimental", "gelu",
           "l2_normalize", "leaky_relu", "log_softmax", "moments", "relu", "relu6",
           "sigmoid_cross_entropy_with_logits", "silu", "softmax",
           "softmax_cross_entropy_with_logits", "softplus",
           "sparse_softmax_cross_entropy_with_logits", "swish", "top_k"})

# tf.nn.experimental: only the stateless dropout.
experimental = _types.SimpleNamespace(stateless_dropout=stateless_dropout)


def _tensor(value, like=None):
    if isinstance(value, _mt.Tensor):
        return value
    return convert_to_tensor(value, None if like is None else like.dtype)


def _over_axis(kernel, logits, axis):
    """Runs ``kernel`` (over the last axis) over ``axis`` of ``logits``: as TensorFlow does,
    another axis is swapped with the last one before and after."""
    logits = _tensor(logits)
    rank = len(logits.shape)
    if axis is None or axis == -1 or (rank > 0 and axis == rank - 1):
        return kernel(logits)
    if not -rank <= axis < rank:
        raise _errors.InvalidArgumentError(
            None, None,
            f"`dim` must be in the range [{-rank}, {rank}) where {rank} is the number of "
            f"dimensions in the input. Received: dim={axis}")
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return _mt.transpose(kernel(_mt.transpose(logits, perm)), perm)


def softmax(logits, axis=None, name=None):
    """Computes softmax over ``axis`` (the last by default; tf.nn.softmax)."""
    del name
    return _over_axis(_mt.softmax, logits, axis)


def log_softmax(logits, axis=None, name=None):
    """Computes log(softmax) over ``axis`` (the last by default; tf.nn.log_softmax)."""
    del name
    return _over_axis(_mt.log_softmax, logits, axis)


def bias_add(value, bias, data_format=None, name=None):
    """Adds the 1-D ``bias`` along the last axis of ``value`` (BiasAdd, NHWC only)."""
    del name
    if data_format not in (None, "NHWC", "N..C"):
        raise _errors.UnimplementedError(
            None, None, f"[BiasAdd] only data_format NHWC is supported, got {data_format}")
    value = _tensor(value)
    return _mt.bias_add(value, _tensor(bias, value))


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Returns the per-example cross-entropy of softmax(logits) against integer ``labels``
    (SparseSoftmaxCrossEntropyWithLogits): labels of shape S, logits of shape S + [classes].
    A label outside [0, classes) raises InvalidArgumentError on the CPU and gives NaN on a
    GPU, as in TensorFlow."""
    del name
    if labels is None or logits is None:
        raise ValueError("Both labels= and logits= must be given")
    return _mt.sparse_softmax_cross_entropy_with_logits(_tensor(labels), _tensor(logits))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Returns -sum(labels * log_softmax(logits)) over ``axis``: the cross-entropy of
    softmax(logits) against ``labels``, a probability distribution per example (one-hot
    or not). Raises InvalidArgumentError, with TensorFlow's message, for shapes that
    differ."""
    del name
    logits = _tensor(logits)
    labels = cast(_tensor(labels), logits.dtype)
    if list(labels.shape) != list(logits.shape):
        raise _errors.InvalidArgumentError(
            None, None, "logits and labels must be broadcastable: logits_size="
            f"{_dims(logits)} labels_size={_dims(labels)}")
    return -_mt.reduce_sum(labels * log_softmax(logits, axis), axis)


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Returns the element-wise cross-entropy of sigmoid(logits) against ``labels`` (in
    [0, 1]), as max(x, 0) - x * z + log(1 + exp(-|x|)), which neither overflows nor loses
    precision. Raises ValueError, with TensorFlow's messages, for a missing argument or
    shapes that differ."""
    del name
    if labels is None or logits is None:
        raise ValueError("Both `labels` and `logits` must be provided for sigmoid_cross_"
                         f"entropy_with_logitsReceived: labels={labels} and logits={logits}")
    logits = _tensor(logits)
    labels = _tensor(labels, logits)
    if list(labels.shape) != list(logits.shape):
        raise ValueError("`logits` and `labels` must have the same shape, received "
                         f"({tuple(logits.shape)} vs {tuple(labels.shape)}).")
    # Both branches chosen by one condition, as TensorFlow's, so that the gradient at 0 is
    # exactly sigmoid(0) - labels.
    positive = _mt.greater_equal(logits, _mt.zeros_like(logits))
    relu_logits = where(positive, logits, _mt.zeros_like(logits))
    neg_abs_logits = where(positive, -logits, logits)
    return relu_logits - logits * labels + _mt.log1p(_mt.exp(neg_abs_logits))


def _dims(tensor):
    """The shape as TensorFlow's messages write it: [2,3]."""
    return "[" + ",".join(str(d) for d in tensor.shape) + "]"


_FLOATS = (_mt.DType.float32, _mt.DType.float64, _mt.DType.float16, _mt.DType.bfloat16)


def _float_features(features, op):
    """Returns ``features`` as a tensor; InvalidArgumentError naming ``op`` unless it is
    floating-point."""
    features = _tensor(features)
    if features.dtype not in _FLOATS:
        raise _errors.InvalidArgumentError(
            None, None, f"[{op}] features must be a floating-point tensor, got dtype "
            f"{features.dtype.name}")
    return features


def gelu(features, approximate=False, name=None):
    """Returns the Gaussian error linear unit (the Gelu row): x * P(X <= x) for a standard
    normal X, 0.5 x (1 + erf(x / sqrt(2))); with ``approximate``, 0.5 x (1 + tanh(sqrt(2 /
    pi) (x + 0.044715 x^3))). The 2-byte floats compute in float32 and round once. Raises
    ValueError, with TensorFlow's message, for integers."""
    del name
    x = _tensor(features)
    if x.dtype not in _FLOATS:
        raise ValueError("`features.dtype` must be a floating point tensor.Received:"
                         f"features.dtype={x.dtype!r}")
    return _mt.gelu(x, bool(approximate))


def leaky_relu(features, alpha=0.2, name=None):
    """Returns x where x > 0, else alpha * x."""
    del name
    x = _float_features(features, "LeakyRelu")
    return where(_mt.greater(x, _mt.zeros_like(x)), x, x * alpha)


def relu6(features, name=None):
    """Returns min(max(x, 0), 6)."""
    del name
    x = _tensor(features)
    return _mt.minimum(_mt.relu(x), _tensor(6, x))


def elu(features, name=None):
    """Returns x where x > 0, else exp(x) - 1."""
    del name
    x = _float_features(features, "Elu")
    zeros = _mt.zeros_like(x)
    return where(_mt.greater(x, zeros), x, _mt.exp(_mt.minimum(x, zeros)) - 1.0)


def softplus(features, name=None):
    """Returns log(1 + exp(x)), as max(x, 0) + log(1 + exp(-|x|)) so that it neither
    overflows nor loses the small values."""
    del name
    x = _float_features(features, "Softplus")
    return _mt.maximum(x, _mt.zeros_like(x)) + _mt.log1p(_mt.exp(-_mt.abs(x)))


def silu(features, beta=1.0, name=None):
    """Returns x * sigmoid(beta * x) (swish)."""
    del name
    x = _float_features(features, "Silu")
    return x * _mt.sigmoid(x * beta if beta != 1.0 else x)


swish = silu


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Returns the rows of ``params`` that ``ids`` (int32 or int64) name: the shape of ids
    followed by that of a row (a gather along axis 0). With ``max_norm``, each row whose
    L2 norm exceeds it is scaled down to it. An id outside [0, rows) raises
    InvalidArgumentError, as TensorFlow's gather on the CPU. ``params`` may be a list of
    one tensor (TensorFlow's partitioned form with one part)."""
    del name
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise _errors.UnimplementedError(
                None, None, "[embedding_lookup] params split into several tensors is not "
                f"supported; got {len(params)} (concatenate them first)")
        params = params[0]
    params, ids = _tensor(params), _tensor(ids)
    rows = _mt.gather(params, ids)
    if max_norm is None:
        return rows
    return clip_by_norm(rows, max_norm, list(range(len(ids.shape), len(rows.shape))))
