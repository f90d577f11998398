"""BatchNormalization (tf.keras.layers.BatchNormalization): normalises each feature along
``axis`` (the channels, last by default) with the batch's mean and variance in training
and with moving averages of them otherwise, then scales by ``gamma`` and shifts by
``beta``.

    bn = mt.keras.layers.BatchNormalization()
    y = bn(x, training=True)    # batch statistics; moving_mean and moving_variance updated
    y = bn(x)                   # the moving statistics

Keras 3's formulas: in training, ``moving = moving * momentum + batch * (1 - momentum)``
with the batch's biased variance; ``fit`` calls the model with ``training=True``,
``evaluate`` and ``predict`` with ``training=False``. The update is two variable
assignments, so an ``mt.function`` repeats it on every call. A 4-D input normalised along
axis 3 or 1 runs the FusedBatchNormV3 op (NHWC or NCHW); other ranks and axes the
composite of ``mt.nn.moments`` and ``mt.nn.batch_normalization``.
"""

from ... import _minitensor as _mt
from ..._batch_norm import batch_normalization
from ..._composite_reductions import moments
from ..._constant_op import ones, zeros
from ..._converted_ops import cast
from .. import initializers, regularizers
from .layer import Layer

__all__ = ["BatchNormalization"]


class BatchNormalization(Layer):
    """Batch normalisation along ``axis`` (an int; -1 by default) with ``momentum`` 0.99
    and ``epsilon`` 1e-3; ``scale`` makes gamma (ones), ``center`` beta (zeros); the
    non-trainable moving_mean (zeros) and moving_variance (ones) follow, in Keras's order
    and names, so that .weights.h5 files load both ways. A frozen layer (``trainable``
    False) uses the moving statistics even in training, as Keras's. float16 and bfloat16
    inputs are normalised in float32. Raises TypeError for an axis that is not an int,
    ValueError for one outside the input's rank, and NotImplementedError for the
    arguments minitensor does not have (constraints, ``synchronized``, ``renorm``)."""

    _autocast_variables = False  # float32 statistics and parameters, any policy

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, synchronized=False, renorm=False, **kwargs):
        if not isinstance(axis, int) or isinstance(axis, bool):
            raise TypeError(f"Expected an int for the argument 'axis', but received: {axis!r}")
        for name, value in (("beta_constraint", beta_constraint),
                            ("gamma_constraint", gamma_constraint),
                            ("synchronized", synchronized), ("renorm", renorm)):
            if value:
                raise NotImplementedError(f"BatchNormalization's {name} is not supported")
        super().__init__(**kwargs)
        self.axis = axis
        self.momentum, self.epsilon = float(momentum), float(epsilon)
        self.center, self.scale = center, scale
        self.beta_initializer = initializers.get(beta_initializer)
        self.gamma_initializer = initializers.get(gamma_initializer)
        self.moving_mean_initializer = initializers.get(moving_mean_initializer)
        self.moving_variance_initializer = initializers.get(moving_variance_initializer)
        self.beta_regularizer = regularizers.get(beta_regularizer)
        self.gamma_regularizer = regularizers.get(gamma_regularizer)
        self.gamma = self.beta = self.moving_mean = self.moving_variance = None

    def _check_input(self, shape):
        rank = len(shape)
        if not -rank <= self.axis < rank:
            raise ValueError(f"Invalid axis. Expected -{rank} <= axis < {rank} (inputs.rank="
                             f"{rank}). Received: layer.axis={self.axis}")

    def build(self, input_shape):
        self.axis = self.axis % len(input_shape)
        shape = (input_shape[self.axis],)
        if self.scale:
            self.gamma = self.add_weight("gamma", shape, self.gamma_initializer,
                                         regularizer=self.gamma_regularizer)
        if self.center:
            self.beta = self.add_weight("beta", shape, self.beta_initializer,
                                        regularizer=self.beta_regularizer)
        self.moving_mean = self.add_weight("moving_mean", shape, self.moving_mean_initializer,
                                           trainable=False)
        self.moving_variance = self.add_weight("moving_variance", shape,
                                               self.moving_variance_initializer,
                                               trainable=False)

    def _fused_format(self, rank):
        """'NHWC' or 'NCHW' where FusedBatchNormV3 computes this layer's call, else None."""
        if rank != 4:
            return None
        return {3: "NHWC", 1: "NCHW"}.get(self.axis)

    def call(self, inputs, training=False):
        narrow = inputs.dtype in (_mt.DType.float16, _mt.DType.bfloat16)
        x = cast(inputs, _mt.DType.float32) if narrow else inputs
        rank, channels = len(x.shape), x.shape[self.axis]
        gamma = ones([channels], x.dtype) if self.gamma is None else self._read(self.gamma, x)
        beta = zeros([channels], x.dtype) if self.beta is None else self._read(self.beta, x)
        data_format = self._fused_format(rank)
        if training and self.trainable:
            if data_format is not None:
                empty = zeros([0], x.dtype)
                y, _, _, mean, variance = _mt.fused_batch_norm_v3(
                    x, gamma, beta, empty, empty, epsilon=self.epsilon, data_format=data_format,
                    is_training=True)
            else:
                mean, variance = moments(x, [a for a in range(rank) if a != self.axis])
                y = self._composite(x, mean, variance, gamma, beta)
            for moving, batch in ((self.moving_mean, mean), (self.moving_variance, variance)):
                value = self._read(moving, x) * self.momentum + batch * (1.0 - self.momentum)
                moving.assign(cast(value, moving.dtype))
        else:
            mean = self._read(self.moving_mean, x)
            variance = self._read(self.moving_variance, x)
            if data_format is not None:
                y = _mt.fused_batch_norm_v3(x, gamma, beta, mean, variance, epsilon=self.epsilon,
                                            data_format=data_format, is_training=False)[0]
            else:
                y = self._composite(x, mean, variance, gamma, beta)
        return cast(y, inputs.dtype) if narrow else y

    @staticmethod
    def _read(variable, x):
        """The variable's value in x's dtype (float32 for 2-byte float variables)."""
        return cast(variable.value(), x.dtype)

    def _composite(self, x, mean, variance, gamma, beta):
        rank = len(x.shape)
        return batch_normalization(x, self._broadcast(mean, rank), self._broadcast(variance, rank),
                                   self._broadcast(beta, rank), self._broadcast(gamma, rank),
                                   self.epsilon)

    def _broadcast(self, param, rank):
        """Reshapes a per-feature vector to broadcast along ``axis`` of a rank-``rank``
        input."""
        if self.axis == rank - 1:
            return param
        return _mt.reshape(param, [-1 if a == self.axis else 1 for a in range(rank)])

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "momentum": self.momentum,
                "epsilon": self.epsilon, "center": self.center, "scale": self.scale}
