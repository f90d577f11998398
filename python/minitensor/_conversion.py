"""How a Python value becomes the NumPy array behind a tensor, as TensorFlow converts it.

Without a dtype, Python floats become float32 and ints int32 (int64 when they do not fit);
NumPy arrays and scalars keep theirs. With a dtype, NumPy values are cast as NumPy casts
(TensorFlow does the same: ``np.array([1.5])`` to int32 is 1), while Python values (numbers,
nested lists and tuples) must fit the dtype's kind, else TypeError as TensorFlow's:

    mt.constant([1.5], dtype=mt.int32)   # TypeError: Cannot convert [1.5] to EagerTensor
                                         # of dtype int32 (any Python float, even 1.0)
    mt.constant([1], dtype=mt.bool)      # TypeError (a number is no bool)
    mt.constant([True], dtype=mt.int32)  # [1]: a bool is a number
    mt.constant([2**31], dtype=mt.int32) # [-2147483648]: wraps as TensorFlow does
    mt.constant([2**63], dtype=mt.int64) # ValueError: out of int64's range
"""

import numpy as _np

__all__ = ["to_array"]

# The kinds of NumPy's inferred array each target kind accepts from Python values.
_ACCEPTS = {"b": "b", "i": "bi", "u": "bi", "f": "bif", "c": "bifc"}
_SCALAR_KINDS = {bool: "b", int: "i", float: "f"}
_TARGETS = {}  # DType -> NumPy dtype


def _target(dtype):
    target = _TARGETS.get(dtype)
    if target is None:
        target = _TARGETS[dtype] = _np.dtype(dtype.as_numpy_dtype)
    return target


def to_array(value, dtype):
    """Returns ``value`` as a NumPy array of minitensor's element types, of ``dtype`` (a
    DType) when given. Raises TypeError for a Python value of another kind than ``dtype``
    and ValueError for Python ints outside int64 (naming the int) or ragged nesting."""
    if isinstance(value, (_np.ndarray, _np.generic)):
        return value if dtype is None else _np.asarray(value, dtype=_target(dtype))
    kind = _SCALAR_KINDS.get(type(value))
    if kind is not None and dtype is not None and (kind != "i" or -2**63 <= value < 2**63):
        return _scalar(value, kind, dtype)  # the common case, without NumPy's inference
    array = _inferred(value)
    if dtype is None:
        if array.dtype == _np.float64:
            return array.astype(_np.float32)
        if array.dtype.kind == "i":
            fits = array.size == 0 or (array.min() >= -2**31 and array.max() < 2**31)
            return array.astype(_np.int32 if fits else _np.int64)
        return array
    target = _target(dtype)
    if array.size and array.dtype.kind not in _ACCEPTS.get(target.kind, ""):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if target.kind == "i" and array.dtype.kind == "i":
        return array.astype(_np.int64).astype(target)  # wraps, as TensorFlow's
    with _np.errstate(over="ignore"):  # 1e40 to float32 is inf, quietly as TensorFlow's
        return array.astype(target)


def _scalar(value, kind, dtype):
    """A Python bool, int (within int64) or float as a 0-d array of ``dtype``."""
    target = _target(dtype)
    if kind not in _ACCEPTS.get(target.kind, ""):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    if kind == "f" and target.kind == "f" and -60000.0 < value < 60000.0:
        return _np.asarray(value, target)  # fits every float type
    if kind == "i" and target.kind == "i":
        return _np.asarray(value, _np.int64).astype(target)  # wraps, as TensorFlow's
    with _np.errstate(over="ignore"):
        return _np.asarray(value).astype(target)


def _inferred(value):
    """NumPy's array of a Python value, ints checked against int64's range first."""
    try:
        array = _np.asarray(value)
    except ValueError as error:
        if "inhomogeneous" in str(error) or "sequence" in str(error):
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") \
                from None
        raise
    # NumPy makes Python ints past int64 uint64, object or (with negative ones) float64.
    if array.dtype.kind == "u" or array.dtype == object or (
            array.dtype == _np.float64 and array.size and _np.abs(array).max() >= 2**63):
        for item in _np.asarray(value, dtype=object).flat:
            if isinstance(item, (int, _np.integer)) and not -2**63 <= int(item) < 2**63:
                raise ValueError(f"Can't convert Python int {int(item)} to Tensor: it is out "
                                 "of range for int64 [-2**63, 2**63 - 1]")
    return array
