"""Zero-copy interchange: the buffer protocol, __array__ and DLPack, with NumPy on the CPU
and with PyTorch (when installed) on the CPU and the GPU."""

import gc
import sys

import numpy as np
import pytest

import minitensor as mt


def host_pointer(array):
    return array.__array_interface__["data"][0]


def test_buffer_protocol_is_a_read_only_view_that_keeps_the_tensor_alive():
    with mt.device("/CPU:0"):
        t = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    view = memoryview(t)
    assert (view.format, view.shape, view.strides, view.readonly) == ("f", (2, 2), (8, 4), True)
    a = np.asarray(t)
    assert a.dtype == np.float32 and not a.flags.writeable
    assert host_pointer(a) == host_pointer(np.asarray(t))  # the same memory, no copy
    del t
    gc.collect()
    assert a.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_every_dtype_round_trips_through_numpy():
    for values in [np.arange(4, dtype=np.float64), np.arange(4, dtype=np.int32),
                   np.arange(4, dtype=np.int64), np.array([True, False])]:
        with mt.device("/CPU:0"):
            t = mt.constant(values)
        np.testing.assert_array_equal(np.asarray(t), values)
        np.testing.assert_array_equal(np.from_dlpack(t), values)
        assert np.asarray(t).dtype == values.dtype


def test_numpy_copies_and_array_accepts_dtype():
    with mt.device("/CPU:0"):
        t = mt.constant([1.0, 2.0])
    n = t.numpy()
    n[0] = 5  # a copy: the tensor is unchanged
    assert t.numpy().tolist() == [1.0, 2.0]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64


def test_numpy_from_dlpack_shares_memory():
    with mt.device("/CPU:0"):
        t = mt.constant([1.0, 2.0, 3.0])
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    assert host_pointer(a) == host_pointer(np.asarray(t))
    del t
    gc.collect()
    assert a.tolist() == [1.0, 2.0, 3.0]  # the pool block outlives the tensor


def test_from_dlpack_wraps_numpy_memory_and_keeps_it_alive():
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = mt.from_dlpack(source)
    assert t.shape == (2, 3) and t.dtype == mt.float32
    assert host_pointer(np.asarray(t)) == host_pointer(source)  # no copy
    refs = sys.getrefcount(source)
    del source
    gc.collect()
    np.testing.assert_array_equal(mt.reduce_sum(t, 1).numpy(), [3.0, 12.0])
    assert refs > 2


def test_from_dlpack_rejects_non_contiguous_and_unsupported_arrays():
    with pytest.raises(TypeError):
        mt.from_dlpack(np.arange(6, dtype=np.float32).reshape(2, 3).T)
    with pytest.raises(TypeError):
        mt.from_dlpack(np.zeros(2, np.complex64))


def test_from_dlpack_takes_float16_without_a_copy():
    source = np.array([0.5, -2.0], np.float16)
    t = mt.from_dlpack(source)
    assert t.dtype == mt.float16
    np.testing.assert_array_equal(t.numpy(), source)


def test_torch_cpu_shares_memory_both_ways():
    torch = pytest.importorskip("torch")
    with mt.device("/CPU:0"):
        t = mt.constant([1.0, 2.0, 3.0])
    x = torch.from_dlpack(t)
    assert x.data_ptr() == host_pointer(np.asarray(t))
    back = mt.from_dlpack(x)
    assert host_pointer(np.asarray(back)) == x.data_ptr()
    assert back.numpy().tolist() == [1.0, 2.0, 3.0]


def test_torch_gpu_shares_the_device_pointer_both_ways(needs_gpu):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    with mt.device("/GPU:0"):
        t = mt.constant(np.arange(1024, dtype=np.float32))
    assert t.__dlpack_device__() == (2, 0)
    x = torch.from_dlpack(t)
    assert x.is_cuda
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(1024, dtype=np.float32))
    # The same device memory: what the capsule carries is the tensor's buffer.
    capsule_ptr = x.data_ptr()
    y = torch.arange(8, dtype=torch.float32, device="cuda") * 2  # pending work on torch's stream
    back = mt.from_dlpack(y)
    assert back.device.endswith("GPU:0")
    np.testing.assert_array_equal(back.numpy(), np.arange(8) * 2.0)
    z = torch.from_dlpack(back)
    assert z.data_ptr() == y.data_ptr()
    with mt.device("/GPU:0"):
        s = mt.reduce_sum(back * 2.0)
    assert float(s) == 112.0
    # The pool block stays alive while torch holds it.
    del t
    gc.collect()
    assert x.data_ptr() == capsule_ptr
    np.testing.assert_array_equal(x.cpu().numpy(), np.arange(1024, dtype=np.float32))


def test_gpu_tensor_has_no_host_buffer_but_converts(needs_gpu):
    with mt.device("/GPU:0"):
        t = mt.constant([1.0, 2.0])
    with pytest.raises(BufferError):
        memoryview(t)
    assert np.asarray(t).tolist() == [1.0, 2.0]
    assert np.asarray(t.numpy()).tolist() == [1.0, 2.0]


def test_dlpack_honours_the_consumers_device_and_copy_requests():
    # DLPack 1.0 (Note [DLPack device requests] in python/src/dlpack.cc): device="cpu" is
    # the tensor's own memory here; copy=True a writable host copy; other devices refuse.
    with mt.device("/CPU:0"):
        t = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    same = np.from_dlpack(t, device="cpu")
    assert host_pointer(same) == host_pointer(np.asarray(t))
    assert host_pointer(np.from_dlpack(t, copy=False)) == host_pointer(np.asarray(t))
    copied = np.from_dlpack(t, copy=True)
    assert host_pointer(copied) != host_pointer(np.asarray(t))
    copied[0, 0] = 9.0
    assert t.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(BufferError, match=r"can be exported to its own device or the CPU, "
                                          r"\(1, 0\); not to \(2, 0\)"):
        t.__dlpack__(dl_device=(2, 0))


def test_a_gpu_tensor_reaches_numpy_through_dlpack_by_a_host_copy(needs_gpu):
    with mt.device("/GPU:0"):
        t = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    assert t.__dlpack_device__()[0] == 2
    a = np.from_dlpack(t, device="cpu")
    np.testing.assert_array_equal(a, [[1.0, 2.0], [3.0, 4.0]])
    a[0, 0] = 5.0  # the consumer's own copy
    assert t.numpy()[0, 0] == 1.0
    with pytest.raises(BufferError, match="reaches the CPU only by a copy, and copy=False"):
        np.from_dlpack(t, device="cpu", copy=False)
    with pytest.raises(BufferError, match="copy=True of a tensor on .*GPU:0 to its own device"):
        t.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="copy=True of a tensor on .*GPU:0 to its own device"):
        t.__dlpack__(dl_device=t.__dlpack_device__(), copy=True)  # never a host capsule
