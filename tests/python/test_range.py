"""mt.range against tf.range's behaviour: the values (NumPy's arange), the dtype inferred
from the arguments, and TensorFlow's errors."""

import numpy as np
import pytest

import minitensor as mt


def check(t, values, dtype):
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(values))


def test_counts_from_zero_to_the_limit():
    check(mt.range(5), [0, 1, 2, 3, 4], mt.int32)
    check(mt.range(2, 2), np.zeros(0), mt.int32)
    check(mt.range(10, 1, -3), [10, 7, 4], mt.int32)
    check(mt.range(1, 5, 2, dtype=mt.int64), [1, 3], mt.int64)


def test_floats_match_start_plus_i_delta():
    check(mt.range(0.5, 2.2, 0.5), [0.5, 1.0, 1.5, 2.0], mt.float32)
    t = mt.range(0, 1, 0.1)
    assert t.shape == (10,)  # 1 / 0.1 in float32, as TensorFlow computes the length
    want = (np.arange(10) * np.float64(np.float32(0.1))).astype(np.float32)  # rounded once
    np.testing.assert_array_equal(t.numpy(), want)
    check(mt.range(3, dtype=mt.float64), [0.0, 1.0, 2.0], mt.float64)
    assert mt.range(3, dtype=mt.bfloat16).dtype == mt.bfloat16
    check(mt.range(3, dtype=mt.float16), [0, 1, 2], mt.float16)


def test_dtype_is_the_widest_of_the_arguments():
    assert mt.range(1, 5.0).dtype == mt.float32
    assert mt.range(np.int64(3)).dtype == mt.int64
    assert mt.range(mt.constant(2.0, mt.float64), 5).dtype == mt.float64
    assert mt.range(mt.constant(2, mt.int64), 5.0).dtype == mt.float32
    assert mt.range(mt.constant(2, mt.float16), 5).dtype == mt.float16
    assert mt.range(mt.constant(2, mt.bfloat16), mt.constant(5, mt.float16)).dtype == mt.bfloat16
    # A tensor argument is cast to an explicit dtype, as tf.range casts it.
    check(mt.range(mt.constant(2.5), 5, dtype=mt.int32), [2, 3, 4], mt.int32)


def test_errors_are_tensorflows():
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"Requires delta != 0: 0"):
        mt.range(0, 5, 0)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"Requires start <= limit when delta > 0: 5/0"):
        mt.range(5, 0, 1)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"Requires start >= limit when delta < 0: 0/5"):
        mt.range(0, 5, -1)
    with pytest.raises(TypeError, match=r"Cannot convert 5.5 to EagerTensor of dtype int32"):
        mt.range(3, 5.5, dtype=mt.int32)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"limit must be a scalar, not shape \[2\]"):
        mt.range([1, 2])


def test_iterating_a_tensor_still_works_beside_mt_range():
    assert [int(v) for v in mt.constant([3, 4])] == [3, 4]


# Lengths tf.range gives (TensorFlow 2.21): computed in the dtype, so a float16 0.3 / 0.1
# rounds up to a fourth element where the other dtypes have three.
@pytest.mark.parametrize("args,lengths", [
    ((0, 0.3, 0.1), {"float32": 3, "float64": 3, "bfloat16": 3, "float16": 4}),
    ((0, 1, 0.1), {"float32": 10, "float64": 10, "bfloat16": 10, "float16": 10}),
    ((0.0, 2.0, 0.3), {"float32": 7, "float64": 7, "bfloat16": 7, "float16": 7}),
])
def test_float_lengths_are_tensorflows(args, lengths):
    for name, n in lengths.items():
        assert mt.range(*args, dtype=getattr(mt, name)).shape == (n,), name


def test_a_function_replays_a_python_range_and_refuses_a_tensor_bound():
    @mt.function
    def shifted(x):
        return x + mt.cast(mt.range(3), mt.float32)

    for _ in range(2):  # the trace, then a replay
        np.testing.assert_array_equal(shifted(mt.constant([1.0, 1.0, 1.0])).numpy(), [1, 2, 3])

    @mt.function
    def count(n):
        return mt.range(n)

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError, match="limit of `mt.range`"):
        count(mt.constant(3))
