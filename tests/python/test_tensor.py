"""Tensors, constants, ops and operators from Python."""

import numpy as np
import pytest

import minitensor as mt


def test_constant_infers_dtypes_as_tensorflow():
    assert mt.constant(1.5).dtype == mt.float32
    assert mt.constant([1, 2]).dtype == mt.int32
    assert mt.constant([2**40]).dtype == mt.int64
    assert mt.constant(True).dtype == mt.bool
    assert mt.constant(np.zeros(2)).dtype == mt.float64
    assert mt.constant(np.zeros(2, np.int64)).dtype == mt.int64
    assert mt.constant([1, 2], dtype=mt.float64).dtype == mt.float64
    assert mt.constant([1, 2], dtype="int64").dtype == mt.int64


def test_constant_has_shape_dtype_device_and_values():
    t = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert t.shape == (2, 3)
    assert t.ndim == 2 and len(t) == 2
    assert t.device == "/job:localhost/replica:0/task:0/device:CPU:0" or "GPU" in t.device
    np.testing.assert_array_equal(t.numpy(), [[1, 2, 3], [4, 5, 6]])
    assert t.numpy().dtype == np.float32
    assert mt.constant(3.0).shape == ()


def test_constant_with_shape_fills_or_reshapes():
    np.testing.assert_array_equal(mt.constant(0.5, shape=(2, 2)).numpy(), np.full((2, 2), 0.5))
    assert mt.constant([1, 2, 3, 4], shape=[2, 2]).shape == (2, 2)


