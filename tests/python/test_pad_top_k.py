"""mt.pad (Pad, PadV2, MirrorPad), mt.math.top_k (TopKV2), mt.sort and mt.argsort against the
values, gradients and errors TensorFlow 2.21 gives for the same calls (written in here)."""

import numpy as np
import pytest

import minitensor as mt

X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_pad_values_are_tensorflows():
    x = mt.constant([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(mt.pad(x, [[1, 0], [0, 2]]).numpy(),
                                  [[0, 0, 0, 0, 0], [1, 2, 3, 0, 0], [4, 5, 6, 0, 0]])
    np.testing.assert_array_equal(mt.pad(x, [[0, 1], [2, 1]], mode="REFLECT").numpy(),
                                  [[3, 2, 1, 2, 3, 2], [6, 5, 4, 5, 6, 5], [3, 2, 1, 2, 3, 2]])
    np.testing.assert_array_equal(
        mt.pad(x, [[2, 1], [1, 3]], mode="SYMMETRIC").numpy(),
        [[4, 4, 5, 6, 6, 5, 4], [1, 1, 2, 3, 3, 2, 1], [1, 1, 2, 3, 3, 2, 1],
         [4, 4, 5, 6, 6, 5, 4], [4, 4, 5, 6, 6, 5, 4]])
    np.testing.assert_array_equal(mt.pad(x, [[1, 0], [0, 1]], constant_values=9).numpy(),
                                  [[9, 9, 9, 9], [1, 2, 3, 9], [4, 5, 6, 9]])
    # modes in any case; int64 paddings; a bool constant; a scalar with no paddings
    np.testing.assert_array_equal(mt.pad(mt.constant([1.0, 2.0]), np.array([[1, 1]], np.int64),
                                         mode="Symmetric").numpy(), [1, 1, 2, 2])
    np.testing.assert_array_equal(mt.pad(mt.constant([True, False]), [[1, 2]],
                                         constant_values=True).numpy(),
                                  [True, True, False, True, True])
    assert float(mt.pad(mt.constant(3.0), np.zeros([0, 2], np.int32))) == 3.0
    h = mt.pad(mt.constant([1.5, 2.5], mt.bfloat16), [[1, 1]], constant_values=0.1)
    np.testing.assert_array_equal(mt.cast(h, mt.float32).numpy(),
                                  [0.10009765625, 1.5, 2.5, 0.10009765625])


def test_pad_errors_are_tensorflows():
    x = mt.constant(X)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"Paddings must be non-negative: -1 0"):
        mt.pad(x, [[1, 1], [-1, 0]])
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"paddings must be a matrix with 2 columns: \[2\]"):
        mt.pad(x, [1, 1])
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"The first dimension of paddings must be the rank of inputs"
                             r"\[1,2\] \[2,3\]"):
        mt.pad(x, [[1, 1]])
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"Value for attr 'Tpaddings' of float is not in the list of allowed "
                             r"values: int32, int64"):
        mt.pad(x, [[1.0, 1], [1, 1]])
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"constant_values must be a scalar. Found: \[2\]"):
        mt.pad(x, [[1, 1], [1, 1]], constant_values=[1, 2])
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"paddings must be less than the dimension size: 3, 0 not less "
                             r"than 3"):
        mt.pad(x, [[1, 1], [3, 0]], mode="REFLECT")
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"paddings must be no greater than the dimension size: 4, 0 "
                             r"greater than 3"):
        mt.pad(x, [[1, 1], [4, 0]], mode="SYMMETRIC")
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"paddings must be non-negative: -1 2"):
        mt.pad(x, [[1, 1], [-1, 2]], mode="REFLECT")
    with pytest.raises(ValueError, match=r'Value of argument `mode` expected to be one of '
                                         r'"CONSTANT", "REFLECT", or "SYMMETRIC". Received '
                                         r'`mode` = FOO'):
        mt.pad(x, [[1, 1], [1, 2]], mode="foo")
    with pytest.raises(TypeError, match=r"Cannot convert 2.7 to EagerTensor of dtype int32"):
        mt.pad(mt.constant([[1, 2]]), [[0, 0], [1, 1]], constant_values=2.7)


