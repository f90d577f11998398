"""Dense (tf.keras.layers.Dense): activation(inputs @ kernel + bias)."""

from .. import activations, initializers, regularizers
from .layer import Layer
from ..._converted_ops import matmul
from ..._minitensor import reshape
from ... import nn

__all__ = ["Dense"]


class Dense(Layer):
    """A densely connected layer of ``units`` outputs. Its kernel (last input dimension by
    units) and bias (units) are made on the first call. Inputs of rank above 2 are applied
    along their last axis. Raises ValueError, with Keras's messages, for units below 1, an
    unknown activation or initializer, and inputs of rank below 2 or of another last
    dimension than the kernel's."""

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        if not isinstance(units, int) or isinstance(units, bool) or units < 1:
            raise ValueError("Received an invalid value for `units`, expected a positive "
                             f"integer. Received: units={units}")
        super().__init__(**kwargs)
        self.units = units
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel = None
        self.bias = None

    def build(self, input_shape):
        self.kernel = self.add_weight("kernel", (input_shape[-1], self.units),
                                      self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.bias = self.add_weight("bias", (self.units,), self.bias_initializer,
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        outputs = inputs
        if len(inputs.shape) > 2:
            outputs = reshape(inputs, [-1, inputs.shape[-1]])
        outputs = matmul(outputs, self.kernel)
        if self.use_bias:
            outputs = nn.bias_add(outputs, self.bias)
        if len(inputs.shape) > 2:
            outputs = reshape(outputs, list(inputs.shape[:-1]) + [self.units])
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def _check_input(self, shape):
        if isinstance(shape, list):
            raise ValueError(f"Layer '{self.name}' expects 1 input, but it received "
                             f"{len(shape)} input tensors.")
        if len(shape) < 2:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected "
                f"min_ndim=2, found ndim={len(shape)}. Full shape received: {shape}")
        if self.kernel is not None and shape[-1] != self.kernel.shape[0]:
            raise ValueError(
                f"Input 0 of layer '{self.name}' is incompatible with the layer: expected "
                f"axis -1 of input shape to have value {self.kernel.shape[0]}, but received "
                f"input with shape {shape}")
