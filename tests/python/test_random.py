"""mt.random against TensorFlow 2.21's values (generated in a throwaway venv) and NumPy."""

import numpy as np
import pytest

import minitensor as mt


def bits(t):
    a = t.numpy()
    return [hex(v) for v in a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])]


def test_stateless_uniform_is_tensorflows():
    u = mt.random.stateless_uniform([6], seed=[1, 2], minval=-2.5, maxval=3.0)
    assert u.dtype == mt.float32 and u.shape == (6,)
    assert bits(u) == ["0x40091bf8", "0xbfb8ccd2", "0x403eabaa", "0xbfcf1658", "0xbf8084d8",
                       "0x3f8923bc"]
    h = mt.random.stateless_uniform([6], seed=(1, 2), minval=-2.5, maxval=3.0, dtype=mt.float16)
    assert bits(h) == ["0x37c8", "0xbcd2", "0xc056", "0x40d4", "0xbed8", "0xac40"]
    i = mt.random.stateless_uniform([6], seed=np.array([1, 2]), minval=-5, maxval=17,
                                    dtype=mt.int32)
    assert i.numpy().tolist() == [-1, 0, 7, 12, 2, -2]


def test_stateless_normals_are_tensorflows():
    n = mt.random.stateless_normal([6], seed=[1, 2], mean=1.5, stddev=0.3)
    assert bits(n) == ["0x3fd4e4d2", "0x3fc7f6a2", "0x3fc2d32b", "0x3fc1c878", "0x3f8e04da",
                       "0x3f9b5f35"]
    t = mt.random.stateless_truncated_normal([6], seed=[1, 2], mean=-1.0, stddev=2.0)
    assert bits(t) == ["0x3db4acd0", "0xbf15d240", "0xbf5a55c7", "0xbf6839bb", "0xbf29e0ea",
                       "0xc08bd796"]


def test_stateful_sequence_follows_set_seed_as_tensorflow():
    mt.random.set_seed(1)
    first = mt.random.uniform([6], seed=7).numpy()
    np.testing.assert_array_equal(
        first, np.float32([0.787847638130188, 0.7003978490829468, 0.9041969776153564,
                           0.6824533939361572, 0.598848819732666, 0.44210636615753174]))
    assert not np.array_equal(mt.random.uniform([6], seed=7).numpy(), first)
    mt.random.set_seed(1)
    np.testing.assert_array_equal(mt.random.uniform([6], seed=7).numpy(), first)
    mt.random.set_seed(1)
    assert mt.random.uniform([5], -5, 17, dtype=mt.int32, seed=7).numpy().tolist() == [
        12, 6, 9, -3, 5]
    mt.random.set_seed(1)
    assert bits(mt.random.normal([4], mean=2.0, stddev=3.0, seed=7)) == [
        "0x3ce5e4c0", "0x3faeaf4c", "0x3f45e79a", "0x3fb908ee"]
    mt.random.set_seed(None)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.float16, mt.bfloat16])
def test_values_lie_in_their_ranges(dtype):
    u = mt.random.uniform([1000], minval=-3, maxval=5, dtype=dtype)
    values = mt.cast(u, mt.float32).numpy()
    assert u.dtype == dtype and values.min() >= -3 and values.max() <= 5
    t = mt.cast(mt.random.truncated_normal([1000], mean=1.0, stddev=0.5, dtype=dtype),
                mt.float32).numpy()
    assert t.min() >= 0.0 and t.max() <= 2.0
    n = mt.cast(mt.random.normal([20000], dtype=dtype), mt.float32).numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05


def test_shapes_may_be_empty_or_tensors():
    assert mt.random.uniform([0, 3]).shape == (0, 3)
    assert mt.random.normal(mt.constant([2, 2])).shape == (2, 2)


def test_errors_are_tensorflows():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype mt.int32"):
        mt.random.uniform([2], dtype=mt.int32)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[RandomUniformInt\] Need minval < maxval, got 5 >= 3"):
        mt.random.uniform([2], minval=5, maxval=3, dtype=mt.int32)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[StatelessRandomUniformIntV2\] Need minval < maxval"):
        mt.random.stateless_uniform([2], seed=[1, 2], minval=5, maxval=3, dtype=mt.int64)
    with pytest.raises(ValueError, match="seed must be a shape"):
        mt.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(ValueError, match="minval and maxval must be given"):
        mt.random.stateless_uniform([2], seed=[1, 2], dtype=mt.int32)
    with pytest.raises(mt.errors.InvalidArgumentError, match="dtype int32 is not supported"):
        mt.random.normal([2], dtype=mt.int32)
