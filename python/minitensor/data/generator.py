"""Dataset.from_generator: the elements a Python generator yields, converted to the dtypes
and checked against the shapes of an ``output_signature`` (a structure of TensorSpecs), as
tf.data does. The generator is called again at each iteration.

    def rows():
        for i in range(3):
            yield i, [1.0] * i
    ds = mt.data.Dataset.from_generator(rows, output_signature=(
        mt.TensorSpec((), mt.int32), mt.TensorSpec((None,), mt.float32)))
"""

import numpy as _np

from .. import errors as _errors
from . import structure as _structure
from .dataset import Dataset, UNKNOWN_CARDINALITY
from .tensor_spec import TensorSpec
from .._constant_op import constant
from .._dtypes import bfloat16

__all__ = ["GeneratorDataset"]


def _signature(output_types, output_shapes, output_signature):
    """Returns the structure of TensorSpecs from either form of from_generator's arguments."""
    if output_signature is not None:
        if output_types is not None:
            raise TypeError("The `output_types` argument can not be used together with the "
                            "`output_signature` argument.")
        if output_shapes is not None:
            raise TypeError("The `output_shapes` argument can not be used together with the "
                            "`output_signature` argument.")
        for spec in _structure.flatten(output_signature):
            if not isinstance(spec, TensorSpec):
                raise TypeError("`output_signature` must contain objects that are subclass of "
                                f"`tf.TypeSpec` but found {type(spec)} which is not.")
        return output_signature
    if output_types is None:
        raise TypeError("To specify the output signature you need to provide either the "
                        "`output_signature` argument or the `output_types` argument.")
    types = _structure.flatten(output_types)
    shapes = ([None] * len(types) if output_shapes is None
              else _structure.flatten_up_to(output_types, output_shapes))
    return _structure.pack_like(output_types, [TensorSpec(shape, dtype)
                                               for dtype, shape in zip(types, shapes)])


def _fail(message):
    raise _errors.InvalidArgumentError(None, None, f"TypeError: `generator` yielded {message}")


def _convert(value, spec):
    """Returns ``value`` as an array of ``spec``'s dtype (as NumPy converts it), checked
    against its shape."""
    wide = spec.dtype == bfloat16
    try:
        array = _np.asarray(value, dtype=_np.float32 if wide else spec.dtype.name)
    except (TypeError, ValueError):
        _fail("an element that could not be converted to the expected type. The expected "
              f"type was {spec.dtype.name}, but the yielded element was {value!r}.")
    if spec.shape is not None and (len(array.shape) != len(spec.shape) or any(
            want is not None and want != got for want, got in zip(spec.shape, array.shape))):
        _fail(f"an element of shape {tuple(array.shape)} where an element of shape "
              f"{tuple(spec.shape)} was expected.")
    return constant(array, bfloat16) if wide else array


class GeneratorDataset(Dataset):
    """The elements of ``generator(*args)``, converted to ``output_signature``."""

    # A Python generator's position cannot be read or replayed (Note [Iterator checkpoints]).
    _unsaveable_reason = ("Dataset.from_generator is stateful: the position of its Python "
                          "generator cannot be recorded")

    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("`generator` must be a Python callable.")
        self._generator = generator
        self._signature = _signature(output_types, output_shapes, output_signature)
        self._args = () if args is None else tuple(_np.asarray(a) for a in args)

    def _elements(self):
        specs = _structure.flatten(self._signature)
        for value in self._generator(*self._args):
            try:
                parts = _structure.flatten_up_to(self._signature, value)
            except ValueError:
                parts = None
            if parts is None or len(parts) != len(specs):
                _fail(f"an element that did not match the expected structure. The expected "
                      f"structure was {self._signature!r}, but the yielded element was "
                      f"{value!r}.")
            yield _structure.pack_like(self._signature,
                                       [_convert(v, s) for v, s in zip(parts, specs)])

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self._signature
