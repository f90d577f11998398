"""Linear algebra (tf.linalg)."""

from ._converted_ops import matmul

__all__ = ["matmul"]
