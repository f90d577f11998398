"""EinsumDense (tf.keras.layers.EinsumDense): a dense layer whose product with its kernel is
an einsum equation, with an optional bias over some of the output's axes.

    layer = mt.keras.layers.EinsumDense("abc,cde->abde", output_shape=(None, 4, 8),
                                        bias_axes="de")
    layer(x)   # x: (batch, seq, 16) -> (batch, seq, 4, 8); kernel (16, 4, 8), bias (4, 8)

The equation names the input, the kernel and the output, two operands and no ellipsis;
``output_shape`` gives the output's trailing dimensions (None for one the input sets).
"""

from ..._einsum import einsum
from .. import activations, initializers, regularizers
from .layer import Layer

__all__ = ["EinsumDense"]


def _split(equation):
    """Returns the input's, kernel's and output's labels, or raises ValueError."""
    if "..." in equation:
        raise ValueError(f"EinsumDense does not take an ellipsis: equation {equation!r}")
    if "->" not in equation or equation.count(",") != 1:
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form "
                         "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    operands, output = equation.split("->")
    inputs, kernel = operands.split(",")
    return inputs.strip(), kernel.strip(), output.strip()


class EinsumDense(Layer):
    """``activation(einsum(equation, inputs, kernel) + bias)``. The kernel's shape follows
    from the equation, the input's shape and ``output_shape``; ``bias_axes`` (labels of the
    output) shape the bias as Keras's. Raises ValueError, with Keras's messages, for a label
    of the kernel or bias that neither the input nor the output gives a size."""

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.equation = equation
        self._input_labels, self._kernel_labels, self._output_labels = _split(equation)
        if isinstance(output_shape, int):
            output_shape = (output_shape,)
        self.partial_output_shape = tuple(output_shape)
        self.activation = activations.get(activation)
        self.bias_axes = bias_axes
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel = None
        self.bias = None

    def _full_output_shape(self, input_shape):
        given, out = self.partial_output_shape, self._output_labels
        elided = len(out) - len(given)
        if elided < 0:
            raise ValueError(f"Output shape {list(given)} has more dimensions than the "
                             f"equation's output '{out}'")
        shape = [input_shape[self._input_labels.index(c)] if c in self._input_labels else None
                 for c in out[:elided]]
        for c, size in zip(out[elided:], given):
            if size is None and c in self._input_labels:
                size = input_shape[self._input_labels.index(c)]
            shape.append(size)
        return tuple(shape)

    def build(self, input_shape):
        if len(input_shape) != len(self._input_labels):
            raise ValueError(f"Input of rank {len(input_shape)} does not match the equation's "
                             f"input '{self._input_labels}' ({self.equation})")
        full = self._full_output_shape(input_shape)
        kernel_shape = []
        for c in self._kernel_labels:
            if c in self._input_labels:
                kernel_shape.append(input_shape[self._input_labels.index(c)])
            elif c in self._output_labels:
                kernel_shape.append(full[self._output_labels.index(c)])
            else:
                raise ValueError(f"Weight dimension '{c}' did not have a match in either the "
                                 f"input spec '{self._input_labels}' or the output spec "
                                 f"'{self._output_labels}'. For this layer, the weight must "
                                 "be fully specified.")
        self.kernel = self.add_weight("kernel", kernel_shape, self.kernel_initializer,
                                      regularizer=self.kernel_regularizer)
        if self.bias_axes:
            for c in self.bias_axes:
                if c not in self._output_labels:
                    raise ValueError(f"Bias dimension '{c}' was requested, but is not part of "
                                     f"the output spec '{self._output_labels}'")
            first = min(self._output_labels.index(c) for c in self.bias_axes)
            bias_shape = [full[i] if c in self.bias_axes else 1
                          for i, c in enumerate(self._output_labels) if i >= first]
            self.bias = self.add_weight("bias", bias_shape, self.bias_initializer,
                                        regularizer=self.bias_regularizer)

    def call(self, inputs):
        outputs = einsum(self.equation, inputs, self.kernel)
        if self.bias is not None:
            outputs = outputs + self.bias
        return self.activation(outputs)

    def compute_output_shape(self, input_shape):
        return self._full_output_shape(input_shape)

    def get_config(self):
        return {**super().get_config(), "equation": self.equation,
                "output_shape": list(self.partial_output_shape), "bias_axes": self.bias_axes}
