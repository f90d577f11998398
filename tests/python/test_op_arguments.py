"""Every op takes tensors, variables, NumPy arrays, lists and Python numbers alike, and
dtypes as DTypes, names or NumPy types; a DType equals its name, as TensorFlow's."""

import numpy as np
import pytest

import minitensor as mt


def test_a_dtype_equals_its_name_and_numpy_type():
    assert mt.float32 == "float32" and "float32" == mt.float32
    assert not (mt.float32 != "float32") and mt.float32 != "float64"
    assert mt.float32 == np.float32 and mt.int64 == np.dtype("int64")
    assert mt.float32 != "nope" and mt.float32 != None  # noqa: E711
    assert "float32" in [mt.float32] and mt.float32 in ["float32"]
    assert hash(mt.float32) == hash("float32") and {mt.int32: 1}[mt.int32] == 1
    assert mt.float32 == mt.float32 and mt.float32 != mt.float64


def _forms(values, dtype=np.float32):
    """The same values as a list, a NumPy array, a tensor and a variable."""
    array = np.asarray(values, dtype)
    return [values, array, mt.constant(array), mt.Variable(array)]


@pytest.mark.parametrize("form", range(4))
def test_matmul_add_n_cast_identity_take_every_form(form):
    a = _forms([[1.0, 2.0]])[form]
    b = _forms([[3.0], [4.0]])[form]
    assert mt.matmul(a, b).numpy().tolist() == [[11.0]]
    assert mt.linalg.matmul(a, b, transpose_a=True, transpose_b=True).shape == (2, 2)
    assert mt.add_n([a, a, _forms([[1.0, 1.0]])[3 - form]]).numpy().tolist() == [[3.0, 5.0]]
    assert mt.identity(a).numpy().tolist() == [[1.0, 2.0]]
    cast = mt.cast(_forms([1.5, -2.5])[form], "int32")
    assert cast.dtype == mt.int32 and cast.numpy().tolist() == [1, -2]
    assert mt.cast(a, np.float64).dtype == mt.float64


def test_python_values_beside_a_tensor_take_its_dtype():
    assert mt.matmul(mt.constant([[1.0]], mt.float64), [[2]]).dtype == mt.float64
    assert mt.add_n([[1], mt.constant([2.0])]).numpy().tolist() == [3.0]
    assert mt.cast(3, mt.float32).numpy() == 3.0 and mt.identity(2.5).dtype == mt.float32


def test_dtype_names_everywhere():
    assert mt.one_hot([0, 1], 2, dtype="int32").dtype == mt.int32
    assert mt.zeros_like([1.5], dtype="int32").numpy().tolist() == [0]
    assert mt.ones_like(mt.constant([1.5]), dtype="float64").dtype == mt.float64
    assert mt.ones_like([1.5]).dtype == mt.float32
    assert mt.zeros([2], "int64").dtype == mt.int64 and mt.Variable([1], dtype="float32")


@pytest.mark.parametrize("call, error, message", [
    (lambda: mt.cast(mt.constant([1.0]), "nope"), TypeError,
     "Cannot convert the argument `type_value`: 'nope' to a minitensor DType."),
    (lambda: mt.add_n([]), ValueError, "Inputs must be an iterable of at least one "
     "Tensor/IndexedSlices with the same dtype and shape."),
    (lambda: mt.matmul([[1.0]], [[1.0]], output_type=mt.float64), NotImplementedError,
     "[MatMul] output_type float64 differs from the operands' dtype float32")])
def test_argument_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert str(info.value) == message


def test_fill_keeps_a_tensor_values_dtype_as_tensorflow():
    filled = mt.fill([2], mt.constant(3, mt.int64))
    assert filled.dtype == mt.int64 and filled.numpy().tolist() == [3, 3]
    assert mt.fill([2], mt.Variable(1.5)).numpy().tolist() == [1.5, 1.5]
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[Fill\] value must represent a scalar, got shape \[2\]$"):
        mt.fill([2], mt.constant([3, 4]))
