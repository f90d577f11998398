"""Symbolic tensors: what ``Input`` and a layer called on one return, so that a functional
``Model`` can record the graph of layer calls from its inputs to its outputs.

A KerasTensor holds a shape (None for the batch dimension) and a dtype, and the ``Node``
that made it: the layer and the KerasTensors it was called on (none for an input).
"""

__all__ = ["KerasTensor", "Node", "is_symbolic"]


class Node:
    """One call of ``layer`` on ``inputs`` (a KerasTensor or a list of them) that gave
    ``output``."""

    def __init__(self, layer, inputs, output, kwargs=None):
        self.layer = layer
        self.inputs = inputs
        self.output = output
        self.kwargs = kwargs or {}  # the call's other arguments (not tensors), passed again

    @property
    def parents(self):
        """The KerasTensors this call read, as a list."""
        if self.inputs is None:
            return []
        return list(self.inputs) if isinstance(self.inputs, (list, tuple)) else [self.inputs]


class KerasTensor:
    """A placeholder for a tensor of ``shape`` and ``dtype`` in a model being defined."""

    def __init__(self, shape, dtype="float32", name=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtype
        self.name = name or "keras_tensor"
        self.node = None

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __array__(self, *args, **kwargs):
        raise TypeError("A KerasTensor is symbolic: it has no value until the model runs. "
                        "Call the model on arrays or tensors instead.")


def is_symbolic(inputs):
    """Returns whether ``inputs`` (a tensor, or a list or tuple of them) is symbolic."""
    if isinstance(inputs, (list, tuple)):
        return any(isinstance(i, KerasTensor) for i in inputs)
    return isinstance(inputs, KerasTensor)
