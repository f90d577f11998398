"""LayerNormalization (tf.keras.layers.LayerNormalization): normalises each example over
``axis`` (the last by default) to mean 0 and variance 1, then scales by ``gamma`` and
shifts by ``beta``, learned per element of those axes.

    mt.keras.layers.LayerNormalization(epsilon=1e-6)(x)

Over trailing axes (the last, or the last few: Keras's default and the transformers') it
runs the fused LayerNorm op (mt.nn.layer_norm: one kernel forward, one backward, on the CPU
and the GPU); over other axes Keras's formula in existing ops (mt.nn.moments, rsqrt):
x * inv + (beta - mean * inv), inv = gamma / sqrt(var + eps). Both differentiate through a
GradientTape.
"""

from ... import _minitensor as _mt
from ..._composite_reductions import moments
from ..._converted_ops import cast
from ..._layer_norm import layer_norm
from .. import initializers, regularizers
from .layer import Layer

__all__ = ["LayerNormalization"]

_FLOATS = (_mt.DType.float16, _mt.DType.bfloat16, _mt.DType.float32, _mt.DType.float64)


def _axes(axis):
    if isinstance(axis, (list, tuple)) and all(isinstance(a, int) for a in axis):
        return list(axis)
    if isinstance(axis, int) and not isinstance(axis, bool):
        return [axis]
    raise TypeError("Expected an int or a list/tuple of ints for the argument 'axis', but "
                    f"received: {axis!r}")


class LayerNormalization(Layer):
    """Layer normalisation over ``axis`` (an int or list of ints; -1 by default) with
    ``epsilon`` 1e-3; ``scale`` makes gamma (ones), ``center`` beta (zeros). float16 and
    bfloat16 inputs are normalised in float32. Raises TypeError for an axis that is not
    ints and ValueError for one outside the input's rank. Keras's deprecated
    ``rms_scaling`` is not taken (Keras's RMSNormalization is the layer for that)."""

    _autocast_variables = False  # float32 statistics and parameters, any policy

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, **kwargs):
        self.axis = _axes(axis)
        super().__init__(**kwargs)
        self.epsilon = epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.gamma = self.beta = None

    def _check_input(self, shape):
        rank = len(shape)
        for axis in self.axis:
            if not -rank <= axis < rank:
                raise ValueError(f"Invalid axis. Expected 0 <= axis < inputs.rank (with "
                                 f"inputs.rank={rank}). Received: layer.axis={self.axis}")

    def build(self, input_shape):
        rank = len(input_shape)
        self.axis = sorted(a % rank for a in self.axis)
        param_shape = tuple(input_shape[a] for a in self.axis)
        if self.scale:
            self.gamma = self.add_weight("gamma", param_shape, self.gamma_initializer,
                                         regularizer=self.gamma_regularizer)
        if self.center:
            self.beta = self.add_weight("beta", param_shape, self.beta_initializer,
                                        regularizer=self.beta_regularizer)

    def _broadcast(self, param, rank, shape):
        """Reshapes a parameter so that it broadcasts along the normalised axes."""
        if self.axis == [rank - 1]:
            return param
        return _mt.reshape(param, [shape[a] if a in self.axis else 1 for a in range(rank)])

    def _fused_axis(self, shape):
        """Returns the first normalised axis when they are the trailing axes of ``shape``
        and hold elements (the fused op's case), else None."""
        rank = len(shape)
        begin = rank - len(self.axis)
        if self.axis != list(range(begin, rank)) or any(shape[a] == 0 for a in self.axis):
            return None
        return begin

    def _param(self, param, dtype):
        if param is None or param.dtype == dtype:
            return param
        return cast(param, dtype)

    def call(self, inputs):
        narrow = inputs.dtype in (_mt.DType.float16, _mt.DType.bfloat16)
        begin = self._fused_axis(list(inputs.shape))
        if begin is not None and inputs.dtype in _FLOATS:
            stats = _mt.DType.float64 if inputs.dtype == _mt.DType.float64 else _mt.DType.float32
            y, _, _ = layer_norm(inputs, self._param(self.gamma, stats),
                                 self._param(self.beta, stats), begin, self.epsilon)
            return y
        x = cast(inputs, _mt.DType.float32) if narrow else inputs
        rank, shape = len(x.shape), list(x.shape)
        mean, variance = moments(x, self.axis, keepdims=True)
        inv = _mt.rsqrt(variance + self.epsilon)
        if self.gamma is not None:
            inv = inv * cast(self._broadcast(self.gamma, rank, shape), x.dtype)
        offset = -mean * inv
        if self.beta is not None:
            offset = offset + cast(self._broadcast(self.beta, rank, shape), x.dtype)
        outputs = x * inv + offset
        return cast(outputs, inputs.dtype) if narrow else outputs

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale}
