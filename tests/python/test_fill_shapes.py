"""Shapes given to fill, zeros and ones: ints, NumPy integers and tensors, as TensorFlow's eager
ops read them."""

import numpy as np
import pytest

import minitensor as mt


def test_shapes_may_hold_tensors_as_tensorflows_eager_ops_read_them():
    n = mt.constant(2)
    assert mt.fill([n, 3], 1.5).shape == (2, 3)
    assert mt.fill([n], mt.constant(4)).numpy().tolist() == [4, 4]
    assert mt.zeros(mt.constant([2, 1])).shape == (2, 1)
    assert mt.ones([np.int64(3)]).numpy().tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="integer dimension"):
        mt.zeros([2.5])
