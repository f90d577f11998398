"""True division as TensorFlow's: ``x / y``, ``mt.divide``, ``mt.math.truediv``.

Integer tensors divide as float64, as TensorFlow casts int32 and int64 before RealDiv:

    mt.constant([3]) / mt.constant([2])     # float64 [1.5]
    mt.constant([3]) / 2                    # float64 [1.5]: 2 takes the tensor's dtype
    mt.constant([3]) / mt.constant([2.0])   # TypeError: `x` and `y` must have the same dtype

Floating tensors divide in their own dtype (RealDiv); ``//`` stays FloorDiv.
"""

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from ._converted_ops import cast

__all__ = ["divide", "truediv"]

Tensor = _mt.Tensor
_real_div = Tensor.__truediv__          # the bindings: RealDiv, converting a Python operand
_real_rdiv = Tensor.__rtruediv__
_INTEGERS = (_mt.DType.int32, _mt.DType.int64)
_FLOATING = (_mt.DType.float32, _mt.DType.float64, _mt.DType.float16, _mt.DType.bfloat16)


def _operand(value, like):
    """``value`` as a tensor, a Python value taking the dtype of ``like`` (a tensor) when
    it can (TensorFlow's conversion), else its own."""
    if isinstance(value, (Tensor, _mt._Variable)):
        return convert_to_tensor(value)
    if like is None:
        return convert_to_tensor(value)
    try:
        return convert_to_tensor(value, like.dtype)
    except (TypeError, ValueError):
        return convert_to_tensor(value)


def truediv(x, y, name=None):
    """Returns x / y element-wise (broadcasting); int32 and int64 operands are cast to
    float64 first. Raises TypeError for operands of different dtypes and for bool."""
    del name
    x = _operand(x, y if isinstance(y, (Tensor, _mt._Variable)) else None)
    y = _operand(y, x)
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != "
                        f"{y.dtype!r}.")
    if x.dtype in _INTEGERS:
        x, y = cast(x, _mt.DType.float64), cast(y, _mt.DType.float64)
    elif x.dtype not in _FLOATING:
        raise TypeError(f"Invalid dtype {x.dtype!r} in __truediv__. Expected one of "
                        "{mt.int32, mt.int64, mt.bfloat16, mt.float16, mt.float32, "
                        "mt.float64}.")
    return _real_div(x, y)


divide = truediv  # tf.math.divide is true division too


def _truediv(self, other):
    if self.dtype in _FLOATING and (isinstance(other, float) or (
            isinstance(other, Tensor) and other.dtype == self.dtype)):
        return _real_div(self, other)   # the common case, without the Python conversion
    return truediv(self, other)


def _rtruediv(self, other):
    if self.dtype in _FLOATING and isinstance(other, float):
        return _real_rdiv(self, other)
    return truediv(other, self)


Tensor.__truediv__ = _truediv
Tensor.__rtruediv__ = _rtruediv
