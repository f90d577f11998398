"""The comparisons, mt.where, mt.argmax/argmin, mt.nn.bias_add and
mt.nn.sparse_softmax_cross_entropy_with_logits against NumPy, on every device the package
sees, and Tensor's comparison operators as tf.Tensor has them."""

import numpy as np
import pytest

import minitensor as mt


def _devices():
    return ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(mt.config.list_logical_devices("GPU")))]




_DTYPES = [np.float32, np.float64, np.int32, np.int64, np.float16]
_COMPARISONS = [(mt.equal, np.equal), (mt.not_equal, np.not_equal), (mt.less, np.less),
                (mt.less_equal, np.less_equal), (mt.greater, np.greater),
                (mt.greater_equal, np.greater_equal)]


def _values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-3, 4, shape).astype(dtype)  # ties on purpose


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shapes", [((7,), (7,)), ((3, 1), (1, 5)), ((2, 3, 4), (4,)),
                                    ((0, 3), (3,)), ((), (1001,))])
def test_comparisons_match_numpy(device, dtype, shapes):
    a, b = _values(shapes[0], dtype, 1), _values(shapes[1], dtype, 2)
    for op, ref in _COMPARISONS:
        with mt.device(device):
            got = op(mt.constant(a), mt.constant(b))
        assert got.dtype == mt.bool
        np.testing.assert_array_equal(got.numpy(), ref(a, b), err_msg=op.__name__)


@pytest.mark.parametrize("device", _devices())
def test_comparisons_follow_ieee_for_nan_and_signed_zero(device):
    a = np.array([np.nan, np.nan, 1.0, -0.0], np.float32)
    b = np.array([np.nan, 1.0, np.nan, 0.0], np.float32)
    with mt.device(device):
        x, y = mt.constant(a), mt.constant(b)
        for op, ref in _COMPARISONS:
            with np.errstate(invalid="ignore"):
                np.testing.assert_array_equal(op(x, y).numpy(), ref(a, b))


def test_equal_takes_bool_and_orderings_do_not():
    t, f = mt.constant([True, False]), mt.constant([True, True])
    np.testing.assert_array_equal(mt.equal(t, f).numpy(), [True, False])
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[Less\] dtype bool"):
        mt.less(t, f)


def test_comparisons_reject_mixed_dtypes_and_unbroadcastable_shapes():
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[Equal\] dtypes differ"):
        mt.equal(mt.constant([1, 2]), mt.constant([1.0, 2.0]))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[Less\] shapes cannot"):
        mt.less(mt.constant([1, 2]), mt.constant([1, 2, 3]))


def test_tensor_operators_compare_as_tf_tensor_does():
    a = mt.constant([1.0, 2.0, 3.0])
    np.testing.assert_array_equal((a == 2.0).numpy(), [False, True, False])
    np.testing.assert_array_equal((a != [1.0, 0.0, 3.0]).numpy(), [False, True, False])
    np.testing.assert_array_equal((a < 2).numpy(), [True, False, False])
    np.testing.assert_array_equal((a <= 2).numpy(), [True, True, False])
    np.testing.assert_array_equal((a > 2).numpy(), [False, False, True])
    np.testing.assert_array_equal((a >= 2).numpy(), [False, True, True])
    np.testing.assert_array_equal((2 < a).numpy(), [False, False, True])  # reflected
    assert (a == None) is False  # noqa: E711  (TensorFlow's answer)
    assert (a != None) is True  # noqa: E711
    unequal = a == mt.constant([1.0, 2.0])  # shapes that cannot broadcast: a scalar False
    assert unequal.shape == () and not bool(unequal)
    assert bool(a != mt.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="Cannot convert"):
        a == "x"  # noqa: B015
    with pytest.raises(mt.errors.InvalidArgumentError):
        a < mt.constant([1.0, 2.0])  # noqa: B015


def test_tensor_truth_value_and_hash():
    assert bool(mt.constant(True)) and not bool(mt.constant([0]))
    assert bool(mt.constant(2.5))
    with pytest.raises(ValueError, match="only a tensor with one element"):
        bool(mt.constant([1, 2]))
    t = mt.constant([1, 2])
    with pytest.raises(TypeError, match="unhashable"):
        hash(t)
    refs = {t.ref(): "t"}
    assert refs[t.ref()] == "t" and t.ref().deref() is t


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", _DTYPES + [np.bool_])
@pytest.mark.parametrize("shapes", [((4,), (4,), (4,)), ((3, 1), (1, 4), (4,)),
                                    ((), (2, 3), (2, 3)), ((2, 1, 3), (5, 1), (1,)),
                                    ((0, 2), (2,), (2,)), ((3000,), (3000,), ())])
def test_where_selects_with_three_way_broadcasting(device, dtype, shapes):
    rng = np.random.default_rng(3)
    c = rng.integers(0, 2, shapes[0]).astype(bool)
    x, y = _values(shapes[1], dtype, 4), _values(shapes[2], dtype, 5)
    with mt.device(device):
        got = mt.where(mt.constant(c), mt.constant(x), mt.constant(y))
    assert got.dtype == mt.as_dtype(dtype)
    np.testing.assert_array_equal(got.numpy(), np.where(c, x, y))


