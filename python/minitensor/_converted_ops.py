"""matmul, add_n, cast and identity taking their arguments as every other op does, and
one_hot, zeros_like and ones_like taking dtype names.

The bindings of the first four take tensors only; here they take what the element-wise ops
take: a tensor, a variable (its value), a NumPy array, a nested list or a Python number,
a Python value beside a tensor taking that tensor's dtype (the other ops' bindings,
``def_binary`` in python/src/tensor.cc, convert the same way). ``cast`` takes a dtype as a
DType, a name ("float64") or a NumPy type, as does every ``dtype`` argument here. Tensors
go straight to the binding.

    mt.matmul([[1.0, 2.0]], mt.ones([2, 1]))    # [[3.0]]
    mt.add_n([mt.Variable([1.0]), [2.0], np.array([3.0], np.float32)])
    mt.cast([1.5, 2.5], "int32")                # [1, 2]
"""

from . import _minitensor as _mt
from ._constant_op import convert_to_tensor
from ._dtypes import as_dtype

__all__ = ["add_n", "cast", "identity", "matmul", "one_hot", "ones_like", "zeros_like"]

Tensor = _mt.Tensor


def _tensor(value, like=None):
    """``value`` as a tensor; a Python value takes the dtype of ``like`` where it can."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _mt._Variable) or like is None:
        return convert_to_tensor(value)
    try:
        return convert_to_tensor(value, like.dtype)
    except (TypeError, ValueError):
        return convert_to_tensor(value)


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False,
           grad_b=False, name=None):
    """Returns a @ b (MatMul; BatchMatMulV2 above rank 2) after transposing or taking the
    adjoint of either; the sparsity and gradient hints are accepted and ignored. An
    ``output_type`` other than the operands' dtype raises NotImplementedError."""
    del a_is_sparse, b_is_sparse, grad_a, grad_b, name
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        a = _tensor(a, b if isinstance(b, (Tensor, _mt._Variable)) else None)
        b = _tensor(b, a)
    if output_type is not None:
        if as_dtype(output_type) != a.dtype:
            raise NotImplementedError(
                f"[MatMul] output_type {as_dtype(output_type).name} differs from the "
                f"operands' dtype {a.dtype.name}")
    return _mt.matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b)


def add_n(inputs, name=None):
    """Returns the element-wise sum of ``inputs`` (AddN), each converted as above with the
    dtype of the first tensor among them. Raises ValueError, as TensorFlow, for none."""
    del name
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if not inputs:
        raise ValueError("Inputs must be an iterable of at least one Tensor/IndexedSlices "
                         "with the same dtype and shape.")
    like = next((v for v in inputs if isinstance(v, (Tensor, _mt._Variable))), None)
    if like is not None:
        like = _tensor(like)
    return _mt.add_n([_tensor(v, like) for v in inputs])


def _dtype(dtype):
    """``dtype`` as a DType; TypeError, as TensorFlow's, for what names none."""
    if isinstance(dtype, _mt.DType) or dtype is None:
        return dtype
    try:
        return as_dtype(dtype)
    except TypeError:
        raise TypeError(f"Cannot convert the argument `type_value`: {dtype!r} to a "
                        "minitensor DType.") from None


def cast(x, dtype, name=None):
    """Returns ``x`` converted to ``dtype`` (Cast): a DType, a name or a NumPy type."""
    del name
    return _mt.cast(x if isinstance(x, Tensor) else _tensor(x), _dtype(dtype))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None,
            name=None):
    """Returns the one-hot encoding of ``indices`` (OneHot): ``on_value`` (1) at each index
    along a new ``axis`` (last) of size ``depth``, ``off_value`` (0) elsewhere."""
    del name
    return _mt.one_hot(indices, depth, on_value, off_value, axis, _dtype(dtype))


def zeros_like(input, dtype=None, name=None, layout=None):  # noqa: A002
    """Returns zeros of the shape of ``input``, of its dtype or ``dtype`` (ZerosLike)."""
    del name, layout
    zeros = _mt.zeros_like(input)
    dtype = _dtype(dtype)
    return zeros if dtype is None or dtype == zeros.dtype else _mt.cast(zeros, dtype)


def ones_like(input, dtype=None, name=None, layout=None):  # noqa: A002
    """Returns ones of the shape of ``input``, of its dtype or ``dtype`` (OnesLike)."""
    del name, layout
    ones = _mt.ones_like(input)
    dtype = _dtype(dtype)
    return ones if dtype is None or dtype == ones.dtype else _mt.cast(ones, dtype)


def identity(input, name=None):  # noqa: A002  (TensorFlow's name)
    """Returns a tensor with the value of ``input`` (Identity)."""
    del name
    return _mt.identity(input if isinstance(input, Tensor) else _tensor(input))
