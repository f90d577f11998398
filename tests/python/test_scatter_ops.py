"""mt.scatter_nd, mt.tensor_scatter_nd_update and mt.tensor_scatter_nd_add against TensorFlow
2.21's values, gradients and errors (recorded here), in eager code and mt.function."""

import re

import numpy as np
import pytest

import minitensor as mt

W = np.arange(12, dtype=np.float32).reshape(4, 3)


def test_scatter_nd_adds_duplicates_into_zeros():
    got = mt.scatter_nd([[4], [3], [1], [7]], [9, 10, 11, 12], [8])
    assert got.dtype == mt.int32
    np.testing.assert_array_equal(got.numpy(), [0, 11, 0, 10, 9, 0, 0, 12])
    np.testing.assert_array_equal(mt.scatter_nd([[1], [1]], [1.0, 2.0], [4]).numpy(),
                                  [0, 3, 0, 0])
    slices = mt.scatter_nd([[0], [2]], [[1.0, 2.0], [3.0, 4.0]], [3, 2])
    np.testing.assert_array_equal(slices.numpy(), [[1, 2], [0, 0], [3, 4]])
    # int64 indices and a shape given as an int64 tensor.
    pairs = mt.scatter_nd(mt.constant([[0, 1], [1, 0]], mt.int64), [5, 6],
                          mt.constant([2, 2], mt.int64))
    np.testing.assert_array_equal(pairs.numpy(), [[0, 5], [6, 0]])
    batched = mt.scatter_nd([[[0], [1]]], [[[1.0, 2.0], [3.0, 4.0]]], (3, 2))
    np.testing.assert_array_equal(batched.numpy(), [[1, 2], [3, 4], [0, 0]])


def test_tensor_scatters_update_and_add():
    np.testing.assert_array_equal(
        mt.tensor_scatter_nd_update([1.0, 2, 3, 4], [[1], [3]], [9.0, 10.0]).numpy(), [1, 9, 3, 10])
    np.testing.assert_array_equal(  # the last duplicate wins on the CPU, as in TensorFlow
        mt.tensor_scatter_nd_update([1.0, 2, 3, 4], [[1], [1]], [9.0, 10.0]).numpy(), [1, 10, 3, 4])
    np.testing.assert_array_equal(
        mt.tensor_scatter_nd_add([1.0, 2, 3, 4], [[1], [1]], [9.0, 10.0]).numpy(), [1, 21, 3, 4])
    # Integer updates into a float tensor take its dtype; bool updates are written.
    np.testing.assert_array_equal(
        mt.tensor_scatter_nd_update([1.0, 2, 3, 4], [[1], [2]], [9, 10]).numpy(), [1, 9, 10, 4])
    np.testing.assert_array_equal(
        mt.tensor_scatter_nd_update([True, False], [[1]], [True]).numpy(), [True, True])
    got = mt.tensor_scatter_nd_update(mt.constant([[1, 2], [3, 4]]),
                                      mt.constant([[1, 1]], mt.int64), [9])
    np.testing.assert_array_equal(got.numpy(), [[1, 2], [3, 9]])
    empty = mt.tensor_scatter_nd_update(mt.zeros([0]), mt.zeros([0, 1], mt.int32), mt.zeros([0]))
    assert empty.shape == (0,)


@pytest.mark.parametrize("fn, op", [
    (lambda i: mt.scatter_nd(i, [1.0, 2.0], [4]), "ScatterNd"),
    (lambda i: mt.tensor_scatter_nd_update([1.0, 2, 3, 4], i, [9.0, 10.0]), "TensorScatterUpdate"),
    (lambda i: mt.tensor_scatter_nd_add([1.0, 2, 3, 4], i, [9.0, 10.0]), "TensorScatterAdd"),
])
def test_rows_outside_the_output_are_tensorflows_error(fn, op):
    for bad, text in (([[1], [5]], "[5]"), ([[1], [-1]], "[-1]")):
        message = f"[{op}] indices[1] = {text} does not index into shape [4]"
        with pytest.raises(mt.errors.InvalidArgumentError, match=re.escape(message)):
            fn(bad)