def test_where_converts_python_values_and_checks_its_inputs():
    c = mt.constant([True, False, True])
    np.testing.assert_array_equal(mt.where(c, mt.constant([1.0, 2.0, 3.0]), 0.0).numpy(),
                                  [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(mt.where(c, 7, mt.constant([1, 2, 3])).numpy(), [7, 2, 7])
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[SelectV2\] condition must be"):
        mt.where(mt.constant([1.0]), mt.constant([1.0]), mt.constant([2.0]))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[SelectV2\] dtypes differ"):
        mt.where(c, mt.constant([1.0, 2.0, 3.0]), mt.constant([1, 2, 3]))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[SelectV2\] shapes cannot"):
        mt.where(mt.constant([True, False]), mt.constant([1.0, 2.0, 3.0]), 0.0)
    with pytest.raises(NotImplementedError):
        mt.where(c)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 0), ((3, 5), 1), ((3, 5), -1),
                                        ((2, 3, 4), 1), ((64, 1000), 1), ((1000, 3), 0),
                                        ((4, 0), 0)])
def test_argmax_and_argmin_match_numpy(device, dtype, shape, axis):
    x = _values(shape, dtype, 6)
    for fn, ref in [(mt.argmax, np.argmax), (mt.argmin, np.argmin)]:
        for out in [mt.int64, mt.int32]:
            with mt.device(device):
                got = fn(mt.constant(x), axis=axis, output_type=out)
            assert got.dtype == out
            np.testing.assert_array_equal(got.numpy(), ref(x, axis=axis))


@pytest.mark.parametrize("device", _devices())
def test_argmax_skips_nan_as_tensorflow_does(device):
    x = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [-np.inf, -np.inf, 2.0]],
                 np.float32)
    with mt.device(device):
        t = mt.constant(x)
        np.testing.assert_array_equal(mt.argmax(t, 1).numpy(), [2, 0, 2])
        np.testing.assert_array_equal(mt.argmin(t, 1).numpy(), [0, 0, 0])
        assert mt.math.argmax(t).numpy().tolist() == [0, 0, 0]  # axis None is 0


def test_argmax_errors():
    x = mt.constant([[1.0, 2.0]])
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[ArgMax\] axis 2 is out of"):
        mt.argmax(x, 2)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[ArgMin\] reduction axis 0 is"):
        mt.argmin(mt.zeros([0, 3]), 0)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"output_type must be int32"):
        mt.argmax(x, 1, output_type=mt.float32)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[ArgMax\] dtype bool"):
        mt.argmax(mt.constant([True]))


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (4, 5, 8), (0, 4), (1000, 3)])
def test_bias_add_matches_numpy(device, dtype, shape):
    v, b = _values(shape, dtype, 7), _values(shape[-1:], dtype, 8)
    with mt.device(device):
        got = mt.nn.bias_add(mt.constant(v), mt.constant(b))
    np.testing.assert_array_equal(got.numpy(), v + b)


def test_bias_add_errors():
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[BiasAdd\] value must have >= 2"):
        mt.nn.bias_add(mt.constant([1.0, 2.0]), mt.constant([1.0, 2.0]))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[BiasAdd\] bias must be 1-D"):
        mt.nn.bias_add(mt.zeros([2, 4]), mt.zeros([1, 4]))
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"bias has 3 elements"):
        mt.nn.bias_add(mt.zeros([2, 4]), mt.zeros([3]))


def _xent(labels, logits):
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=-1, keepdims=True)) + m
    return (lse[..., 0] - np.take_along_axis(x, labels[..., None], -1)[..., 0])


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(2, 3), (64, 10), (5, 1000), (0, 4), (3, 2, 7), (4,)])
def test_sparse_softmax_cross_entropy_matches_numpy(device, dtype, label_dtype, shape):
    rng = np.random.default_rng(9)
    logits = rng.uniform(-4, 4, shape).astype(dtype)
    labels = rng.integers(0, shape[-1], shape[:-1]).astype(label_dtype)
    with mt.device(device):
        loss = mt.nn.sparse_softmax_cross_entropy_with_logits(
            labels=mt.constant(labels), logits=mt.constant(logits))
    assert loss.shape == shape[:-1] and loss.dtype == mt.as_dtype(dtype)
    tol = {np.float32: 1e-5, np.float64: 1e-12, np.float16: 5e-3}[dtype]
    np.testing.assert_allclose(loss.numpy().astype(np.float64), _xent(labels, logits),
                               rtol=tol, atol=tol)


def test_sparse_softmax_cross_entropy_values_and_gradient_are_tensorflows():
    # tensorflow-cpu 2.21 gives these for the same call (float32).
    logits = mt.constant([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    labels = mt.constant([2, 0])
    np.testing.assert_allclose(
        mt.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits).numpy(),
        [0.407605946, 1.09861231], rtol=1e-6)


def test_sparse_softmax_cross_entropy_errors():
    logits = mt.constant([[1.0, 2.0, 3.0]])
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"Received a label value of 5 "
                       r"which is outside the valid range of \[0, 3\)"):
        with mt.device("/CPU:0"):
            mt.nn.sparse_softmax_cross_entropy_with_logits(labels=mt.constant([5]), logits=logits)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"labels of shape \(2,\) need"):
        mt.nn.sparse_softmax_cross_entropy_with_logits(labels=mt.constant([0, 1]), logits=logits)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"labels must be int32 or int64"):
        mt.nn.sparse_softmax_cross_entropy_with_logits(labels=mt.constant([0.0]), logits=logits)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"at least one class"):
        mt.nn.sparse_softmax_cross_entropy_with_logits(labels=mt.constant([0]),
                                                       logits=mt.zeros([1, 0]))


@pytest.mark.skipif(not mt.config.list_logical_devices("GPU"), reason="needs a GPU")
def test_sparse_softmax_cross_entropy_gives_nan_for_a_bad_label_on_a_gpu():
    with mt.device("/GPU:0"):
        loss = mt.nn.sparse_softmax_cross_entropy_with_logits(
            labels=mt.constant([5, 0]), logits=mt.constant([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]))
    got = loss.numpy()
    assert np.isnan(got[0]) and abs(got[1] - 1.09861231) < 1e-6
