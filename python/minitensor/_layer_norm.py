"""Layer normalisation over the op table's LayerNorm row: ``mt.nn.layer_norm`` normalises
each row of ``x`` over its trailing axes (from ``begin_norm_axis`` to the last), then scales
by ``gamma`` and shifts by ``beta``, in one kernel forward and one backward. It
differentiates through a GradientTape and an mt.function records it.

    y, mean, inv_std = mt.nn.layer_norm(x, gamma, beta)        # over the last axis
    y, _, _ = mt.nn.layer_norm(x, None, None, begin_norm_axis=-2, epsilon=1e-5)
    y, x, _, _ = mt.nn.add_layer_norm(x, attention_out, gamma, beta)  # x + r, normalised
"""

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor, ones, zeros

__all__ = ["add_layer_norm", "layer_norm", "layer_norm_grad"]

_HALF = (_mt.DType.float16, _mt.DType.bfloat16)


def _tensor(value, dtype=None):
    """A tensor goes to the op as it is (the op names a wrong dtype); other values are
    converted to ``dtype``."""
    if isinstance(value, _mt.Tensor):
        return value
    return convert_to_tensor(value, dtype)


def _stats_dtype(x):
    return _mt.DType.float32 if x.dtype in _HALF else x.dtype


def layer_norm(x, gamma=None, beta=None, begin_norm_axis=-1, epsilon=0.001, name=None):
    """Returns ``(y, mean, inv_std)``: each row of ``x`` over the axes from
    ``begin_norm_axis`` to the last has mean ``mean`` and biased variance ``var``, ``inv_std
    = 1 / sqrt(var + epsilon)`` and ``y = (x - mean) * inv_std * gamma + beta``. ``gamma``
    and ``beta`` have the normalised axes' shape (None: ones and zeros) and are float32
    (float64 for a float64 ``x``; a Python value or array is converted to it); the 2-byte
    floats compute in float32. InvalidArgumentError for bad shapes, dtypes, axis or
    epsilon (finite and >= 0)."""
    del name
    x = _tensor(x)
    gamma, beta = _params(x, gamma, beta, begin_norm_axis)
    return _mt.layer_norm(x, gamma, beta, int(begin_norm_axis), float(epsilon))


def _params(x, gamma, beta, begin_norm_axis):
    u = _stats_dtype(x)
    rank = len(x.shape)
    begin = begin_norm_axis + rank if begin_norm_axis < 0 else begin_norm_axis
    params = list(x.shape[begin:]) if 0 <= begin < rank else [0]
    gamma = ones(params, u) if gamma is None else _tensor(gamma, u)
    beta = zeros(params, u) if beta is None else _tensor(beta, u)
    return gamma, beta


def add_layer_norm(x, residual, gamma=None, beta=None, begin_norm_axis=-1, epsilon=0.001,
                   name=None):
    """Returns ``(y, sum, mean, inv_std)``: ``sum = x + residual`` (rounded to x's dtype, as
    ``mt.add`` gives it) and ``layer_norm(sum, gamma, beta, begin_norm_axis, epsilon)``, in
    one pass over the rows (the AddLayerNorm row): a transformer's residual add and the
    next layer norm. ``residual`` has x's shape and dtype (a Python value or array is
    converted to it)."""
    del name
    x = _tensor(x)
    residual = _tensor(residual, x.dtype)
    gamma, beta = _params(x, gamma, beta, begin_norm_axis)
    return _mt.add_layer_norm(x, residual, gamma, beta, int(begin_norm_axis), float(epsilon))


def layer_norm_grad(dy, x, gamma, mean, inv_std, begin_norm_axis=-1, epsilon=0.001, name=None):
    """Returns ``(dx, dgamma, dbeta)``, the gradient of ``layer_norm``'s y given ``dy``, its
    ``x`` and ``gamma`` and its ``mean`` and ``inv_std``, with the forward call's
    ``begin_norm_axis`` and ``epsilon``."""
    del name
    x = _tensor(x)
    u = _stats_dtype(x)
    return _mt.layer_norm_grad(_tensor(dy, x.dtype), x, _tensor(gamma, u), _tensor(mean, u),
                               _tensor(inv_std, u), int(begin_norm_axis), float(epsilon))
