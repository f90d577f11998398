"""mt.data's padded_batch and unbatch, and batch's two ways (slices of a source's arrays,
or stacked elements) giving the same batches: TensorFlow 2.21's values, specs and errors."""

import numpy as np
import pytest

import minitensor as mt

Dataset = mt.data.Dataset


def _lists(ds):
    return [np.asarray(e).tolist() if not isinstance(e, tuple) else
            tuple(np.asarray(c).tolist() for c in e) for e in ds.as_numpy_iterator()]


def _ragged():  # [1], [2, 2], [3, 3, 3], [4, 4, 4, 4] (int64)
    return Dataset.range(1, 5).map(lambda x: mt.fill([int(x)], x))


def test_batching_slices_equals_batching_elements():
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    sliced = Dataset.from_tensor_slices((x, np.arange(10))).batch(4)
    stacked = Dataset.from_tensor_slices((x, np.arange(10))).take(-1).batch(4)  # no slicing
    for a, b in zip(sliced, stacked):
        np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
        np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())
    assert [len(b[1]) for b in sliced] == [4, 4, 2]
    assert [len(b) for b in Dataset.from_tensor_slices(x).batch(4, drop_remainder=True)] == [4, 4]


def test_a_sliced_batch_cannot_write_into_the_dataset():
    ds = Dataset.from_tensor_slices(np.zeros((4, 2))).batch(2)
    batch = next(ds.as_numpy_iterator())
    with pytest.raises(ValueError, match="read-only"):
        batch[0, 0] = 1.0


def test_padded_batch_pads_to_the_longest_with_zeros():
    assert _lists(_ragged().padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    floats = Dataset.range(1, 3).map(lambda x: mt.fill([int(x)], 1.5))
    assert _lists(floats.padded_batch(2)) == [[[1.5, 0.0], [1.5, 1.5]]]
    assert _lists(floats.padded_batch(2, padding_values=-1.0)) == [[[1.5, -1.0], [1.5, 1.5]]]
    two_d = Dataset.range(1, 3).map(lambda x: mt.ones([int(x), 3 - int(x)], mt.int32))
    assert _lists(two_d.padded_batch(2)) == [[[[1, 1], [0, 0]], [[1, 0], [1, 0]]]]


def test_padded_batch_takes_shapes_and_values_per_component():
    assert _lists(_ragged().padded_batch(2, padded_shapes=[5], padding_values=-1)) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]
    pairs = Dataset.range(1, 4).map(lambda x: (mt.fill([int(x)], x), x))
    assert _lists(pairs.padded_batch(2, padding_values=(-1, 0))) == [
        ([[1, -1], [2, 2]], [1, 2]), ([[3, 3, 3]], [3])]
    assert _lists(_ragged().padded_batch(2, padded_shapes=[-1])) == _lists(
        _ragged().padded_batch(2))


def test_padded_batch_specs_and_cardinality():
    assert _ragged().padded_batch(2).element_spec == mt.TensorSpec((None, None), mt.int64)
    fixed = _ragged().padded_batch(2, padded_shapes=[5], drop_remainder=True)
    assert fixed.element_spec == mt.TensorSpec((2, 5), mt.int64)
    assert len(Dataset.range(5).padded_batch(2)) == 3
    assert len(Dataset.range(5).padded_batch(2, drop_remainder=True)) == 2


def test_padded_batch_errors():
    with pytest.raises(mt.errors.DataLossError,
                       match="^Attempted to pad to a smaller size than the input element.$"):
        list(_ragged().padded_batch(2, padded_shapes=[2]))
    with pytest.raises(ValueError, match=r"^The padded shape \(2, 2\) is not compatible with "
                                         r"the shape \(1,\) of the corresponding input "
                                         "component.$"):
        _ragged().padded_batch(2, padded_shapes=[2, 2])
    with pytest.raises(ValueError, match="^Batch size must be greater than zero, got 0$"):
        Dataset.range(3).padded_batch(0)
    with pytest.raises(ValueError, match=r"^Padding value should be a scalar, got shape \(2,\)"):
        _ragged().padded_batch(2, padding_values=[1, 2])


def test_unbatch_splits_the_first_dimension():
    cube = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]
    assert _lists(Dataset.from_tensor_slices(cube).unbatch()) == [[1, 2], [3, 4], [5, 6],
                                                                  [7, 8]]
    pairs = Dataset.from_tensor_slices(([[1, 2], [3, 4]], [[5, 6], [7, 8]])).unbatch()
    assert _lists(pairs) == [(1, 5), (2, 6), (3, 7), (4, 8)]
    rebatched = Dataset.range(10).batch(3).unbatch()
    assert _lists(rebatched) == list(range(10))
    assert rebatched.element_spec == mt.TensorSpec((), mt.int64)
    assert int(rebatched.cardinality()) == mt.data.UNKNOWN_CARDINALITY


def test_unbatch_errors():
    with pytest.raises(ValueError, match="^Cannot unbatch an input with scalar components.$"):
        Dataset.range(3).unbatch()
    message = ("^`unbatch\\(\\)` is only supported for datasets of elements whose components "
               "have a matching leading dimension. Encountered both 2 and 3.$")
    with pytest.raises(ValueError, match=message):
        Dataset.from_tensor_slices(([[1, 2]], [[5, 6, 7]])).unbatch()
    varying = Dataset.from_generator(
        lambda: iter([([1, 2], [3, 4]), ([1, 2], [3, 4, 5])]),
        output_signature=(mt.TensorSpec((None,), mt.int32), mt.TensorSpec((None,), mt.int32)))
    with pytest.raises(mt.errors.InvalidArgumentError, match=message):
        list(varying.unbatch())


def test_the_tensors_map_returns_are_the_elements_without_a_copy():
    made = []

    def scale(x, y):
        made.append(x / 255.0)
        return made[-1], y

    ds = Dataset.from_tensor_slices((np.ones((6, 4), np.float32), np.arange(6))).batch(4)
    batches = list(ds.map(scale))
    assert [b[0] is m for b, m in zip(batches, made)] == [True, True]
    assert [b[1].numpy().tolist() for b in batches] == [[0, 1, 2, 3], [4, 5]]


def test_padded_shapes_must_follow_the_elements_structure():
    pairs = Dataset.from_tensor_slices(([[1]], [[2]]))
    with pytest.raises(ValueError, match=r"^\[None\] does not match the structure \(TensorSpec"):
        pairs.padded_batch(2, padded_shapes=[None])
    assert [b[1].numpy().tolist() for b in pairs.padded_batch(2, padded_shapes=([3], [2]))] \
        == [[[2, 0]]]
