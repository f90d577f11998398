"""mt.function's ``input_signature``: the TensorSpecs every call must match (tf.function's).

    @mt.function(input_signature=[mt.TensorSpec([None], mt.float32)])
    def f(x):
        return x * 2.0

    f(mt.constant([1.0, 2.0]))   # a list, an array or a number is converted first
    f(mt.constant([1, 2]))       # TypeError: Binding inputs to mt.function failed ...

A signature is a list or tuple with one entry per parameter of the function, each a
TensorSpec or a list or tuple of them for a parameter that takes such a structure. Each
call binds its arguments to the parameters, converts each value to a tensor of the spec's
dtype, and raises TypeError (TensorFlow's message) when a tensor's dtype or shape does not
fit. A dimension None accepts any size: the function still traces once per concrete shape
(the recording's kernels are for one shape), within the function's bound on traces.
"""

import inspect

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from .data.tensor_spec import TensorSpec

__all__ = ["InputSignature", "check"]


def _specs(signature):
    if isinstance(signature, TensorSpec):
        return [signature]
    if isinstance(signature, (list, tuple)):
        return [s for item in signature for s in _specs(item)]
    return [signature]


def check(signature):
    """Raises TypeError, as TensorFlow, unless ``signature`` is a list or tuple of
    TensorSpecs (nested in lists and tuples)."""
    if not isinstance(signature, (list, tuple)):
        raise TypeError("input_signature must be either a tuple or a list, got "
                        f"{type(signature)}.")
    bad = [s for s in _specs(signature) if not isinstance(s, TensorSpec)]
    if bad:
        raise TypeError("input_signature must be a possibly nested sequence of TensorSpec "
                        f"objects, got invalid args {bad} with types "
                        f"{[type(b) for b in bad]}.")


class InputSignature:
    """A checked input_signature matched to the parameters of ``python_function`` (a
    method's bound function: its instance is no parameter)."""

    def __init__(self, python_function, signature):
        check(signature)
        self._specs = list(signature)
        self._signature = inspect.signature(python_function)
        params = [p for p in self._signature.parameters.values() if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        if len(self._specs) > len(params):
            raise TypeError(f"input_signature contains {len(self._specs) - len(params)} "
                            "extra type constraints.")
        for p in params[len(self._specs):]:
            if p.default is inspect.Parameter.empty:
                raise TypeError(f"input_signature missing type constraint for {p.name}")
        self._names = [p.name for p in params[:len(self._specs)]]

    def __repr__(self):
        return "(" + ", ".join(f"{n}: {s!r}" for n, s in zip(self._names, self._specs)) + ")"

    def bind(self, args, kwargs):
        """Returns the call's arguments as tensors (positional, one per spec); TypeError
        when they do not bind to the parameters or do not fit the specs."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as error:
            raise self._error(str(error), args, kwargs) from None
        if set(bound.arguments) - set(self._names):
            extra = next(n for n in bound.arguments if n not in self._names)
            raise self._error(f"got an unexpected argument '{extra}'", args, kwargs)
        return [self._convert(bound.arguments[name], spec, args, kwargs)
                for name, spec in zip(self._names, self._specs)]

    def _convert(self, value, spec, args, kwargs):
        if isinstance(spec, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(spec):
                raise self._error(f"Can not cast {value!r} to {spec!r}", args, kwargs)
            return type(spec)(self._convert(v, s, args, kwargs) for v, s in zip(value, spec))
        if not isinstance(value, (_mt.Tensor, _mt._Variable)):
            try:
                value = convert_to_tensor(value, spec.dtype)
            except (TypeError, ValueError):
                value = convert_to_tensor(value)
        tensor = convert_to_tensor(value)
        if not spec.is_compatible_with(tensor):
            got = TensorSpec(tensor.shape, tensor.dtype)
            raise self._error(f"Can not cast {got!r} to {spec!r}", args, kwargs)
        return tensor

    def _error(self, why, args, kwargs):
        return TypeError(f"Binding inputs to mt.function failed due to `{why}`. Received "
                         f"args: {args!r} and kwargs: {kwargs!r} for signature: {self!r}.")
