"""Linear algebra (tf.linalg)."""

from ._minitensor import matmul

__all__ = ["matmul"]
