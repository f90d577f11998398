"""mt.math.cumsum (also mt.cumsum) and mt.linalg.band_part against NumPy references, their
gradients and TensorFlow's errors."""

import numpy as np
import pytest

import minitensor as mt

X = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)


def numpy_cumsum(x, axis, exclusive, reverse):
    y = np.flip(x, axis) if reverse else x
    s = np.cumsum(y, axis=axis)
    if exclusive:
        s = s - y
    return np.flip(s, axis) if reverse else s


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_matches_numpy(axis, exclusive, reverse):
    got = mt.math.cumsum(mt.constant(X), axis=axis, exclusive=exclusive, reverse=reverse)
    np.testing.assert_array_equal(got.numpy(), numpy_cumsum(X, axis, exclusive, reverse))


def test_cumsum_is_also_top_level_and_takes_integers():
    assert mt.cumsum is mt.math.cumsum
    got = mt.cumsum(mt.constant([[1, 2, 3], [4, 5, 6]]), axis=1, exclusive=True, reverse=True)
    assert got.dtype == mt.int32
    np.testing.assert_array_equal(got.numpy(), [[5, 3, 0], [11, 6, 0]])  # TensorFlow's values


def test_cumsum_gradient_sums_the_other_way():
    x = mt.Variable(X.astype(np.float64))
    w = mt.constant(np.random.default_rng(1).normal(size=X.shape))
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.math.cumsum(x, axis=1, exclusive=True) * w)
    want = numpy_cumsum(w.numpy(), 1, exclusive=True, reverse=True)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-12)


def test_cumsum_errors_are_tensorflows():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"Expected scan axis in the range \[-2, 2\), but got 2"):
        mt.math.cumsum(mt.constant([[1.0, 2.0]]), axis=2)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"dtype bool is not supported"):
        mt.math.cumsum(mt.constant([True]))


def numpy_band(x, lower, upper):
    r = np.arange(x.shape[-2])[:, None]
    c = np.arange(x.shape[-1])[None, :]
    keep = ((lower < 0) | (r - c <= lower)) & ((upper < 0) | (c - r <= upper))
    return np.where(keep, x, 0)


@pytest.mark.parametrize("lower,upper", [(1, -1), (0, 0), (-1, 0), (2, 1), (-1, -1)])
def test_band_part_matches_numpy(lower, upper):
    got = mt.linalg.band_part(mt.constant(X), lower, upper)
    np.testing.assert_array_equal(got.numpy(), numpy_band(X, lower, upper))


def test_band_part_makes_a_causal_mask():
    mask = mt.linalg.band_part(mt.ones([4, 4]), -1, 0)  # GPT-2's attention mask
    np.testing.assert_array_equal(mask.numpy(), np.tril(np.ones((4, 4))))
    b = mt.linalg.band_part(mt.constant([[True, True], [True, True]]), 0, 0)
    np.testing.assert_array_equal(b.numpy(), np.eye(2, dtype=bool))


def test_band_part_gradient_is_the_band_of_the_gradient():
    x = mt.Variable(X)
    with mt.GradientTape() as tape:
        y = mt.reduce_sum(mt.linalg.band_part(x, 1, 0) * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), numpy_band(np.full_like(X, 3), 1, 0))


def test_band_part_errors_are_tensorflows():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"input must be at least 2-dim, received shape: \[2\]"):
        mt.linalg.band_part(mt.constant([1.0, 2.0]), 1, -1)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"num_upper must be negative or less or equal to number of columns "
                             r"\(4\) got: 5"):
        mt.linalg.band_part(mt.ones([3, 4]), 2, 5)
