"""mt.nn.softmax and mt.nn.log_softmax against NumPy, on every device the package sees."""

import numpy as np
import pytest

import minitensor as mt


def _softmax(x):
    if x.size == 0:
        return x.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def _log_softmax(x):
    if x.size == 0:
        return x.copy()
    with np.errstate(invalid="ignore", divide="ignore"):
        d = x - x.max(axis=-1, keepdims=True)
        return d - np.log(np.exp(d).sum(axis=-1, keepdims=True))


def _devices():
    return ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(mt.config.list_logical_devices("GPU")))]


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("shape", [(5,), (3, 7), (2, 3, 33), (4, 4096), (0, 3), (3, 0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_softmax_and_log_softmax_match_numpy(device, shape, dtype):
    x = np.random.default_rng(0).uniform(-5, 5, shape).astype(dtype)
    wide = x.astype(np.float64)
    rtol = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 4e-3}[dtype]
    atol = {np.float32: 1e-6, np.float64: 1e-12, np.float16: 4e-3}[dtype]
    with mt.device(device):
        y = mt.nn.softmax(mt.constant(x))
        l = mt.nn.log_softmax(mt.constant(x), axis=-1)
    assert y.dtype == mt.as_dtype(dtype) and y.shape == shape
    np.testing.assert_allclose(y.numpy().astype(np.float64), _softmax(wide), rtol=rtol, atol=atol)
    np.testing.assert_allclose(l.numpy().astype(np.float64), _log_softmax(wide), rtol=rtol,
                               atol=atol * 8)


def test_softmax_accepts_lists_and_the_last_axis_by_number():
    y = mt.nn.softmax([[1.0, 1.0], [0.0, np.log(3.0)]], axis=1)
    np.testing.assert_allclose(y.numpy(), [[0.5, 0.5], [0.25, 0.75]], rtol=1e-6)


def test_softmax_bfloat16_computes_in_float32():
    x = mt.cast(mt.constant([[0.0, 0.0, 0.0, 0.0]]), mt.bfloat16)
    y = mt.cast(mt.nn.softmax(x), mt.float32)
    np.testing.assert_array_equal(y.numpy(), [[0.25, 0.25, 0.25, 0.25]])


@pytest.mark.parametrize("device", _devices())
def test_non_finite_rows_as_tensorflow(device):
    inf, nan = np.inf, np.nan
    x = np.array([[nan, 1], [inf, 1], [-inf, -inf], [-inf, 0]], np.float32)
    with mt.device(device):
        y = mt.nn.softmax(mt.constant(x)).numpy()
        l = mt.nn.log_softmax(mt.constant(x)).numpy()
    assert np.isnan(y[:3]).all() and np.isnan(l[:3]).all()
    np.testing.assert_array_equal(y[3], [0, 1])
    np.testing.assert_array_equal(l[3], [-inf, 0])


def test_softmax_rejects_scalars_integers_and_other_axes():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[Softmax\] logits must have >= 1 dimension, got shape \(\)$"):
        mt.nn.softmax(mt.constant(1.0))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[LogSoftmax\] dtype int32 is not supported"):
        mt.nn.log_softmax(mt.constant([1, 2]))


def test_softmax_over_another_axis_gives_tensorflows_values():
    x = mt.constant([[1.0, 2.0, 3.0], [4.0, 6.0, 5.0]])
    np.testing.assert_allclose(  # tf.nn.softmax(x, axis=0), TensorFlow 2.21
        mt.nn.softmax(x, axis=0).numpy(),
        [[0.04742587, 0.01798621, 0.11920291], [0.95257413, 0.98201376, 0.88079703]],
        rtol=1e-6)
    np.testing.assert_allclose(
        mt.nn.log_softmax(x, axis=-2).numpy(),
        [[-3.04858732, -4.01814985, -2.12692809], [-0.04858733, -0.01814996, -0.12692805]],
        rtol=1e-6)
    y = mt.random.normal([2, 3, 4])
    np.testing.assert_allclose(mt.nn.softmax(y, axis=1).numpy(),
                               np.swapaxes(mt.nn.softmax(mt.transpose(y, [0, 2, 1])).numpy(),
                                           1, 2), rtol=1e-6)


@pytest.mark.parametrize("axis", [2, -3])
def test_softmax_refuses_an_axis_out_of_range(axis):
    with pytest.raises(mt.errors.InvalidArgumentError, match=(
            r"^`dim` must be in the range \[-2, 2\) where 2 is the number of dimensions in the "
            rf"input. Received: dim={axis}$")):
        mt.nn.softmax(mt.constant([[1.0, 2.0]]), axis=axis)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("shapes", [((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)),
                                    ((2, 3), (7, 1, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
                                    ((0, 2, 3), (3, 4)), ((3, 2, 0), (3, 0, 4))])
def test_matmul_above_rank_2_broadcasts_the_batch_as_numpy(device, dtype, shapes):
    if "GPU" in device and dtype == np.int32:
        pytest.skip("integer matmul has no GPU kernel (placement would fall back to the CPU)")
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, shapes[0]).astype(dtype)
    b = rng.integers(-3, 4, shapes[1]).astype(dtype)
    with mt.device(device):
        c = mt.matmul(mt.constant(a), mt.constant(b))
        d = mt.constant(a) @ mt.constant(b)
        e = mt.linalg.matmul(mt.constant(np.swapaxes(a, -1, -2).copy()), mt.constant(b),
                             adjoint_a=True)
    want = np.matmul(a, b)
    for got in (c, d, e):
        assert got.dtype == mt.as_dtype(dtype)
        np.testing.assert_array_equal(got.numpy(), want)


def test_matmul_transposes_batches():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3, 2)).astype(np.float32)
    b = rng.standard_normal((4, 5, 3)).astype(np.float32)
    c = mt.matmul(mt.constant(a), mt.constant(b), transpose_a=True, transpose_b=True)
    np.testing.assert_allclose(c.numpy(), np.swapaxes(a, -1, -2) @ np.swapaxes(b, -1, -2),
                               rtol=1e-5, atol=1e-5)


def test_matmul_rejects_batches_that_do_not_broadcast_and_double_transposes():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[BatchMatMulV2\] In\[0\] and In\[1\] must have compatible batch"):
        mt.matmul(mt.zeros((2, 2, 3)), mt.zeros((3, 3, 4)))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[BatchMatMulV2\] Matrix size-incompatible"):
        mt.zeros((2, 2, 3)) @ mt.zeros((2, 2, 3))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[matmul\] Only one of transpose_a and adjoint_a can be True\.$"):
        mt.matmul(mt.zeros((2, 2)), mt.zeros((2, 2)), transpose_a=True, adjoint_a=True)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.float16])
