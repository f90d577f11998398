"""Element-wise math (tf.math): every element-wise op under its tf.math name, and the
reductions composed of ops (reduce_logsumexp, l2_normalize).

The rows of the op table (kernels/op_table.h) named ``math.*`` and the top-level rows of the
element-wise families come from the table (_op_table.py); the wrappers written in Python
replace their bindings below.
"""

from ._op_table import ELEMENTWISE as _ELEMENTWISE, exports as _exports

_rows = _exports("math", _ELEMENTWISE)
globals().update(_rows)

from ._composite_reductions import l2_normalize, reduce_logsumexp  # noqa: E402
from ._shape_args import (  # noqa: E402  (the reductions taking a tensor axis)
    reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum)
from ._division import divide, truediv  # noqa: E402  (Python wrappers of RealDiv)
from ._index_ops import argmax, argmin  # noqa: E402
from ._sort_ops import top_k  # noqa: E402  (the Python wrapper of TopKV2)
from .nn import softplus  # noqa: E402

__all__ = sorted({*_rows, "argmax", "argmin", "divide", "l2_normalize", "reduce_logsumexp",
                  "softplus", "top_k", "truediv"})
