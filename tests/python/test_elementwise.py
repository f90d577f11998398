"""The element-wise ops of issue 19 and their operators, against NumPy."""

import math

import numpy as np
import pytest

import minitensor as mt

X = np.array([[-2.5, -1.5, -0.5, 0.0], [0.5, 1.5, 2.5, 3.75]], np.float32)
POSITIVE = np.array([[0.25, 1.0, 2.0, 9.0], [1e-3, 4.0, 100.0, 0.5]], np.float32)

UNARY = [
    (mt.sqrt, np.sqrt, POSITIVE),
    (mt.math.rsqrt, lambda x: 1 / np.sqrt(x), POSITIVE),
    (mt.square, np.square, X),
    (mt.math.log, np.log, POSITIVE),
    (mt.math.log1p, np.log1p, POSITIVE),
    (mt.tanh, np.tanh, X),
    (mt.math.erf, np.vectorize(math.erf), X),
    (mt.sin, np.sin, X),
    (mt.math.cos, np.cos, X),
    (mt.sigmoid, lambda x: 1 / (1 + np.exp(-x)), X),
    (mt.sign, np.sign, X),
    (mt.floor, np.floor, X),
    (mt.round, np.round, X),  # half to even, as NumPy
]


@pytest.mark.parametrize("op,ref,x", UNARY, ids=[u[0].__name__ for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_matches_numpy(op, ref, x, dtype):
    x = x.astype(dtype)
    rtol = 1e-6 if dtype == np.float32 else 1e-13  # a few ulp on either side
    np.testing.assert_allclose(op(mt.constant(x)).numpy(), ref(x), rtol=rtol, atol=0)


def test_unary_takes_python_values_and_half_dtypes():
    np.testing.assert_allclose(mt.sqrt([4.0, 9.0]).numpy(), [2, 3])
    h = mt.constant([0.5, 1.5, 2.5], dtype=mt.float16)
    assert mt.round(h).dtype == mt.float16
    np.testing.assert_array_equal(mt.round(h).numpy(), [0, 2, 2])
    b = mt.sqrt(mt.constant([4.0], dtype=mt.bfloat16))
    assert b.dtype == mt.bfloat16
    np.testing.assert_array_equal(mt.cast(b, mt.float32).numpy(), [2])


def test_integer_unary_ops():
    i = np.array([-3, 0, 5], np.int64)
    np.testing.assert_array_equal(mt.square(mt.constant(i)).numpy(), i * i)
    np.testing.assert_array_equal(mt.sign(mt.constant(i)).numpy(), np.sign(i))
    np.testing.assert_array_equal(mt.round(mt.constant(i)).numpy(), i)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[Sqrt\] dtype int32"):
        mt.sqrt(mt.constant([4]))


def test_math_module_has_every_alias():
    for name in ["sqrt", "rsqrt", "square", "log", "log1p", "erf", "sin", "cos", "tanh",
                 "sigmoid", "sign",
                 "floor", "round", "logical_not", "pow", "maximum", "minimum",
                 "squared_difference", "floordiv", "floormod", "logical_and", "logical_or"]:
        assert callable(getattr(mt.math, name)), name


A = np.array([[7, -7, 7], [-7, 0, 3]], np.int32)
B = np.array([2, 2, -2], np.int32)

BINARY = [
    (mt.maximum, np.maximum),
    (mt.minimum, np.minimum),
    (mt.math.squared_difference, lambda a, b: (a - b) ** 2),
    (mt.math.floordiv, np.floor_divide),
    (mt.math.floormod, np.mod),
]


@pytest.mark.parametrize("op,ref", BINARY, ids=[b[0].__name__ for b in BINARY])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_binary_broadcasts_like_numpy(op, ref, dtype):
    a, b = A.astype(dtype), B.astype(dtype)
    got = op(mt.constant(a), mt.constant(b)).numpy()
    assert got.shape == (2, 3) and got.dtype == dtype
    np.testing.assert_array_equal(got, ref(a, b))


def test_pow_of_floats_and_integers():
    a = np.array([[2.0, 0.5], [9.0, -2.0]], np.float32)
    with np.errstate(invalid="ignore"):  # (-2) ** 0.5 is NaN in both
        np.testing.assert_allclose(mt.pow(a, np.float32(0.5)).numpy(), np.power(a, 0.5),
                                   rtol=1e-6)
    i = mt.constant([2, -3, 5])
    np.testing.assert_array_equal(mt.pow(i, mt.constant([10, 3, 0])).numpy(), [1024, -27, 1])
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match="Integers to negative integer powers are not allowed"):
        with mt.device("/CPU:0"):
            mt.pow(i, -1)


def test_integer_division_by_zero_is_an_error_on_the_cpu():
    with mt.device("/CPU:0"):
        for op in (mt.math.floordiv, mt.math.floormod):
            with pytest.raises(mt.errors.InvalidArgumentError, match="Integer division by zero"):
                op(mt.constant([1, 2]), mt.constant([1, 0]))


def test_nan_propagates_through_maximum_and_minimum():
    a = np.array([np.nan, 1.0, -np.inf], np.float32)
    b = np.array([1.0, np.nan, 2.0], np.float32)
    np.testing.assert_array_equal(mt.maximum(a, b).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(mt.minimum(a, b).numpy(), np.minimum(a, b))


def test_float_floordiv_and_floormod_with_special_values():
    a = np.array([1.0, -1.0, np.inf, 5.0], np.float64)
    b = np.array([0.0, 0.0, 2.0, -3.0], np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(mt.math.floordiv(a, b).numpy(), np.floor(a / b))
        np.testing.assert_array_equal(mt.math.floormod(a, b).numpy(), np.fmod(a, b) + [0, 0, 0, -3])


def test_logical_ops():
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    np.testing.assert_array_equal(mt.logical_and(p, q).numpy(), p & q)
    np.testing.assert_array_equal(mt.logical_or(p, q).numpy(), p | q)
    np.testing.assert_array_equal(mt.logical_not(p).numpy(), ~p)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[LogicalAnd\] dtype float32"):
        mt.logical_and(mt.constant([1.0]), mt.constant([1.0]))


def test_operators_and_reflected_scalars():
    a = mt.constant([[7, -7], [5, -5]])
    np.testing.assert_array_equal((a ** 2).numpy(), [[49, 49], [25, 25]])
    np.testing.assert_array_equal((2 ** mt.constant([3, 4])).numpy(), [8, 16])
    np.testing.assert_array_equal((a // 2).numpy(), [[3, -4], [2, -3]])
    np.testing.assert_array_equal((20 // mt.constant([3, -3])).numpy(), [6, -7])
    np.testing.assert_array_equal((a % 3).numpy(), np.array([[7, -7], [5, -5]]) % 3)
    np.testing.assert_array_equal((20 % mt.constant([3, -3])).numpy(), [2, -1])
    f = mt.constant([1.5, -2.5])
    np.testing.assert_allclose((f ** 2.0).numpy(), [2.25, 6.25])
    np.testing.assert_allclose((f // 1.0).numpy(), [1, -3])
    np.testing.assert_allclose((f % 1.0).numpy(), [0.5, 0.5])


def test_logical_operators_on_bool_tensors():
    p = mt.constant([True, True, False, False])
    q = mt.constant([True, False, True, False])
    np.testing.assert_array_equal((p & q).numpy(), [True, False, False, False])
    np.testing.assert_array_equal((p | q).numpy(), [True, True, True, False])
    np.testing.assert_array_equal((~p).numpy(), [False, False, True, True])
    np.testing.assert_array_equal((p & True).numpy(), [True, True, False, False])
    np.testing.assert_array_equal((False | q).numpy(), [True, False, True, False])
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[LogicalNot\] dtype int32"):
        ~mt.constant([1, 2])


def test_zero_sized_inputs():
    empty = mt.constant(np.zeros((0, 3), np.float32))
    assert mt.sqrt(empty).shape == (0, 3)
    assert mt.maximum(empty, mt.constant([1.0, 2.0, 3.0])).shape == (0, 3)
    with mt.device("/CPU:0"):  # nothing is divided
        assert mt.math.floordiv(mt.constant(np.zeros((0,), np.int32)), 0).shape == (0,)


def test_erf_gradient_is_two_over_sqrt_pi_times_exp_minus_x_squared():
    x = mt.Variable(np.array([-1.0, 0.0, 0.5, 2.0], np.float32))
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.math.erf(x))
    grad = tape.gradient(y, x).numpy()
    want = 2 / np.sqrt(np.pi) * np.exp(-np.square(x.numpy()))
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_sin_and_cos_gradients_are_each_other():
    x = mt.Variable(np.array([-2.0, 0.0, 0.5, 3.0], np.float64))
    with mt.GradientTape(persistent=True) as tape:
        s = mt.reduce_sum(mt.sin(x))
        c = mt.reduce_sum(mt.cos(x))
    np.testing.assert_allclose(tape.gradient(s, x).numpy(), np.cos(x.numpy()), rtol=1e-13)
    np.testing.assert_allclose(tape.gradient(c, x).numpy(), -np.sin(x.numpy()), rtol=1e-13)


def test_sin_rejects_integers_as_tensorflow():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[Sin\] dtype int32 is not supported"):
        mt.sin(mt.constant([1, 2]))
