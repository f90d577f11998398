"""Input and InputLayer (tf.keras.Input): where a functional model starts."""

from ..keras_tensor import KerasTensor, Node
from .layer import Layer

__all__ = ["Input", "InputLayer"]


class InputLayer(Layer):
    """The layer that makes a model's input KerasTensor, of shape (batch_size,) + shape."""

    def __init__(self, shape=None, batch_size=None, dtype=None, name=None, **kwargs):
        if shape is None:
            raise ValueError("You must pass a `shape` argument.")
        super().__init__(name=name, dtype=dtype, **kwargs)
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.batch_shape = (batch_size,) + shape
        self.output = KerasTensor(self.batch_shape, self.dtype, name=self.name)
        self.output.node = Node(self, None, self.output)
        self._output_shape = self.batch_shape
        self.built = True

    def call(self, inputs):
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape


def Input(shape=None, batch_size=None, dtype=None, name=None):  # noqa: N802 (Keras's name)
    """Returns a KerasTensor of shape (batch_size,) + shape to define a model on; ValueError
    without ``shape``."""
    return InputLayer(shape=shape, batch_size=batch_size, dtype=dtype, name=name).output
