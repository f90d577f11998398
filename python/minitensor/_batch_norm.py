"""Batch normalisation with TensorFlow's names and signatures: tf.compat.v1.nn's
``fused_batch_norm`` over the op table's FusedBatchNormV3 row, and tf.nn's
``batch_normalization``, a composite of ops. Both differentiate through a GradientTape and
an mt.function records them.

    y, mean, variance = mt.nn.fused_batch_norm(x, gamma, beta)          # batch statistics
    y, _, _ = mt.nn.fused_batch_norm(x, gamma, beta, mean, variance, is_training=False)
    y = mt.nn.batch_normalization(x, mean, variance, beta, gamma, 1e-3)
"""

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor, zeros
from ._converted_ops import cast

__all__ = ["batch_normalization", "fused_batch_norm"]


def _tensor(value, like=None):
    if isinstance(value, _mt.Tensor):
        return value
    return convert_to_tensor(value, None if like is None else like.dtype)


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """Normalises each channel of the 4-D ``x`` (NHWC, or NCHW) and returns ``(y,
    running_mean, running_var)``. Training, with the batch's mean and variance, the running
    statistics are ``(1 - exponential_avg_factor) * mean + exponential_avg_factor *
    batch_mean`` (the variance's with Bessel's correction); ``mean`` and ``variance`` may
    be None when the factor is 1. Inference (``is_training=False``) normalises with
    ``mean`` and ``variance`` and returns them. ``scale``, ``offset`` and the statistics
    are 1-D float32 (float64 for a float64 ``x``); ValueError without ``mean`` or
    ``variance`` where they are read, InvalidArgumentError for bad shapes or dtypes."""
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError("Both `mean` and `variance` must be a 1D tensor when `is_training` is "
                         "False or `exponential_avg_factor` != 1.0. Received: `mean` "
                         f"{mean!r} and `variance` {variance!r}")
    x = _tensor(x)
    scale = _tensor(scale)
    offset = _tensor(offset, scale)
    mean = zeros([0], scale.dtype) if mean is None else _tensor(mean, scale)
    variance = zeros([0], scale.dtype) if variance is None else _tensor(variance, scale)
    y, running_mean, running_var, _, _ = _mt.fused_batch_norm_v3(
        x, scale, offset, mean, variance, epsilon=float(epsilon),
        exponential_avg_factor=float(exponential_avg_factor), data_format=data_format,
        is_training=bool(is_training))
    return y, running_mean, running_var


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """Returns ``(x - mean) * scale / sqrt(variance + variance_epsilon) + offset`` with
    broadcasting, computed as TensorFlow does: ``x * inv + (offset - mean * inv)`` with
    ``inv = rsqrt(variance + variance_epsilon) * scale``; ``offset`` and ``scale`` may be
    None."""
    x = _tensor(x)
    mean = _tensor(mean, x)
    variance = _tensor(variance, x)
    inv = _mt.rsqrt(variance + _tensor(variance_epsilon, variance))
    if scale is not None:
        inv = inv * _tensor(scale, x)
    shift = -mean * inv if offset is None else _tensor(offset, x) - mean * inv
    return x * cast(inv, x.dtype) + cast(shift, x.dtype)
