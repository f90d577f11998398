"""mt.data.Dataset: slicing, batching, shuffling, repeating, taking and mapping, the
cardinalities TensorFlow reports, and its errors for obvious misuse."""

import numpy as np
import pytest

import minitensor as mt

Dataset = mt.data.Dataset


def test_from_tensor_slices_yields_mt_tensors_of_each_row():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    items = list(Dataset.from_tensor_slices((x, [0, 1, 2])))
    assert len(items) == 3
    first_x, first_y = items[0]
    assert isinstance(first_x, mt.Tensor) and first_x.dtype == mt.float32
    np.testing.assert_array_equal(first_x.numpy(), [0.0, 1.0])
    assert first_y.dtype == mt.int32 and int(first_y) == 0


def test_from_tensor_slices_takes_lists_tensors_and_dicts():
    assert [int(v) for v in Dataset.from_tensor_slices([1, 2, 3])] == [1, 2, 3]
    tensor = mt.constant([[1.0], [2.0]])
    np.testing.assert_array_equal(
        np.stack([v.numpy() for v in Dataset.from_tensor_slices(tensor)]), [[1.0], [2.0]])
    batch = next(iter(Dataset.from_tensor_slices({"a": [1, 2], "b": [[1.0, 2.0], [3.0, 4.0]]})
                      .batch(2)))
    assert sorted(batch) == ["a", "b"]
    np.testing.assert_array_equal(batch["b"].numpy(), [[1.0, 2.0], [3.0, 4.0]])


def test_batch_stacks_rows_and_keeps_or_drops_the_remainder():
    ds = Dataset.from_tensor_slices(np.arange(5))
    assert [b.numpy().tolist() for b in ds.batch(2)] == [[0, 1], [2, 3], [4]]
    assert [b.numpy().tolist() for b in ds.batch(2, drop_remainder=True)] == [[0, 1], [2, 3]]
    assert len(ds.batch(2)) == 3 and len(ds.batch(2, drop_remainder=True)) == 2


def test_shuffle_permutes_repeatably_with_a_seed_and_reshuffles_each_iteration():
    ds = Dataset.range(20).shuffle(20, seed=3)
    first, second = list(ds.as_numpy_iterator()), list(ds.as_numpy_iterator())
    assert sorted(first) == list(range(20)) and first != list(range(20))
    assert first != second  # reshuffle_each_iteration=True
    assert list(Dataset.range(20).shuffle(20, seed=3).as_numpy_iterator()) == first
    fixed = Dataset.range(20).shuffle(20, seed=3, reshuffle_each_iteration=False)
    assert list(fixed.as_numpy_iterator()) == list(fixed.as_numpy_iterator())


def test_shuffle_with_a_small_buffer_only_moves_elements_a_little():
    order = list(Dataset.range(100).shuffle(2, seed=1).as_numpy_iterator())
    assert sorted(order) == list(range(100))
    assert all(order.index(i) >= i - 1 for i in range(100))  # nothing leaves early


def test_repeat_take_and_map():
    ds = Dataset.from_tensor_slices([1, 2, 3])
    assert [int(v) for v in ds.repeat().take(5)] == [1, 2, 3, 1, 2]
    assert [int(v) for v in ds.repeat(2)] == [1, 2, 3] * 2
    assert [int(v) for v in ds.take(-1)] == [1, 2, 3]
    pairs = Dataset.from_tensor_slices(([1, 2], [3, 4])).map(lambda a, b: a + b)
    assert [int(v) for v in pairs] == [4, 6]
    squares = ds.map(lambda v: v * v)
    assert [int(v) for v in squares] == [1, 4, 9]


