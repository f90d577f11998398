"""The shape ops' integer arguments (shape, perm, axis, begin, size, multiples) taken as
TensorFlow takes them: tensors, variables, NumPy arrays and lists holding scalar tensors,
with TensorFlow's values; a tensor among them is a host read while mt.function traces."""

import numpy as np
import pytest

import minitensor as mt

X = np.arange(12, dtype=np.float32).reshape(3, 4)


# The values TensorFlow 2.21 gives for the same calls (tf.reshape(x, tf.constant([4, 3])), ...).
@pytest.mark.parametrize("call, want", [
    (lambda x: mt.reshape(x, mt.constant([4, 3])), X.reshape(4, 3)),
    (lambda x: mt.reshape(x, [mt.constant(2), -1]), X.reshape(2, 6)),
    (lambda x: mt.reshape(x, mt.Variable([6, 2])), X.reshape(6, 2)),
    (lambda x: mt.reshape(x, np.array([6, 2])), X.reshape(6, 2)),
    (lambda x: mt.reshape(x, (np.int64(2), np.int32(6))), X.reshape(2, 6)),
    (lambda x: mt.transpose(x, mt.constant([1, 0])), X.T),
    (lambda x: mt.transpose(x, np.array([1, 0])), X.T),
    (lambda x: mt.squeeze(mt.reshape(x, [1, 3, 4]), np.array([0])), X),
    (lambda x: mt.slice(x, mt.constant([1, 1]), mt.constant([1, 2])), X[1:2, 1:3]),
    (lambda x: mt.slice(x, np.array([1, 0]), [mt.constant(2), -1]), X[1:3, :]),
    (lambda x: mt.strided_slice(x, mt.constant([0, 0]), mt.constant([2, 2])), X[:2, :2]),
    (lambda x: mt.broadcast_to(x[0], mt.constant([2, 4])), np.broadcast_to(X[0], (2, 4))),
    (lambda x: mt.tile(x, mt.constant([1, 2])), np.tile(X, (1, 2))),
    (lambda x: mt.tile(x, np.array([2, 1])), np.tile(X, (2, 1))),
])
def test_tensors_arrays_and_variables_convert_as_tensorflow(call, want):
    np.testing.assert_array_equal(call(mt.constant(X)).numpy(), want)


def test_split_takes_sizes_and_an_axis_as_tensors():
    parts = mt.split(mt.constant(X), mt.constant([1, 2]), axis=mt.constant(0))
    assert [p.numpy().tolist() for p in parts] == [X[:1].tolist(), X[1:].tolist()]
    parts = mt.split(mt.constant(X), np.int64(2), axis=1)
    assert [p.shape for p in parts] == [(3, 2), (3, 2)]


@pytest.mark.parametrize("call, text", [
    (lambda x: mt.reshape(x, [2.0, -1]), r"\[reshape\] `shape` must hold integers; got 2.0"),
    (lambda x: mt.reshape(x, mt.constant([2.0, 6.0])),
     r"\[reshape\] `shape` must be an integer tensor of rank 0 or 1"),
    (lambda x: mt.tile(x, np.array([[1, 2]])),
     r"\[tile\] `multiples` must be an integer array of rank 0 or 1"),
    (lambda x: mt.reshape(x, [mt.constant([2]), -1]),
     r"\[reshape\] each element of `shape` must be an integer"),
    (lambda x: mt.reshape(x, object()), r"\[reshape\] `shape` must be an integer, a list"),
])
def test_what_names_no_integers_is_a_type_error(call, text):
    with pytest.raises(TypeError, match=text):
        call(mt.constant(X))