def test_ragged_list_is_rejected():
    with pytest.raises(ValueError):
        mt.constant([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("value, shown", [
    (2**70, 2**70), (-2**70, -2**70), (2**63, 2**63), ([1, 2**64], 2**64), ([-1, 2**63], 2**63)])
def test_int_past_int64_is_a_value_error(value, shown):
    with pytest.raises(ValueError, match=rf"Can't convert Python int {shown} to Tensor: it is "
                                         r"out of range for int64 \[-2\*\*63, 2\*\*63 - 1\]"):
        mt.constant(value)


def test_ints_at_the_ends_of_int64_are_int64():
    np.testing.assert_array_equal(mt.constant([-2**63, 2**63 - 1]).numpy(), [-2**63, 2**63 - 1])
    assert mt.constant(2**63 - 1).dtype == mt.int64


def test_unsupported_numpy_dtype_is_a_type_error():
    with pytest.raises(TypeError):
        mt.constant(np.zeros(2, np.complex64))


def test_float16_round_trips_through_numpy():
    a = np.array([0.1, 2.0, np.inf], np.float16)
    t = mt.constant(a)
    assert t.dtype == mt.float16 and mt.half == mt.float16
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().dtype == np.float16
    assert str(mt.constant([0.1, 2, 3], dtype=mt.float16)) == (
        "Tensor([0.1 2.  3. ], shape=(3,), dtype=float16)")
    with mt.device("/CPU:0"):  # the buffer protocol serves host tensors only
        np.testing.assert_array_equal(np.asarray(memoryview(mt.constant(a))), a)


def test_bfloat16_rounds_through_float32_and_has_no_numpy_array():
    t = mt.constant([1.5, 0.1], dtype=mt.bfloat16)
    assert t.dtype == mt.bfloat16
    assert str(t) == "Tensor([1.5 0.100098], shape=(2,), dtype=bfloat16)"
    np.testing.assert_array_equal(mt.cast(t, mt.float32).numpy(),
                                  np.array([1.5, 0.10009765625], np.float32))
    with pytest.raises(TypeError, match="NumPy has no bfloat16"):
        t.numpy()
    with mt.device("/CPU:0"), pytest.raises(BufferError, match="bfloat16 has no buffer format"):
        memoryview(mt.constant([1.5], dtype=mt.bfloat16))
    assert float(mt.constant(0.1, dtype=mt.bfloat16)) == 0.10009765625
    assert repr(t) == "<mt.Tensor: shape=(2,), dtype=bfloat16, numpy=array([1.5       , 0.10009766], dtype=bfloat16)>"
    with pytest.raises(TypeError):
        mt.bfloat16.as_numpy_dtype


def test_mixing_half_dtypes_is_an_error():
    with pytest.raises(mt.errors.InvalidArgumentError, match="dtypes differ: bfloat16 vs float16"):
        mt.add(mt.constant([1.0], dtype=mt.bfloat16), mt.constant([1.0], dtype=mt.float16))


def test_str_is_the_cpp_format_and_repr_is_tensorflows():
    c = mt.constant([[22.0, 28.0], [49.0, 64.0]])
    assert str(c) == "Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)"
    assert repr(c) == ("<mt.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
                       "array([[22., 28.],\n       [49., 64.]], dtype=float32)>")
    assert repr(mt.constant(3.0)) == "<mt.Tensor: shape=(), dtype=float32, numpy=3.0>"
    assert repr(mt.constant([1, 2])) == (
        "<mt.Tensor: shape=(2,), dtype=int32, numpy=array([1, 2], dtype=int32)>")
    assert repr(mt.float32) == "mt.float32"


def test_ops_compute_as_numpy():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    ta, tb = mt.constant(a), mt.constant(b)
    np.testing.assert_allclose(mt.matmul(ta, tb).numpy(), a @ b)
    np.testing.assert_allclose(mt.matmul(ta, ta, transpose_b=True).numpy(), a @ a.T)
    np.testing.assert_allclose(mt.add_n([ta, ta, ta]).numpy(), 3 * a)
    np.testing.assert_allclose(mt.add(ta, ta).numpy(), a + a)
    np.testing.assert_allclose(mt.subtract(ta, ta).numpy(), a - a)
    np.testing.assert_allclose(mt.multiply(ta, ta).numpy(), a * a)
    np.testing.assert_allclose(mt.divide(ta, ta + 1).numpy(), a / (a + 1))
    np.testing.assert_allclose(mt.exp(ta).numpy(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(mt.nn.relu(ta - 2).numpy(), np.maximum(a - 2, 0))
    np.testing.assert_allclose(mt.abs(-ta).numpy(), a)
    np.testing.assert_allclose(mt.reduce_sum(ta).numpy(), a.sum())
    np.testing.assert_allclose(mt.reduce_sum(ta, 0).numpy(), a.sum(0))
    np.testing.assert_allclose(mt.reduce_mean(ta, [0, 1], keepdims=True).numpy(),
                               a.mean(keepdims=True))
    np.testing.assert_allclose(mt.reduce_max(ta, axis=-1).numpy(), a.max(-1))
    assert mt.cast(ta, mt.int32).numpy().tolist() == a.astype(np.int32).tolist()
    np.testing.assert_array_equal(mt.identity(ta).numpy(), a)


def test_operators_broadcast_and_convert_python_values():
    t = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal((t + 1).numpy(), [[2, 3], [4, 5]])
    np.testing.assert_array_equal((1 - t).numpy(), [[0, -1], [-2, -3]])
    np.testing.assert_array_equal((t * [10.0, 100.0]).numpy(), [[10, 200], [30, 400]])
    np.testing.assert_allclose((2 / t).numpy(), [[2, 1], [2 / 3, 0.5]], rtol=1e-6)
    np.testing.assert_array_equal((-t).numpy(), [[-1, -2], [-3, -4]])
    np.testing.assert_array_equal(abs(-t).numpy(), t.numpy())
    assert (mt.constant([1, 2]) * 2).dtype == mt.int32


def test_zeros_ones_fill():
    assert mt.zeros((2, 3)).numpy().tolist() == [[0.0] * 3] * 2
    assert mt.ones([2], dtype=mt.int64).numpy().tolist() == [1, 1]
    assert mt.ones([2], dtype=mt.int64).dtype == mt.int64
    assert mt.fill([3], 7).numpy().tolist() == [7, 7, 7]
    assert mt.fill([2], 0.5).dtype == mt.float32


def test_python_scalars_from_one_element_tensors():
    assert float(mt.constant(2.5)) == 2.5
    assert int(mt.constant([7])) == 7
    assert bool(mt.constant(True))
    with pytest.raises(ValueError):
        float(mt.constant([1.0, 2.0]))


def test_bad_shapes_raise_invalid_argument_with_the_op_name():
    a = mt.constant([[1.0, 2.0, 3.0]])
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"^\[MatMul\]") as info:
        mt.matmul(a, a)
    assert isinstance(info.value, mt.errors.OpError)
    assert info.value.error_code == mt.errors.INVALID_ARGUMENT
    assert str(info.value) == info.value.message


def test_mismatched_dtypes_raise_invalid_argument():
    with pytest.raises(mt.errors.InvalidArgumentError):
        mt.add(mt.constant([1.0]), mt.constant([1]))


def test_device_scope_places_ops_and_unknown_device_is_not_found():
    with mt.device("/CPU:0"):
        t = mt.constant([1.0])
    assert t.device.endswith("CPU:0")
    assert mt.config.get_soft_device_placement()  # TensorFlow 2's default
    with mt.device("/device:GPU:7"):
        assert not mt.constant([1.0]).device.endswith("GPU:7")  # the best existing device
    mt.config.set_soft_device_placement(False)
    try:
        with pytest.raises(mt.errors.NotFoundError, match="unknown device"):
            with mt.device("/device:GPU:7"):
                mt.constant([1.0])
    finally:
        mt.config.set_soft_device_placement(True)
    with pytest.raises(mt.errors.InvalidArgumentError):
        with mt.device("/nonsense:"):
            pass


def test_error_hierarchy_is_tensorflows():
    for name in ["InvalidArgumentError", "NotFoundError", "ResourceExhaustedError",
                 "FailedPreconditionError", "InternalError", "UnknownError"]:
        cls = getattr(mt.errors, name)
        assert issubclass(cls, mt.errors.OpError) and cls.__module__ == "minitensor.errors"
    e = mt.errors.NotFoundError(None, None, "no such device")
    assert (str(e), e.message, e.error_code) == ("no such device", "no such device",
                                                 mt.errors.NOT_FOUND)


def test_ops_take_python_scalars_lists_and_arrays_as_tensorflow_does():
    t = mt.constant([1.0, 2.0])
    assert mt.add(t, 1.0).numpy().tolist() == [2.0, 3.0]      # converted to t's dtype
    assert mt.subtract(5, t).numpy().tolist() == [4.0, 3.0]
    assert mt.add(1, 2).dtype == mt.int32                      # both converted: int32
    assert mt.exp([0.0]).numpy().tolist() == [1.0]
    assert mt.reduce_sum([[1, 2], [3, 4]], 0).numpy().tolist() == [4, 6]
    assert mt.nn.relu(np.array([-1.0, 2.0])).dtype == mt.float64  # NumPy keeps its dtype
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"\[Exp\] dtype int32"):
        mt.exp([1])
