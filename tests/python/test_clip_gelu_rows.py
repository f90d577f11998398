"""mt.clip_by_value and mt.nn.gelu as the op table's ClipByValue and Gelu rows: TensorFlow
2.21's values, gradients and errors (recorded here), the 2-byte floats, Keras's gelu, and
the rows inside mt.function."""

import re

import numpy as np
import pytest

import minitensor as mt
from minitensor import _minitensor

T = np.array([[-1.5, -0.6, -0.1], [0.2, 0.7, 1.4]], np.float32)
XS = np.array([-2.0, -0.5, 0.3, 1.7], np.float32)


def test_the_rows_exist():
    assert ("clip_by_value", "math") in _minitensor._op_rows
    assert ("nn.gelu", "nn") in _minitensor._op_rows


def test_clip_by_value_with_broadcast_bounds_and_its_gradient():
    t, lo, hi = mt.constant(T), mt.constant([-0.5, -0.7, -0.2]), mt.constant(0.5)
    with mt.GradientTape() as tape:
        tape.watch([t, lo, hi])
        y = mt.clip_by_value(t, lo, hi)
        loss = mt.reduce_sum(y * np.array([[1.0, 2, 3], [4, 5, 6]], np.float32))
    np.testing.assert_array_equal(y.numpy(), np.float32([[-0.5, -0.6, -0.1], [0.2, 0.5, 0.5]]))
    dt, dlo, dhi = tape.gradient(loss, [t, lo, hi])
    np.testing.assert_array_equal(dt.numpy(), [[0, 2, 3], [4, 0, 0]])
    np.testing.assert_array_equal(dlo.numpy(), [1, 0, 0])
    assert dhi.numpy() == 11


def test_clip_by_value_keeps_nan_and_takes_every_numeric_dtype():
    out = mt.clip_by_value(mt.constant([1.0, np.nan, 3.0]), 0.0, 2.0).numpy()
    assert out[0] == 1 and np.isnan(out[1]) and out[2] == 2
    np.testing.assert_array_equal(mt.clip_by_value(mt.constant([1, 5, -3]), -2, 2).numpy(),
                                  [1, 2, -2])
    wide = mt.clip_by_value(mt.constant([1, 5, -3], mt.int64), -2, 2)
    assert wide.dtype == mt.int64
    np.testing.assert_array_equal(wide.numpy(), [1, 2, -2])
    bf = mt.clip_by_value(mt.constant([1.0, 5.0, -3.0], mt.bfloat16), -2.0, 2.5)
    assert bf.dtype == mt.bfloat16
    np.testing.assert_array_equal(mt.cast(bf, mt.float32).numpy(), [1, 2.5, -2])
    # A min above the max gives the min everywhere (TensorFlow: [3, 3, 3]).
    np.testing.assert_array_equal(mt.clip_by_value([1.0, 5.0, 3.0], 3.0, 2.0).numpy(), [3, 3, 3])


def test_clip_by_value_errors_are_tensorflows():
    with pytest.raises(ValueError, match=re.escape("Shapes (1, 2) and (2, 2) are incompatible")):
        mt.clip_by_value([[1.0, 5.0]], [[0.0], [6.0]], 2.0)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=re.escape("Incompatible shapes: [3] vs. [2]")):
        mt.clip_by_value([1.0, 5.0, 3.0], [0.0, 6.0], 2.0)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=re.escape("Incompatible shapes: [3] vs. [2]")):
        mt.clip_by_value([1.0, 5.0, 3.0], 0.0, [2.0, 3.0])
    with pytest.raises(mt.errors.InvalidArgumentError, match="dtype bool is not supported"):
        mt.clip_by_value([True], False, True)


def test_gelu_values_and_gradients_are_tensorflows():
    x = mt.constant(XS)
    with mt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        exact = mt.nn.gelu(x)
        tanh = mt.nn.gelu(x, approximate=True)
    np.testing.assert_allclose(
        exact.numpy(), [-0.0455002635717392, -0.1542687714099884, 0.1853734254837036,
                        1.6242388486862183], rtol=1e-6)
    # TensorFlow rounds after each float32 op of the tanh form; the row computes it at once.
    np.testing.assert_allclose(
        tanh.numpy(), [-0.04540222883224487, -0.1542859971523285, 0.18537093698978424,
                       1.6241059303283691], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(
        tape.gradient(exact, x).numpy(),
        [-0.08523181825876236, 0.1325048804283142, 0.7323277592658997, 1.1153180599212646],
        rtol=1e-5)
    np.testing.assert_allclose(
        tape.gradient(tanh, x).numpy(),
        [-0.08609910309314728, 0.1326300948858261, 0.7322955131530762, 1.1159145832061768],
        rtol=1e-5)


def test_gelu_on_two_byte_floats_and_float64():
    bf = mt.nn.gelu(mt.constant([-1.0, 0.5, 1.5], mt.bfloat16))
    assert bf.dtype == mt.bfloat16
    np.testing.assert_array_equal(mt.cast(bf, mt.float32).numpy(),
                                  [-0.158203125, 0.345703125, 1.3984375])  # TensorFlow's
    # TensorFlow rounds after each of its ops (-0.1589, 0.3457, 1.398); the row rounds once,
    # to the float16 nearest the value (1.3994 for 1.5, an ulp above).
    half = mt.nn.gelu(mt.constant([-1.0, 0.5, 1.5], mt.float16), approximate=True)
    np.testing.assert_array_equal(half.numpy().astype(np.float64),
                                  [-0.1588134765625, 0.345703125, 1.3994140625])
    np.testing.assert_allclose(half.numpy().astype(np.float64), [-0.1589, 0.3457, 1.398],
                               atol=2e-3)
    # TensorFlow's float64 erf and tanh (Eigen's) are within 5e-9 of the C library's.
    x64 = mt.nn.gelu(mt.constant([-3.0, 1.0], mt.float64), approximate=True)
    np.testing.assert_allclose(x64.numpy(), [-0.0036373923237909, 0.8411919902786764],
                               rtol=0, atol=5e-9)


def test_keras_gelu_uses_the_row():
    np.testing.assert_allclose(mt.keras.activations.gelu(XS, approximate=True).numpy(),
                               [-0.04540222883224487, -0.1542859971523285,
                                0.18537093698978424, 1.6241059303283691], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(mt.keras.layers.Activation("gelu")(XS).numpy(),
                               [-0.0455002635717392, -0.1542687714099884, 0.1853734254837036,
                                1.6242388486862183], rtol=1e-6)


def test_rows_trace_into_functions():
    @mt.function
    def f(x):
        return mt.nn.gelu(mt.clip_by_value(x, -1.0, 1.0), approximate=True)

    np.testing.assert_allclose(f(mt.constant([-2.0, 0.5])).numpy(),
                               [-0.15880800972132364, 0.3457140097922433], rtol=1e-6)