@pytest.mark.parametrize("call, what", [
    (lambda x, s: mt.broadcast_to(x, s), "the shape of `mt.broadcast_to`"),
    (lambda x, s: mt.reshape(x, s), "the shape of `mt.reshape`"),
    (lambda x, s: mt.reshape(x, [s[0], -1]), "the shape of `mt.reshape`"),
    (lambda x, s: mt.tile(x, s), "the multiples of `mt.tile`"),
    (lambda x, s: mt.slice(x, [0, 0], s), "the size of `mt.slice`"),
    (lambda x, s: mt.zeros(s), "the shape of `mt.zeros`"),
    (lambda x, s: mt.ones([s[0], 4]), "the shape of `mt.ones`"),
    (lambda x, s: mt.fill(s, 2.0), "the shape of `mt.fill`"),
])
def test_a_tensor_argument_is_a_host_read_while_tracing(call, what):
    # The replay would repeat the trace's shape whatever the tensor holds at a later call
    # (a broadcast to [2, 4] replayed for [3, 4]): so the trace refuses the read.
    @mt.function
    def f(x, s):
        return call(x, s)

    x = mt.constant(X[:1])
    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError) as info:
        f(x, mt.constant([1, 4]))
    assert f"Using a tensor as {what} is not allowed while mt.function traces 'f'" in str(
        info.value)
    assert f'File "{__file__}", line ' in str(info.value)  # the lambda's line above
    # Eagerly, and in a function given Python ints, the same call runs.
    want = call(x, [1, 4]).numpy()
    np.testing.assert_array_equal(call(x, mt.constant([1, 4])).numpy(), want)
    np.testing.assert_array_equal(mt.function(lambda x: call(x, [1, 4]))(x).numpy(), want)


def test_an_integer_scalar_tensor_is_a_python_index_as_tensorflows():
    # TensorFlow 2.21's eager tensors: [1, 2, 3][tf.constant(1)] == 2, range(tf.constant(3)),
    # an axis or a slice bound.
    x, c = mt.constant(X), mt.constant
    assert [1, 2, 3][c(1)] == 2 and list(range(c(3, mt.int64))) == [0, 1, 2]
    assert mt.expand_dims(x, c(0)).shape == (1, 3, 4)
    assert mt.concat([x, x], c(1)).shape == (3, 8)
    np.testing.assert_array_equal(x[c(1)].numpy(), X[1])
    np.testing.assert_array_equal(x[c(1):, :c(2)].numpy(), X[1:, :2])
    for bad in (c(1.0), c([1])):
        with pytest.raises(TypeError, match="only integer scalar tensors can be converted to "
                                            "an index"):
            [1, 2][bad]


def test_a_reductions_axis_may_be_a_tensor_or_an_array_as_tensorflows():
    # TensorFlow 2.21: tf.reduce_sum(x, axis=tf.constant(0)), tf.reduce_mean(x, tf.constant(1)).
    x = mt.constant(X)
    for reduce in (mt.reduce_sum, mt.math.reduce_sum):
        np.testing.assert_array_equal(reduce(x, axis=mt.constant(0)).numpy(), X.sum(0))
    np.testing.assert_array_equal(mt.reduce_mean(x, mt.constant(1)).numpy(), X.mean(1))
    assert float(mt.reduce_sum(x, mt.constant([0, 1]))) == 66.0
    np.testing.assert_array_equal(mt.reduce_max(x, np.array([1]), keepdims=True).numpy(),
                                  X.max(1, keepdims=True))
    assert mt.reduce_any(mt.constant([[True, False]]), [mt.constant(1)]).numpy().tolist() == [True]
    with pytest.raises(TypeError, match=r"^\[reduce_sum\] `axis` must hold integers; got 0.5$"):
        mt.reduce_sum(x, [0.5])
    f = mt.function(lambda x, axis: mt.reduce_sum(x, axis))
    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError,
                       match="Using a tensor as the axis of `mt.reduce_sum`"):
        f(x, mt.constant(0))


def test_the_bindings_refuse_a_tensor_shape_while_tracing():
    # Library code calling the C++ ops directly reads a tensor argument the same way: while
    # a function traces, that read is the tracing error, never a shape frozen into the trace.
    from minitensor import _minitensor as raw

    @mt.function
    def f(x, shape):
        return raw.reshape(x, shape)

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError,
                       match="a tensor's value as a shape, axis or size"):
        f(mt.constant(X), mt.constant([4, 3]))
    np.testing.assert_array_equal(raw.reshape(mt.constant(X), mt.constant([4, 3])).numpy(),
                                  X.reshape(4, 3))  # eagerly, fine
