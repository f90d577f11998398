"""The layers that merge a list of inputs into one (tf.keras.layers.Add and Concatenate).

    total = mt.keras.layers.Add()([x1, x2])                  # element-wise, broadcasting
    joined = mt.keras.layers.Concatenate(axis=-1)([x1, x2])
"""

from ... import _minitensor as _mt
from .layer import Layer

__all__ = ["Add", "Concatenate"]


def _broadcast_shape(first, second):
    """Returns the shape two example shapes broadcast to (None where unknown), as Keras
    checks its merge layers' inputs; ValueError, with Keras's message, if they do not."""
    if len(first) < len(second):
        first, second = second, first
    padded = (1,) * (len(first) - len(second)) + tuple(second)
    shape = []
    for i, j in zip(first, padded):
        if i is None or j is None:
            shape.append(None)
        elif i == 1 or j == 1 or i == j:
            shape.append(j if i == 1 else i)
        else:
            raise ValueError("Inputs have incompatible shapes. Received shapes "
                             f"{tuple(first)} and {tuple(second)}")
    return tuple(shape)


class Add(Layer):
    """The element-wise sum of a list of inputs (at least one), which broadcast as NumPy
    arrays do. Raises ValueError, with Keras's messages, for an input that is not a list
    and for shapes that do not broadcast."""

    def _check_input(self, shape):
        if not isinstance(shape, list):
            raise ValueError("A merge layer should be called on a list of inputs. Received: "
                             f"input_shape={shape} (not a list of shapes)")
        if not shape:
            raise ValueError("A merge layer should be called on a list of at least 1 input. "
                             "Got 0 inputs. Full input_shape received: []")
        self.compute_output_shape(shape)

    def call(self, inputs):
        total = inputs[0]
        for value in inputs[1:]:
            total = total + value
        return total

    def compute_output_shape(self, input_shape):
        batch = [s[0] for s in input_shape if s and s[0] is not None]
        if len(set(batch)) > 1:
            raise ValueError("Cannot merge tensors with different batch sizes. Received "
                             f"tensors with shapes {input_shape}")
        shape = tuple(input_shape[0][1:])
        for other in input_shape[1:]:
            shape = _broadcast_shape(shape, tuple(other[1:]))
        return (batch[0] if batch else None,) + shape


class Concatenate(Layer):
    """Joins a list of inputs along ``axis`` (the last by default); every other dimension
    must agree. Raises ValueError, with Keras's messages, for an input that is not a
    list and for shapes that differ elsewhere than along ``axis``."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def _check_input(self, shape):
        if not isinstance(shape, list) or not shape:
            raise ValueError("A `Concatenate` layer should be called on a list of at least 1 "
                             f"input. Received: input_shape={shape}")
        self.compute_output_shape(shape)

    def call(self, inputs):
        return _mt.concat(list(inputs), self.axis)

    def compute_output_shape(self, input_shape):
        rank = len(input_shape[0])
        axis = self.axis % rank if rank else 0
        mismatch = ValueError(
            "A `Concatenate` layer requires inputs with matching shapes except for the "
            f"concatenation axis. Received: input_shape={input_shape}")
        if any(len(s) != rank for s in input_shape) or not -rank <= self.axis < rank:
            raise mismatch
        output = list(input_shape[0])
        for shape in input_shape[1:]:
            for i, (known, dim) in enumerate(zip(output, shape)):
                if i == axis:
                    output[i] = None if known is None or dim is None else known + dim
                elif known is None:
                    output[i] = dim
                elif dim is not None and dim != known:
                    raise mismatch
        return tuple(output)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis}