@pytest.mark.parametrize("mode,paddings,want", [
    ("CONSTANT", [[1, 1], [2, 1]], [[9, 10, 11], [15, 16, 17]]),
    ("REFLECT", [[1, 1], [2, 1]], [[30, 96, 60], [18, 60, 36]]),
    ("SYMMETRIC", [[0, 2], [1, 2]], [[42, 54, 54], [42, 54, 54]]),
])
def test_pad_gradients_are_tensorflows(mode, paddings, want):
    x = mt.Variable(X)
    with mt.GradientTape() as tape:
        y = mt.pad(x, paddings, mode=mode)
        weights = mt.reshape(mt.range(1.0, 1.0 + 24), y.shape)  # every output is (4, 6)
        loss = mt.reduce_sum(y * weights)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), want)


def test_pad_v2_gradient_and_mirror_pad_grad():
    x = mt.Variable(X)
    with mt.GradientTape() as tape:
        y = mt.pad(x, [[0, 1], [1, 0]], constant_values=2.5)
        loss = mt.reduce_sum(y * y)
    np.testing.assert_array_equal(y.numpy(), [[2.5, 1, 2, 3], [2.5, 4, 5, 6], [2.5] * 4])
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [[2, 4, 6], [8, 10, 12]])
    g = mt.reshape(mt.range(1.0, 11.0), [2, 5])  # tf.raw_ops.MirrorPadGrad's values
    np.testing.assert_array_equal(mt.mirror_pad_grad(g, [0, 0, 1, 1], "REFLECT").numpy(),
                                  [[2, 9, 4], [7, 24, 9]])
    np.testing.assert_array_equal(mt.mirror_pad_grad(g, [0, 0, 2, 1], "SYMMETRIC").numpy(),
                                  [[5, 10], [15, 25]])


def test_top_k_values_indices_and_gradient_are_tensorflows():
    z = mt.Variable([[3.0, 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    with mt.GradientTape() as tape:
        r = mt.math.top_k(z, 3)
        loss = mt.reduce_sum(r.values * mt.constant([1.0, 10, 100]))
    assert type(r).__name__ == "TopKV2" and r._fields == ("values", "indices")
    np.testing.assert_array_equal(r.values.numpy(), [[5, 4, 3], [9, 6, 5]])
    assert r.indices.dtype == mt.int32
    np.testing.assert_array_equal(r.indices.numpy(), [[4, 2, 0], [0, 2, 3]])
    np.testing.assert_array_equal(tape.gradient(loss, z).numpy(),
                                  [[100, 0, 10, 0, 1], [1, 0, 10, 100, 0]])
    values, indices = mt.nn.top_k(mt.constant([1, 5, 5, 2], mt.int64), k=mt.constant(2))
    np.testing.assert_array_equal(values.numpy(), [5, 5])  # ties: the lower index first
    np.testing.assert_array_equal(indices.numpy(), [1, 2])
    ties = mt.math.top_k(mt.constant([[3.0, 1, 3, 2], [0, 5, 5, 5]]), k=3, sorted=False)
    np.testing.assert_array_equal(ties.indices.numpy(), [[0, 2, 3], [1, 2, 3]])


def test_top_k_errors_are_tensorflows():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"input must have at least k columns. Had 3, needed 5"):
        mt.math.top_k(mt.constant([[1.0, 2, 3]]), k=5)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"Need k >= 0, got -1"):
        mt.math.top_k(mt.constant([1.0, 2]), k=-1)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"input must be >= 1-D, got shape \[\]"):
        mt.math.top_k(mt.constant(1.0))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"k must be scalar, got shape \[1\]"):
        mt.math.top_k(mt.constant([1.0, 2]), k=mt.constant([1]))
    with pytest.raises(mt.errors.InvalidArgumentError):
        mt.math.top_k(mt.constant([True]))


