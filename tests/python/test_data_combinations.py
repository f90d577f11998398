"""mt.data's zip, interleave, from_tensors, filter and cache: TensorFlow 2.21's elements,
cardinalities, specs and errors."""

import numpy as np
import pytest

import minitensor as mt

Dataset = mt.data.Dataset


def _values(ds):
    return list(ds.as_numpy_iterator())


def test_zip_takes_arguments_a_tuple_or_a_dict_and_ends_with_the_shortest():
    assert _values(Dataset.zip(Dataset.range(3), Dataset.range(10, 15))) == [
        (0, 10), (1, 11), (2, 12)]
    assert _values(Dataset.zip((Dataset.range(3), Dataset.range(10, 15)))) == [
        (0, 10), (1, 11), (2, 12)]
    assert _values(Dataset.zip({"a": Dataset.range(2), "b": Dataset.range(5)})) == [
        {"a": 0, "b": 0}, {"a": 1, "b": 1}]
    assert _values(Dataset.zip((Dataset.range(2), (Dataset.range(2), Dataset.range(3))))) == [
        (0, (0, 0)), (1, (1, 1))]
    assert _values(Dataset.zip(datasets=(Dataset.range(1), Dataset.range(1)))) == [(0, 0)]
    spec = Dataset.zip(Dataset.range(3), Dataset.from_tensor_slices([[1.0]])).element_spec
    assert spec == (mt.TensorSpec((), mt.int64), mt.TensorSpec((1,), mt.float32))


def test_zip_cardinality_is_tensorflows():
    finite, forever = Dataset.range(3), Dataset.range(5).repeat()
    unknown = Dataset.range(3).filter(lambda x: True)
    assert int(Dataset.zip(finite, forever).cardinality()) == 3
    assert int(Dataset.zip(forever, forever).cardinality()) == mt.data.INFINITE_CARDINALITY
    assert int(Dataset.zip(unknown, finite).cardinality()) == mt.data.UNKNOWN_CARDINALITY


def test_zip_errors():
    with pytest.raises(TypeError, match="^Must pass at least one dataset to `zip`.$"):
        Dataset.zip()
    with pytest.raises(TypeError, match="Python `list` is not supported and you should use "
                                        "`tuple` instead.$"):
        Dataset.zip(Dataset.range(3), [1, 2])
    with pytest.raises(TypeError, match="structures of `tf.data.Dataset` objects, got int.$"):
        Dataset.zip((Dataset.range(3), 1))
    with pytest.raises(TypeError, match="^Both `\\*args` and `datasets` cannot be set.$"):
        Dataset.zip(Dataset.range(1), datasets=(Dataset.range(1),))


def test_interleave_reads_blocks_in_tensorflows_order():
    ds = Dataset.range(1, 4).interleave(lambda x: Dataset.from_tensors(x).repeat(3),
                                        cycle_length=2, block_length=2)
    assert _values(ds) == [1, 1, 2, 2, 1, 2, 3, 3, 3]
    one_each = Dataset.range(1, 4).interleave(lambda x: Dataset.from_tensors(x).repeat(2),
                                              cycle_length=2)
    assert _values(one_each) == [1, 2, 1, 2, 3, 3]
    assert int(one_each.cardinality()) == mt.data.UNKNOWN_CARDINALITY
    assert one_each.element_spec == mt.TensorSpec((), mt.int64)
    rows = Dataset.from_tensor_slices(([1, 2], [10, 20])).interleave(
        lambda a, b: Dataset.from_tensor_slices(mt.stack([a, b])), cycle_length=2)
    assert _values(rows) == [1, 2, 10, 20]


def test_interleave_cycles_over_the_cpus_by_default():
    import os
    cpus = len(os.sched_getaffinity(0))
    ds = Dataset.range(cpus + 1).interleave(lambda x: Dataset.from_tensors(x).repeat(2))
    assert _values(ds)[:2 * cpus] == list(range(cpus)) * 2
    autotune = Dataset.range(cpus + 1).interleave(lambda x: Dataset.from_tensors(x).repeat(2),
                                                  cycle_length=mt.data.AUTOTUNE)
    assert _values(autotune) == _values(ds)


