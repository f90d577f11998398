"""Linear algebra (tf.linalg)."""

from ._clip_ops import global_norm
from ._composite_reductions import l2_normalize, norm
from ._converted_ops import matmul
from ._einsum import einsum

__all__ = ["einsum", "global_norm", "l2_normalize", "matmul", "norm"]
