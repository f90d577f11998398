"""Keras's mixed precision (tf.keras.mixed_precision): a dtype policy says in which dtype a
layer keeps its variables and in which it computes.

    mt.keras.mixed_precision.set_global_policy("mixed_bfloat16")
    model = mt.keras.Sequential([...])      # layers made now: float32 variables,
                                            # bfloat16 inputs, matmuls and activations

A layer made under a policy whose compute dtype differs from its variable dtype casts its
floating inputs to the compute dtype and, while its call runs, reads its floating
variables in it (Note [Autocast] in python/src/bindings.h: the cast is differentiated
back, so gradients and optimizer steps stay in float32). Normalisation layers compute in
float32 and return the compute dtype, losses and metrics take float32, as Keras's do.
"mixed_float16" needs loss scaling (Keras's LossScaleOptimizer), which minitensor lacks:
compile() refuses it rather than train with gradients that may underflow.
"""

import contextlib as _contextlib
import threading as _threading

from .. import _minitensor as _mt
from .._dtypes import as_dtype

__all__ = ["DTypePolicy", "Policy", "dtype_policy", "global_policy", "set_dtype_policy",
           "set_global_policy"]

_NAMES = {"float16": ("float16", "float16"), "bfloat16": ("bfloat16", "bfloat16"),
          "float32": ("float32", "float32"), "float64": ("float64", "float64"),
          "mixed_float16": ("float16", "float32"), "mixed_bfloat16": ("bfloat16", "float32")}


class DTypePolicy:
    """A layer's dtypes (keras.DTypePolicy): ``name`` is a dtype ("float32", "bfloat16",
    ...) or "mixed_float16" / "mixed_bfloat16" (variables float32, computation in the
    half type)."""

    def __init__(self, name="float32"):
        if isinstance(name, DTypePolicy):
            name = name.name
        if not isinstance(name, str):
            name = as_dtype(name).name
        if name in _NAMES:
            self._compute_dtype, self._variable_dtype = _NAMES[name]
        else:  # another dtype (int32, bool): both dtypes are it
            try:
                self._compute_dtype = self._variable_dtype = as_dtype(name).name
            except (TypeError, ValueError):
                raise ValueError(
                    f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid "
                    "policies include 'mixed_float16', 'mixed_bfloat16', and the name of any "
                    "float dtype such as 'float32'.") from None
            name = self._compute_dtype
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return self._compute_dtype

    @property
    def variable_dtype(self):
        return self._variable_dtype

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy  # tf.keras.mixed_precision.Policy

_global = DTypePolicy("float32")


def set_global_policy(policy):
    """Sets the policy of the layers made from now on (a DTypePolicy, a policy name, or
    None for "float32")."""
    global _global
    _global = DTypePolicy("float32" if policy is None else policy)


def global_policy():
    return _global


set_dtype_policy, dtype_policy = set_global_policy, global_policy  # Keras 3's names


def in_float32(value):
    """A tensor or variable in a 2-byte float (a mixed-precision model's output) as float32,
    as Keras's losses and metrics take predictions; anything else as it is."""
    if isinstance(value, (_mt.Tensor, _mt._Variable)) and \
            value.dtype in (_mt.DType.float16, _mt.DType.bfloat16):
        return _mt.cast(value, _mt.DType.float32)
    return value


def policy_of(dtype):
    """The policy a layer's ``dtype=`` argument names (None: the global one)."""
    return _global if dtype is None else DTypePolicy(dtype)


_thread = _threading.local()  # .dtype_name: the autocast dtype this thread set, or None
_UNCHANGED = _contextlib.nullcontext()


class _Autocast:
    def __init__(self, dtype_name):
        self._dtype_name = dtype_name

    def __enter__(self):
        self._before = getattr(_thread, "dtype_name", None)
        _thread.dtype_name = self._dtype_name
        _mt._set_autocast(None if self._dtype_name is None else as_dtype(self._dtype_name))

    def __exit__(self, *exc):
        _thread.dtype_name = self._before
        _mt._set_autocast(None if self._before is None else as_dtype(self._before))


def autocast(dtype_name):
    """Reads floating variables as ``dtype_name`` (None: as they are) while it is entered,
    on this thread. Entering the dtype already in force costs nothing: a float32 layer
    inside another float32 one (every layer without a mixed policy) touches no state."""
    if getattr(_thread, "dtype_name", None) == dtype_name:
        return _UNCHANGED
    return _Autocast(dtype_name)
