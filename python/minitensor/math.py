"""Element-wise math (tf.math): every element-wise op under its tf.math name, and the
reductions composed of ops (reduce_logsumexp, l2_normalize)."""

from ._composite_reductions import l2_normalize, reduce_logsumexp
from ._division import divide, truediv
from ._index_ops import argmax, argmin
from ._minitensor import unsorted_segment_sum
from ._minitensor import (
    abs, add, equal, erf, exp, floor, floordiv, floormod, greater, greater_equal, less,
    less_equal, log, log1p, logical_and, logical_not, logical_or, maximum, minimum, multiply,
    negative, not_equal, pow, reduce_all, reduce_any, reduce_max, reduce_mean, reduce_min,
    reduce_prod, reduce_sum, round, rsqrt, sigmoid, sign, sqrt, square, squared_difference,
    subtract, tanh)
from .nn import softplus

__all__ = [
    "abs", "add", "argmax", "argmin", "divide", "equal", "erf", "exp", "floor",
    "floordiv", "floormod", "greater", "greater_equal", "l2_normalize", "less",
    "less_equal", "log", "log1p", "logical_and", "logical_not", "logical_or", "maximum",
    "minimum", "multiply", "negative", "not_equal", "pow", "reduce_all", "reduce_any",
    "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod",
    "reduce_sum", "round", "rsqrt", "sigmoid", "sign", "softplus", "sqrt", "square",
    "squared_difference", "subtract", "tanh", "truediv", "unsorted_segment_sum"]
