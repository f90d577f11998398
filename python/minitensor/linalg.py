"""Linear algebra (tf.linalg)."""

from ._clip_ops import global_norm
from ._converted_ops import matmul

__all__ = ["global_norm", "matmul"]