def test_interleave_errors():
    with pytest.raises(TypeError, match="^The `map_func` argument must return a `Dataset` "
                                        "object. Got Tensor.$"):
        list(Dataset.range(3).interleave(lambda x: x, cycle_length=2))
    with pytest.raises(ValueError, match="^cycle_length must be greater than zero, got 0$"):
        Dataset.range(3).interleave(Dataset.from_tensors, cycle_length=0)
    with pytest.raises(ValueError, match="^block_length must be greater than zero, got 0$"):
        Dataset.range(3).interleave(Dataset.from_tensors, cycle_length=1, block_length=0)


def test_from_tensors_is_one_element():
    ds = Dataset.from_tensors(([1, 2, 3], np.float32(1.5)))
    assert len(ds) == 1 and ds.element_spec == (mt.TensorSpec((3,), mt.int32),
                                                mt.TensorSpec((), mt.float32))
    (a, b), = list(ds)
    assert a.numpy().tolist() == [1, 2, 3] and float(b) == 1.5


def test_filter_keeps_elements_whose_predicate_is_true():
    assert _values(Dataset.range(10).filter(lambda x: x % 3 == 0)) == [0, 3, 6, 9]
    pairs = Dataset.from_tensor_slices(([1, 2, 3], [4, 5, 6])).filter(lambda a, b: a + b > 6)
    assert _values(pairs) == [(2, 5), (3, 6)]
    assert _values(Dataset.range(3).filter(lambda x: True)) == [0, 1, 2]
    assert int(Dataset.range(10).filter(lambda x: x > 3).cardinality()) == \
        mt.data.UNKNOWN_CARDINALITY


@pytest.mark.parametrize("predicate, spec", [
    (lambda x: mt.stack([x, x]) > 3, r"TensorSpec\(shape=\(2,\), dtype=mt.bool, name=None\)"),
    (lambda x: x, r"TensorSpec\(shape=\(\), dtype=mt.int64, name=None\)")])
def test_filter_needs_a_scalar_bool(predicate, spec):
    with pytest.raises(ValueError, match="^Invalid `predicate`. `predicate` must return a "
                                         "`tf.bool` scalar tensor, but its return type is "
                                         f"{spec}.$"):
        list(Dataset.range(3).filter(predicate))


def test_cache_runs_the_pipeline_once():
    calls = []
    ds = Dataset.range(3).map(lambda x: (calls.append(int(x)), x * 2)[1]).cache()
    assert _values(ds) == [0, 2, 4] and _values(ds) == [0, 2, 4]
    assert calls == [0, 1, 2] and len(ds) == 3


def test_a_partial_pass_caches_nothing():
    calls = []
    ds = Dataset.range(3).map(lambda x: (calls.append(int(x)), x)[1]).cache()
    next(iter(ds))
    assert _values(ds) == [0, 1, 2] and _values(ds) == [0, 1, 2]
    assert calls == [0, 0, 1, 2]


def test_a_cache_file_serves_another_pipeline(tmp_path):
    path = tmp_path / "cache"
    calls = []
    first = Dataset.range(3).map(lambda x: (calls.append(int(x)), x + 1)[1]).cache(path)
    assert _values(first) == [1, 2, 3] and path.exists()
    second = Dataset.range(3).map(lambda x: (calls.append(int(x)), x + 1)[1]).cache(path)
    assert _values(second) == [1, 2, 3] and calls == [0, 1, 2]


@pytest.mark.parametrize("make", [lambda ds: ds.interleave(3), lambda ds: ds.filter(3)])
def test_functions_must_be_callable(make):
    with pytest.raises(TypeError, match="^(map_func|predicate) must be callable, got int$"):
        make(Dataset.range(3))
