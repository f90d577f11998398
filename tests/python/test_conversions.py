"""TensorFlow's conversions: constant refuses a Python value of another kind than the
dtype asked for (and a tensor of another dtype) and keeps what TensorFlow converts."""

import numpy as np
import pytest

import minitensor as mt


@pytest.mark.parametrize("value, dtype, text", [
    ([1.5], mt.int32, "[1.5]"), (1.5, mt.int32, "1.5"), ([1.0], mt.int32, "[1.0]"),
    ([1.0, 2.5], mt.int64, "[1.0, 2.5]"), ((1.5,), mt.int32, "(1.5,)"),
    ([[1.5], [2]], mt.int32, "[[1.5], [2]]"), ([float("nan")], mt.int32, "[nan]"),
    ([1], mt.bool, "[1]"), ([0], mt.bool, "[0]"), ([1.0], mt.bool, "[1.0]"), (1, mt.bool, "1"),
    (["a"], mt.int32, "['a']"), (["a"], mt.float32, "['a']")])
def test_a_python_value_of_another_kind_is_a_type_error(value, dtype, text):
    with pytest.raises(TypeError) as info:
        mt.constant(value, dtype=dtype)
    assert str(info.value) == f"Cannot convert {text} to EagerTensor of dtype {dtype.name}"
    with pytest.raises(TypeError, match="Cannot convert"):
        mt.convert_to_tensor(value, dtype=dtype)


@pytest.mark.parametrize("value, dtype, want", [
    ([True], mt.int32, [1]), ([True], mt.float32, [1.0]), ([1], mt.float32, [1.0]),
    ([1, True], mt.int32, [1, 1]), ([2**31], mt.int32, [-2**31]),
    ([-2**31 - 1], mt.int32, [2**31 - 1]), ([2**31], mt.int64, [2**31]),
    ([1e40], mt.float32, [np.inf]), ([], mt.int32, []),
    (np.array([1.5]), mt.int32, [1]), (np.array([1.5], np.float32), mt.int32, [1]),
    (np.array([1]), mt.bool, [True]), (np.float32(1.5), mt.int32, 1),
    (np.array([True]), mt.int32, [1])])
def test_what_tensorflow_converts_still_converts(value, dtype, want):
    t = mt.constant(value, dtype=dtype)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), want)


def test_an_int_past_int64_to_a_dtype_is_a_value_error():
    for value, dtype in [([2**63], mt.int64), (-2**63 - 1, mt.int64), (2**64, mt.int32)]:
        with pytest.raises(ValueError, match="out of range for int64"):
            mt.constant(value, dtype=dtype)


def test_a_ragged_list_is_tensorflows_value_error():
    with pytest.raises(ValueError) as info:
        mt.constant([[1, 2], [3]], dtype=mt.int32)
    assert str(info.value) == "Can't convert non-rectangular Python sequence to Tensor."


def test_a_tensor_of_another_dtype_is_a_type_error_but_a_variable_casts():
    with pytest.raises(TypeError) as info:
        mt.constant(mt.constant([1.5]), dtype=mt.int32)
    assert str(info.value) == "Expected tensor [1.5] with dtype mt.int32, but got dtype " \
        "mt.float32."
    t = mt.constant(mt.Variable([1.5]), dtype=mt.float64)
    assert t.dtype == mt.float64 and t.numpy().tolist() == [1.5]
