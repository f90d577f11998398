"""The shape and data movement ops and Tensor.__getitem__ against NumPy."""

import numpy as np
import pytest

import minitensor as mt

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


def check(t, expected):
    expected = np.asarray(expected)
    assert t.shape == expected.shape
    np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_,
                                   np.float16])
def test_every_dtype_moves_through_the_ops(dtype):
    x = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    t = mt.constant(x)
    check(mt.reshape(t, [4, -1]), x.reshape(4, -1))
    check(mt.transpose(t), x.transpose())
    check(mt.transpose(t, perm=[1, 0, 2]), x.transpose(1, 0, 2))
    check(mt.concat([t, t], axis=-1), np.concatenate([x, x], -1))
    check(mt.stack([t, t], axis=1), np.stack([x, x], 1))
    check(mt.tile(t, [1, 2, 1]), np.tile(x, [1, 2, 1]))
    check(mt.broadcast_to(t[:, :1], [2, 3, 4]), np.broadcast_to(x[:, :1], [2, 3, 4]))
    check(mt.zeros_like(t), np.zeros_like(x))
    check(mt.ones_like(t), np.ones_like(x))
    check(t[::-1, 1:, None, -1], x[::-1, 1:, None, -1])


def test_reshape_expand_dims_and_squeeze():
    t = mt.constant(X)
    check(mt.reshape(t, (5, -1)), X.reshape(5, -1))
    check(mt.reshape(t, mt.constant([60])), X.reshape(60))
    check(mt.expand_dims(t, axis=-1), X[..., None])
    check(mt.squeeze(mt.constant(np.zeros((1, 3, 1)))), np.zeros(3))
    check(mt.squeeze(mt.constant(np.zeros((1, 3, 1))), axis=[0]), np.zeros((3, 1)))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[Reshape\] Input to reshape is a tensor with 60 values, but the "
                             r"requested shape has 7"):
        mt.reshape(t, [7])


def test_transpose_and_T():
    t = mt.constant(X)
    for perm in [(0, 1, 2), (2, 1, 0), (1, 2, 0), (2, 0, 1)]:
        check(mt.transpose(t, perm), X.transpose(perm))
    check(t.T, X.T)
    big = np.random.default_rng(0).standard_normal((130, 257)).astype(np.float32)
    check(mt.constant(big).T, big.T)


def test_split_by_count_and_by_sizes():
    t = mt.constant(X)
    parts = mt.split(t, 2, axis=1)
    assert len(parts) == 2
    for got, want in zip(parts, np.split(X, 2, axis=1)):
        check(got, want)
    parts = mt.split(t, [1, -1, 2], axis=2)
    for got, want in zip(parts, np.split(X, [1, 3], axis=2)):
        check(got, want)


def test_slice_and_strided_slice():
    t = mt.constant(X)
    check(mt.slice(t, [1, 0, 2], [2, -1, 2]), X[1:3, :, 2:4])
    check(mt.strided_slice(t, [0, 3], [3, 0], [2, -1]), X[0:3:2, 3:0:-1])
    check(mt.strided_slice(t, [0, 1], [0, 2], [1, 1], begin_mask=1, end_mask=1,
                           shrink_axis_mask=2), X[:, 1])


INDEXES = [
    0, -1, 2, slice(None), slice(1, None), slice(None, -1), slice(None, None, -1),
    slice(3, 0, -1), slice(-1, -4, -2), slice(5, 100), slice(-100, 2),
    (0, 1), (0, 1, 2), (-1, slice(None), 3), (Ellipsis, 1), (Ellipsis, slice(None, None, 2)),
    (1, Ellipsis), (None,), (None, 1), (slice(None), None, 2), (Ellipsis, None),
    (1, None, Ellipsis, None, -2), (slice(None, None, -1), slice(None, None, -2),
                                    slice(None, None, -3)),
    (slice(2, 2),), (slice(0, 3, 5), 1), Ellipsis, (),
]


@pytest.mark.parametrize("index", INDEXES, ids=repr)
def test_getitem_matches_numpy(index):
    check(mt.constant(X)[index], X[index])


def test_getitem_errors():
    t = mt.constant(X)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"slice index 3 of dimension 0 out of bounds"):
        t[3]
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(TypeError):
        t["a"]


def test_gather():
    p = mt.constant(X)
    idx = np.array([[2, 0], [1, 1]])
    check(mt.gather(p, idx), X[idx])
    check(mt.gather(p, mt.constant(idx, dtype=mt.int64), axis=2), np.take(X, idx, axis=2))
    check(mt.gather(p, [3, 0], axis=-2), np.take(X, [3, 0], axis=1))
    with mt.device("/CPU:0"):
        with pytest.raises(mt.errors.InvalidArgumentError,
                           match=r"\[GatherV2\] indices\[1\] = 4 is not in \[0, 4\)"):
            mt.gather(p, [0, 4], axis=1)


def test_one_hot():
    idx = np.array([[0, 2], [-1, 5]])
    want = np.eye(3, dtype=np.float32)[np.clip(idx, 0, 2)] * ((idx >= 0) & (idx < 3))[..., None]
    got = mt.one_hot(idx, 3)
    assert got.dtype == mt.float32
    check(got, want)
    got = mt.one_hot(idx, 3, on_value=5, off_value=-1, axis=0)
    assert got.dtype == mt.int32
    check(got, np.moveaxis(np.where(want > 0, 5, -1), -1, 0))
    check(mt.one_hot([1], 2, dtype=mt.bool), [[False, True]])


def test_broadcast_to_and_tile():
    row = np.arange(5, dtype=np.int64)
    check(mt.broadcast_to(row, [3, 5]), np.broadcast_to(row, [3, 5]))
    check(mt.tile(mt.constant(X), [2, 1, 3]), np.tile(X, [2, 1, 3]))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[BroadcastTo\] Unable"):
        mt.broadcast_to(row, [3, 4])


def test_zero_sized_dimensions():
    z = np.zeros((0, 3), np.float32)
    t = mt.constant(z)
    check(mt.transpose(t), z.T)
    check(mt.concat([t, t], 0), np.zeros((0, 3)))
    check(t[:, 1:], z[:, 1:])
    check(mt.tile(t, [5, 2]), np.zeros((0, 6)))


def test_iteration_goes_over_the_first_dimension():
    rows = list(mt.constant(X))
    assert len(rows) == 3
    check(rows[2], X[2])
    with pytest.raises(TypeError):
        iter(mt.constant(1.0))