def test_reduce_min_and_prod_match_numpy(device, dtype):
    x = np.random.default_rng(3).integers(-3, 4, (4, 5, 3)).astype(dtype)
    with mt.device(device):
        t = mt.constant(x)
        for axis in (None, 0, 1, -1, [0, 2]):
            ax = tuple(axis) if isinstance(axis, list) else axis
            np.testing.assert_array_equal(mt.reduce_min(t, axis).numpy(), x.min(axis=ax))
            np.testing.assert_array_equal(mt.reduce_prod(t, axis, keepdims=True).numpy(),
                                          x.prod(axis=ax, keepdims=True))


@pytest.mark.parametrize("device", _devices())
def test_reduce_any_and_all_match_numpy(device):
    x = np.random.default_rng(4).integers(0, 2, (3, 4, 5)).astype(bool)
    with mt.device(device):
        t = mt.constant(x)
        for axis in (None, 0, 1, -1, [0, 2]):
            ax = tuple(axis) if isinstance(axis, list) else axis
            np.testing.assert_array_equal(mt.reduce_any(t, axis).numpy(), x.any(axis=ax))
            np.testing.assert_array_equal(mt.reduce_all(t, axis).numpy(), x.all(axis=ax))
        empty = mt.constant(np.zeros((2, 0), bool))
        np.testing.assert_array_equal(mt.reduce_any(empty, 1).numpy(), [False, False])
        np.testing.assert_array_equal(mt.reduce_all(empty, 1).numpy(), [True, True])


def test_reduce_min_propagates_nan_and_any_rejects_floats():
    assert np.isnan(mt.reduce_min(mt.constant([1.0, np.nan, 0.0])).numpy())
    assert mt.reduce_min(mt.zeros((2, 0)), 1).numpy().tolist() == [np.inf, np.inf]
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[Any\] dtype float32 is not supported; expected one of bool$"):
        mt.reduce_any(mt.constant([1.0, 0.0]))
