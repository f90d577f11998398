"""TensorSpec: the shape and dtype of a tensor (tf.TensorSpec), with None for a dimension
that varies (the batch dimension of a batch that may be partial) or for a shape of unknown
rank. Datasets describe their components with it; ``mt.function(input_signature=...)``
takes a list of them."""

from .._dtypes import as_dtype, float32

__all__ = ["TensorSpec"]


class TensorSpec:
    """Describes a tensor: ``shape`` (a tuple of ints and None, or None for any rank) and
    ``dtype`` (mt.DType, or anything mt.as_dtype takes; float32 by default)."""

    def __init__(self, shape, dtype=None, name=None):
        self.shape = None if shape is None else tuple(None if d is None else int(d)
                                                      for d in shape)
        self.dtype = float32 if dtype is None else as_dtype(dtype)
        self.name = name

    def is_compatible_with(self, tensor):
        """Whether ``tensor`` (a tensor or a TensorSpec) has this dtype and a shape that
        this shape allows (None matches any dimension, a None shape any shape)."""
        if tensor.dtype != self.dtype:
            return False
        if self.shape is None or tensor.shape is None:
            return True
        return len(tensor.shape) == len(self.shape) and all(
            want is None or got is None or want == got
            for want, got in zip(self.shape, tensor.shape))

    def __eq__(self, other):
        if not isinstance(other, TensorSpec):
            return NotImplemented
        return (self.shape, self.dtype, self.name) == (other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else self.shape
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"
