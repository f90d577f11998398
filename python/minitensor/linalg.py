"""Linear algebra (tf.linalg)."""

from ._op_table import exports as _exports

globals().update(_exports("linalg"))  # band_part

from ._clip_ops import global_norm  # noqa: E402
from ._composite_reductions import l2_normalize, norm  # noqa: E402
from ._converted_ops import matmul  # noqa: E402
from ._einsum import einsum  # noqa: E402

__all__ = ["band_part", "einsum", "global_norm", "l2_normalize", "matmul", "norm"]