def test_sort_and_argsort_are_tensorflows():
    m = mt.constant([[3, 1, 2], [0, -5, 7]])
    np.testing.assert_array_equal(mt.sort(m, axis=0).numpy(), [[0, -5, 2], [3, 1, 7]])
    np.testing.assert_array_equal(mt.argsort(m, axis=0, direction="DESCENDING").numpy(),
                                  [[0, 0, 1], [1, 1, 0]])
    np.testing.assert_array_equal(
        mt.sort(mt.constant([2.5, -1, 0, 7, -3], mt.float64), direction="DESCENDING").numpy(),
        [7, 2.5, 0, -1, -3])
    cube = mt.constant([[[1, 2], [2, 1]], [[0, 0], [3, -1]]])
    np.testing.assert_array_equal(mt.argsort(cube, axis=1).numpy(),
                                  [[[0, 1], [1, 0]], [[0, 1], [1, 0]]])
    # ties keep their order both ways (stable or not); int32's extremes sort
    v = mt.constant([3, 1, 3, 2, 1, 3])
    np.testing.assert_array_equal(mt.argsort(v).numpy(), [1, 4, 3, 0, 2, 5])
    np.testing.assert_array_equal(mt.argsort(v, stable=True).numpy(), [1, 4, 3, 0, 2, 5])
    np.testing.assert_array_equal(mt.argsort(v, direction="DESCENDING").numpy(),
                                  [0, 2, 5, 3, 1, 4])
    extremes = mt.constant([3, 1, -2147483648, 2147483647, 0])
    np.testing.assert_array_equal(mt.sort(extremes).numpy(),
                                  [-2147483648, 0, 1, 3, 2147483647])
    np.testing.assert_array_equal(mt.argsort(extremes).numpy(), [2, 4, 1, 0, 3])
    np.testing.assert_array_equal(mt.sort(extremes, direction="DESCENDING").numpy(),
                                  [2147483647, 3, 1, 0, -2147483648])
    big = mt.constant([3, 1, -9223372036854775808, 9223372036854775807, 0], mt.int64)
    np.testing.assert_array_equal(mt.sort(big).numpy(),
                                  [-9223372036854775808, 0, 1, 3, 9223372036854775807])
    zeros = mt.constant([0.0, -0.0, 0.0, -0.0])  # equal: the order of the input
    np.testing.assert_array_equal(mt.argsort(zeros).numpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(mt.argsort(zeros, direction="DESCENDING").numpy(), [0, 1, 2, 3])
    half = mt.sort(mt.constant([2.0, -1.0, 1.0], mt.float16))
    np.testing.assert_array_equal(half.numpy(), np.array([-1, 1, 2], np.float16))


def test_sort_puts_nans_first():
    x = mt.constant([3.0, np.nan, 1.0, -np.inf])
    np.testing.assert_array_equal(mt.sort(x).numpy(), [np.nan, -np.inf, 1, 3])
    np.testing.assert_array_equal(mt.sort(x, direction="DESCENDING").numpy(),
                                  [np.nan, 3, 1, -np.inf])


def test_sort_errors_are_tensorflows():
    m = mt.constant([[3.0, 1.0], [0.0, 2.0]])
    with pytest.raises(ValueError, match=r"Argument `direction` should be one of ASCENDING, "
                                         r"DESCENDING. Received: direction=up"):
        mt.sort(m, direction="up")
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"slice index 2 of dimension 0 out of bounds."):
        mt.sort(m, axis=2)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"slice index -1 of dimension 0 out of bounds."):
        mt.sort(mt.constant(3.0))
    with pytest.raises(ValueError, match=r"Argument `axis` must be a constant scalar"):
        mt.sort(m, axis=mt.constant([0]))
    np.testing.assert_array_equal(mt.sort(m, axis=mt.constant(0)).numpy(), [[0, 1], [3, 2]])


def test_pad_and_top_k_replay_in_a_function():
    @mt.function
    def f(x):
        return mt.pad(x, [[1, 1]], mode="REFLECT"), mt.math.top_k(x, 2).indices

    for _ in range(2):
        padded, top = f(mt.constant([1.0, 3.0, 2.0]))
        np.testing.assert_array_equal(padded.numpy(), [3, 1, 3, 2, 3])
        np.testing.assert_array_equal(top.numpy(), [1, 2])


@pytest.mark.parametrize("form", range(4))
def test_pad_top_k_and_sort_take_every_form(form):
    def forms(values, dtype):
        array = np.asarray(values, dtype)
        return [values, array, mt.constant(array), mt.Variable(array)][form]

    x = forms([[3.0, 1.0, 2.0]], np.float32)
    paddings = forms([[0, 0], [1, 0]], np.int32)
    np.testing.assert_array_equal(mt.pad(x, paddings, mode="reflect").numpy(), [[1, 3, 1, 2]])
    np.testing.assert_array_equal(mt.math.top_k(x, forms(2, np.int32)).indices.numpy(), [[0, 2]])
    np.testing.assert_array_equal(mt.sort(x).numpy(), [[1, 2, 3]])
    np.testing.assert_array_equal(mt.argsort(x, axis=forms(1, np.int32)).numpy(), [[1, 2, 0]])
