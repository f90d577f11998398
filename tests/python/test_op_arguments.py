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


def test_as_dtype_takes_tensorflows_names_and_python_types():
    # tf.as_dtype's answers in TensorFlow 2.21: "float" is float32, "double" float64,
    # Python's float float32; int, NumPy's codes ("f4") and other words are a TypeError.
    for name, want in [("float", mt.float32), ("double", mt.float64), ("half", mt.float16),
                       ("bfloat16", mt.bfloat16), (float, mt.float32), (bool, mt.bool),
                       (np.int64, mt.int64), (np.dtype("float16"), mt.float16)]:
        assert mt.as_dtype(name) is want, name
    assert mt.float32 == "float" and mt.float64 == "double" and mt.float32 == float
    for value in ["int", "f4", "<f4", "long", "str", "nope", int, object]:
        with pytest.raises(TypeError, match=r"^Cannot convert the argument `type_value`: "):
            mt.as_dtype(value)
        assert mt.float32 != value and mt.int64 != value


def test_a_dtype_has_tensorflows_properties():
    assert [d.is_floating for d in (mt.float32, mt.bfloat16, mt.int32, mt.bool)] == \
        [True, True, False, False]
    assert [d.is_integer for d in (mt.int64, mt.float16, mt.bool)] == [True, False, False]
    assert mt.bool.is_bool and not mt.int32.is_bool and not mt.int32.is_unsigned
    assert not mt.float64.is_complex and not mt.float64.is_quantized
    assert mt.float16.base_dtype is mt.float16 and mt.int32.real_dtype is mt.int32
    assert (mt.float32.min, mt.float32.max) == (np.finfo(np.float32).min, np.finfo(np.float32).max)
    assert (mt.int64.min, mt.int32.max) == (-2 ** 63, 2 ** 31 - 1)
    assert mt.float16.min == -65504.0 and mt.bfloat16.max == 3.3895313892515355e38
    assert mt.float32.is_compatible_with("float32") and not mt.float32.is_compatible_with(mt.int32)
    with pytest.raises(TypeError, match="^Cannot find minimum value of mt.bool with type mt.bool"):
        mt.bool.min
    # str and repr as tf.DType's: "<dtype: 'float32'>" printed, tf.float32 -> mt.float32.
    assert str(mt.float32) == "<dtype: 'float32'>" and f"{mt.int64}" == "<dtype: 'int64'>"
    assert repr(mt.bool) == "mt.bool" and mt.bfloat16.name == "bfloat16"


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
