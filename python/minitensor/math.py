"""Element-wise math (tf.math): every element-wise op under its tf.math name."""

from ._minitensor import (
    abs, add, divide, exp, floor, floordiv, floormod, log, log1p, logical_and, logical_not,
    logical_or, maximum, minimum, multiply, negative, pow, reduce_max, reduce_mean, reduce_sum,
    round, rsqrt, sigmoid, sign, sqrt, square, squared_difference, subtract, tanh)

__all__ = [
    "abs", "add", "divide", "exp", "floor", "floordiv", "floormod", "log", "log1p",
    "logical_and", "logical_not", "logical_or", "maximum", "minimum", "multiply", "negative",
    "pow", "reduce_max", "reduce_mean", "reduce_sum", "round", "rsqrt", "sigmoid", "sign",
    "sqrt", "square", "squared_difference", "subtract", "tanh"]