def test_cardinality_and_len_follow_tensorflow():
    ds = Dataset.from_tensor_slices([1, 2, 3])
    assert int(ds.repeat().cardinality()) == mt.data.INFINITE_CARDINALITY == -1
    assert int(ds.repeat(2).cardinality()) == 6
    assert int(ds.map(lambda v: v).cardinality()) == 3
    assert int(Dataset.range(3).take(10).cardinality()) == 3
    assert int(ds.repeat().take(5).cardinality()) == 5
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(ds.repeat())


def test_element_spec_describes_components():
    ds = Dataset.from_tensor_slices((np.zeros((5, 2), np.float32), np.zeros(5, np.int32)))
    spec_x, spec_y = ds.batch(2).element_spec
    assert spec_x.shape == (None, 2) and spec_x.dtype == mt.float32
    assert spec_y.shape == (None,) and spec_y.dtype == mt.int32
    assert ds.batch(2, drop_remainder=True).element_spec[0].shape == (2, 2)
    assert repr(spec_x) == "TensorSpec(shape=(None, 2), dtype=mt.float32, name=None)"


@pytest.mark.parametrize("make,message", [
    (lambda: Dataset.from_tensor_slices((np.zeros(3), np.zeros(4))),
     "Dimensions 3 and 4 are not compatible"),
    (lambda: Dataset.from_tensor_slices(np.float32(3)),
     "Unbatching a tensor is only supported for rank >= 1"),
    (lambda: Dataset.from_tensor_slices([[1, 2], [3]]),
     "Can't convert non-rectangular Python sequence to Tensor."),
    (lambda: Dataset.from_tensor_slices(()), "`element` should not be empty"),
    (lambda: Dataset.range(3).batch(0), "Batch size must be greater than zero"),
    (lambda: Dataset.range(3).shuffle(0), "buffer_size must be greater than zero"),
])
def test_misuse_raises_value_error_with_tensorflows_words(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_batching_elements_of_different_shapes_says_which():
    ds = Dataset.range(3).map(lambda v: mt.fill([int(v) + 1], 1.0))
    with pytest.raises(ValueError, match=r"component 0. First element had shape \[1\] and "
                                         r"element 1 had shape \[2\]"):
        list(ds.batch(3))


def test_a_map_after_a_batch_keeps_the_batch_dimension_unknown():
    # TensorFlow 2.21's specs: map traces over the input's spec, so a partial batch's
    # dimension stays None; drop_remainder's is known.
    x = np.zeros((10, 3), np.float32)
    ds = mt.data.Dataset.from_tensor_slices((x, x[:, 0]))
    spec = ds.batch(4).map(lambda a, b: (mt.reduce_sum(a, axis=1), b, a)).element_spec
    assert spec == (mt.TensorSpec((None,), mt.float32), mt.TensorSpec((None,), mt.float32),
                    mt.TensorSpec((None, 3), mt.float32))
    assert mt.data.Dataset.range(5).batch(2).map(lambda v: v * 2).element_spec == \
        mt.TensorSpec((None,), mt.int64)
    assert mt.data.Dataset.range(4).batch(2, drop_remainder=True).map(
        lambda v: v * 2).element_spec == mt.TensorSpec((2,), mt.int64)
    assert ds.map(lambda a, b: a * 2.0).element_spec == mt.TensorSpec((3,), mt.float32)


def test_shard_takes_every_nth_element_as_tensorflow():
    # TensorFlow 2.21: range(10).shard(3, 1) is [1, 4, 7]; its cardinality is 3.
    ds = mt.data.Dataset.range(10).shard(3, 1)
    assert [int(x) for x in ds] == [1, 4, 7]
    assert int(ds.cardinality()) == 3
    assert int(mt.data.Dataset.range(10).shard(3, 0).cardinality()) == 4
    with pytest.raises(mt.errors.InvalidArgumentError, match="Number of shards must be greater"):
        mt.data.Dataset.range(4).shard(0, 0)
    with pytest.raises(mt.errors.InvalidArgumentError, match=r"Index must be between 0 and 2"):
        mt.data.Dataset.range(4).shard(3, 3)
