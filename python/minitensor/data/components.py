"""A dataset's components as the pipeline holds them: NumPy arrays of minitensor's element
types, and their TensorSpecs."""

import numpy as _np

from .._conversion import to_array as _to_array
from .._dtypes import as_dtype
from .._minitensor import Tensor as _Tensor, _Variable
from .tensor_spec import TensorSpec

__all__ = ["spec_of", "to_numpy"]


def to_numpy(value):
    """Returns ``value`` (an mt tensor or variable, a NumPy array, a list or a scalar) as a
    NumPy array of minitensor's element types (Python floats become float32, as mt.constant
    makes them). Raises ValueError for a ragged list."""
    if isinstance(value, _Variable):
        value = value.read_value()
    if isinstance(value, _Tensor):
        return value.numpy()
    try:
        return _to_array(value, None)
    except ValueError:
        if isinstance(value, (list, tuple)):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") \
                from None
        raise


def spec_of(component):
    """Returns the TensorSpec of a component (a NumPy array or scalar, or an mt tensor)."""
    return TensorSpec(_np.shape(component), as_dtype(component.dtype))
