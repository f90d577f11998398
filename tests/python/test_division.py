"""True division as TensorFlow's: integer tensors divide as float64 through /, mt.divide,
mt.math.divide and mt.math.truediv; mixed dtypes are TypeErrors."""

import numpy as np
import pytest

import minitensor as mt


@pytest.mark.parametrize("dtype", [mt.int32, mt.int64])
def test_integer_true_division_is_float64(dtype):
    x, y = mt.constant([3, -7, 1], dtype), mt.constant([2, 2, 0], dtype)
    for got in [x / y, mt.divide(x, y), mt.math.divide(x, y), mt.math.truediv(x, y),
                mt.truediv(x, y), mt.Variable(x) / y]:
        assert got.dtype == mt.float64
        np.testing.assert_array_equal(got.numpy(), [1.5, -3.5, np.inf])
    assert (x / 2).dtype == mt.float64 and (x / 2).numpy().tolist() == [1.5, -3.5, 0.5]
    assert (3 / y).numpy().tolist()[:2] == [1.5, 1.5]
    assert mt.divide(3, 2).numpy() == 1.5 and mt.divide([3], [2]).dtype == mt.float64


def test_floating_division_keeps_its_dtype():
    x = mt.constant([3.0], mt.float32)
    assert (x / mt.constant([2.0])).dtype == mt.float32
    assert (x / 2).numpy().tolist() == [1.5] and (x / 2.0).dtype == mt.float32
    assert (6.0 / x).numpy().tolist() == [2.0] and mt.divide(x, 2).dtype == mt.float32


@pytest.mark.parametrize("x, y, message", [
    (mt.constant([3]), 2.5, "`x` and `y` must have the same dtype, got mt.int32 != mt.float32."),
    (mt.constant([3]), mt.constant([2], mt.int64),
     "`x` and `y` must have the same dtype, got mt.int32 != mt.int64."),
    (mt.constant([3.0]), mt.constant([2]),
     "`x` and `y` must have the same dtype, got mt.float32 != mt.int32."),
    (mt.constant([True]), mt.constant([True]), "Invalid dtype mt.bool in __truediv__.")])
def test_division_of_mixed_dtypes_is_a_type_error(x, y, message):
    for divide in (lambda a, b: a / b, mt.divide, mt.math.truediv):
        with pytest.raises(TypeError) as info:
            divide(x, y)
        assert str(info.value).startswith(message)
