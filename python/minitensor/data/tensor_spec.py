"""TensorSpec: the shape and dtype of a dataset component (tf.TensorSpec), with None for a
dimension that varies, as the batch dimension of a batch that may be partial."""

__all__ = ["TensorSpec"]


class TensorSpec:
    """Describes a tensor: ``shape`` (a tuple of ints and None) and ``dtype`` (mt.DType)."""

    def __init__(self, shape, dtype, name=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = dtype
        self.name = name

    def __eq__(self, other):
        if not isinstance(other, TensorSpec):
            return NotImplemented
        return (self.shape, self.dtype, self.name) == (other.shape, other.dtype, other.name)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.name))

    def __repr__(self):
        return f"TensorSpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"
