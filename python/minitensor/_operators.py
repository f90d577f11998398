"""Tensor's comparison operators and truth value, as tf.Tensor has them:

    a == b, a != b    element-wise Equal / NotEqual; shapes that cannot broadcast give a
                      scalar False (True for !=) rather than an error, and None gives False
    a < b ...         Less, LessEqual, Greater, GreaterEqual (errors as the ops)
    hash(t)           TypeError: tensors compare element-wise, so use t.ref() as a key
"""

import numpy as _np

from . import _minitensor as _mt
from ._constant_op import constant, convert_to_tensor

Tensor = _mt.Tensor


def _other(self, other):
    if isinstance(other, Tensor):
        return other
    try:
        return convert_to_tensor(other, self.dtype)
    except (TypeError, ValueError) as error:
        raise TypeError(f"Cannot convert {other!r} to Tensor of dtype {self.dtype.name}") \
            from error


def _broadcastable(a, b):
    try:
        _np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


def _equality(op, unequal_shapes):
    def method(self, other):
        if other is None:
            return op is _mt.not_equal
        other = _other(self, other)
        if not _broadcastable(self, other):
            return constant(unequal_shapes)
        return op(self, other)
    return method


def _comparison(op):
    def method(self, other):
        return op(self, _other(self, other))
    return method


class _Reference:
    """A hashable reference to a tensor (tf.Tensor.ref()): equal only for the same tensor."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        return self._tensor

    def __hash__(self):
        return id(self._tensor)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._tensor is self._tensor


def _unhashable(self):
    raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")


Tensor.__eq__ = _equality(_mt.equal, False)
Tensor.__ne__ = _equality(_mt.not_equal, True)
Tensor.__lt__ = _comparison(_mt.less)
Tensor.__le__ = _comparison(_mt.less_equal)
Tensor.__gt__ = _comparison(_mt.greater)
Tensor.__ge__ = _comparison(_mt.greater_equal)
Tensor.__hash__ = _unhashable
Tensor.ref = lambda self: _Reference(self)
