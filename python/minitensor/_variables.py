"""minitensor.Variable: tf.Variable's Python face over the runtime's variables.

    v = mt.Variable([1.0, 2.0], name="v")   # VarHandleOp, AssignVariableOp on its device
    v.assign_add([1.0, 1.0])                # in place, on v's device whatever the scope
    mt.matmul(x, v), v * 2, np.asarray(v)   # a variable reads as its value (ReadVariableOp)
"""

import numpy as _np

from . import _host_reads, _minitensor as _mt
from ._constant_op import convert_to_tensor


class Variable(_mt._Variable):
    """A mutable tensor on one device (tf.Variable): trainable variables read while a
    GradientTape records are watched by it; optimizers update them in place."""

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        if callable(initial_value):
            initial_value = initial_value()
        value = initial_value.read_value() if isinstance(initial_value, _mt._Variable) else \
            convert_to_tensor(initial_value, dtype)
        super().__init__(value, bool(trainable), name or "Variable")

    @property
    def name(self):
        return self._name + ":0"

    def value(self):
        return self.read_value()

    def numpy(self):
        return self.read_value().numpy()

    def __array__(self, dtype=None, copy=None):
        array = self.read_value().numpy()
        return array if dtype is None else array.astype(dtype, copy=False)

    def _converted(self, value):
        if isinstance(value, _mt._Variable):
            return value.read_value()
        return convert_to_tensor(value, self.dtype)

    def assign(self, value, use_locking=None, name=None, read_value=True):
        self._assign(self._converted(value))
        return self

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        self._assign_add(self._converted(delta))
        return self

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        self._assign_sub(self._converted(delta))
        return self

    def __repr__(self):
        with _host_reads.reading():  # printing at a trace shows the trace's value
            values = self.numpy()
        return (f"<mt.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
                f"numpy={_np.array2string(values, separator=', ')}>")

    def __len__(self):
        return len(self.read_value())

    def __iter__(self):
        return iter(self.read_value())

    def __getitem__(self, key):
        return _mt._variable_value(self)[key]  # cast inside a mixed-precision layer's call

    def __bool__(self):
        return bool(self.read_value())

    def __float__(self):
        return float(self.read_value())

    def __int__(self):
        return int(self.read_value())

    def __dlpack__(self, *args, **kwargs):
        return self.read_value().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.read_value().__dlpack_device__()

    __hash__ = object.__hash__  # a variable is one object, unlike a tensor value

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def T(self):  # noqa: N802
        return _mt._variable_value(self).T


def _forward(name):
    # A variable in an expression reads as an op's argument does: as the autocast dtype
    # inside a mixed-precision layer's call (Note [Autocast]), else as its value.
    def method(self, *args):
        args = [_mt._variable_value(a) if isinstance(a, _mt._Variable) else a for a in args]
        return getattr(_mt._variable_value(self), name)(*args)
    method.__name__ = name
    return method


for _name in ["__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__pow__", "__rpow__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__rmod__", "__matmul__", "__rmatmul__", "__neg__",
              "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__or__",
              "__invert__"]:
    setattr(Variable, _name, _forward(_name))