def test_shape_errors_are_tensorflows():
    cases = [
        (lambda: mt.scatter_nd([[0], [2]], [1.0, 2.0, 3.0], [3]),
         "Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of "
         "updates[shape=[3]]"),
        (lambda: mt.scatter_nd([[0], [2]], [[1.0, 2.0, 3.0], [3.0, 4.0, 5.0]], [3, 2]),
         "Dimensions [1,2) of input[shape=[3,2]] must match dimensions [1,2) of "
         "updates[shape=[2,3]]"),
        (lambda: mt.scatter_nd(1, [1.0], [3]),
         "Indices shape must have rank at least one. Found:[]"),
        (lambda: mt.scatter_nd([[0]], [1.0], [-1]), "Dimension -1 must be >= 0"),
        (lambda: mt.scatter_nd([[0]], [1.0], [0]),
         "Indices and updates specified for empty output.  indices shape: [1,1]"),
        (lambda: mt.tensor_scatter_nd_update([1.0, 2, 3, 4], [[1], [2]], [9.0, 10.0, 11.0]),
         "Outer dimensions of indices and update must match. Indices shape: [2,1], updates "
         "shape:[3]"),
        (lambda: mt.tensor_scatter_nd_update([[1.0, 2], [3, 4]], [[1]], [[9.0, 10.0, 11.0]]),
         "The inner 1 dimensions of output.shape=[2,2] must match the inner 1 dimensions of "
         "updates.shape=[1,3]"),
        (lambda: mt.tensor_scatter_nd_update([[1.0, 2], [3, 4]], [[1, 0, 0]], [9.0]),
         "Inner dimensions of output shape must match inner dimensions of updates shape. "
         "Output: [2,2] updates: [1]"),
        (lambda: mt.tensor_scatter_nd_update(mt.zeros([0]), [[0]], [9.0]),
         "Indices and updates specified for empty output shape"),
    ]
    for fn, message in cases:
        with pytest.raises(mt.errors.InvalidArgumentError, match=re.escape(message)):
            fn()
    with pytest.raises(mt.errors.InvalidArgumentError, match="indices must be int32 or int64"):
        mt.scatter_nd([[0.0]], [1.0], [3])
    with pytest.raises(mt.errors.InvalidArgumentError, match="dtype bool is not supported"):
        mt.tensor_scatter_nd_add([True], [[0]], [True])


def test_gradients_are_tensorflows():
    u = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with mt.GradientTape() as tape:
        tape.watch(u)
        loss = mt.reduce_sum(mt.scatter_nd([[1], [3], [1]], u, [5, 2]) *
                             np.arange(10, dtype=np.float32).reshape(5, 2))
    np.testing.assert_array_equal(tape.gradient(loss, u).numpy(), [[2, 3], [6, 7], [2, 3]])
    x = mt.constant(W + 1)
    u2 = mt.constant([[-1.0, -2, -3], [-4, -5, -6]])
    with mt.GradientTape(persistent=True) as tape:
        tape.watch([x, u2])
        updated = mt.reduce_sum(mt.tensor_scatter_nd_update(x, [[2], [0]], u2) * W)
        added = mt.reduce_sum(mt.tensor_scatter_nd_add(x, [[2], [2]], u2) * W)
    dx, du = tape.gradient(updated, [x, u2])
    np.testing.assert_array_equal(dx.numpy(), [[0, 0, 0], [3, 4, 5], [0, 0, 0], [9, 10, 11]])
    np.testing.assert_array_equal(du.numpy(), [[6, 7, 8], [0, 1, 2]])
    dx, du = tape.gradient(added, [x, u2])
    np.testing.assert_array_equal(dx.numpy(), W)
    np.testing.assert_array_equal(du.numpy(), [[6, 7, 8], [6, 7, 8]])


def test_scatters_trace_into_functions():
    @mt.function
    def f(u, t):
        return mt.scatter_nd([[1], [0]], u, [3]) + mt.tensor_scatter_nd_add(t, [[2]], u[:1])

    np.testing.assert_array_equal(f(mt.constant([1.0, 2.0]), mt.constant([1.0, 1.0, 1.0])).numpy(),
                                  [3, 2, 2])
