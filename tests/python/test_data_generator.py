"""mt.data.Dataset.from_generator: TensorFlow 2.21's conversions, specs and errors."""

import numpy as np
import pytest

import minitensor as mt

Dataset = mt.data.Dataset
SIGNATURE = (mt.TensorSpec((), mt.int32), mt.TensorSpec((None,), mt.float32))


def _rows():
    for i in range(3):
        yield i, [1.0] * i


def test_elements_take_the_signatures_dtypes():
    ds = Dataset.from_generator(_rows, output_signature=SIGNATURE)
    i, v = list(ds)[2]
    assert i.dtype == mt.int32 and int(i) == 2
    assert v.dtype == mt.float32 and v.numpy().tolist() == [1.0, 1.0]
    assert ds.element_spec == SIGNATURE
    assert int(ds.cardinality()) == mt.data.UNKNOWN_CARDINALITY
    assert [a.tolist() for _, a in ds.as_numpy_iterator()] == [[], [1.0], [1.0, 1.0]]


def test_output_types_and_shapes_and_args():
    ds = Dataset.from_generator(_rows, output_types=(mt.int64, mt.float32),
                                output_shapes=((), (None,)))
    assert ds.element_spec == (mt.TensorSpec((), mt.int64), mt.TensorSpec((None,), mt.float32))
    assert [int(i) for i, _ in ds] == [0, 1, 2]
    counted = Dataset.from_generator(lambda n: range(int(n)), args=(3,),
                                     output_signature=mt.TensorSpec((), mt.int64))
    assert list(counted.as_numpy_iterator()) == [0, 1, 2]
    assert list(counted.as_numpy_iterator()) == [0, 1, 2]  # the generator is called again


def test_values_convert_as_numpy_converts():
    ds = Dataset.from_generator(lambda: iter([1.5]), output_signature=mt.TensorSpec((), mt.int64))
    assert list(ds.as_numpy_iterator()) == [1]  # as TensorFlow's


def test_a_generator_feeds_batch_and_a_training_loop():
    ds = Dataset.from_generator(lambda: ((np.full(2, i, np.float32), i) for i in range(5)),
                                output_signature=(mt.TensorSpec((2,), mt.float32),
                                                  mt.TensorSpec((), mt.int32)))
    batches = list(ds.batch(2))
    assert [b[0].shape for b in batches] == [(2, 2), (2, 2), (1, 2)]
    assert batches[2][1].numpy().tolist() == [4]


@pytest.mark.parametrize("kwargs, message", [
    ({"generator": [1, 2], "output_signature": mt.TensorSpec(())},
     "`generator` must be a Python callable."),
    ({"generator": _rows},
     "To specify the output signature you need to provide either the `output_signature` "
     "argument or the `output_types` argument."),
    ({"generator": _rows, "output_types": mt.int64, "output_signature": mt.TensorSpec(())},
     "The `output_types` argument can not be used together with the `output_signature` "
     "argument."),
    ({"generator": _rows, "output_signature": (1, 2)},
     "`output_signature` must contain objects that are subclass of `tf.TypeSpec` but found "
     "<class 'int'> which is not."),
])
def test_construction_errors(kwargs, message):
    with pytest.raises(TypeError, match="^" + message.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[") + "$"):
        Dataset.from_generator(**kwargs)


@pytest.mark.parametrize("values, spec, message", [
    ([[1, 2, 3]], mt.TensorSpec((2,), mt.int64),
     r"an element of shape \(3,\) where an element of shape \(2,\) was expected."),
    ([(1, 2)], mt.TensorSpec((), mt.int64),
     r"an element of shape \(2,\) where an element of shape \(\) was expected."),
    ([1], SIGNATURE, r"an element that did not match the expected structure."),
    (["x"], mt.TensorSpec((), mt.float32),
     r"an element that could not be converted to the expected type. The expected type was "
     r"float32, but the yielded element was 'x'."),
])
def test_an_element_that_does_not_fit_raises_when_reached(values, spec, message):
    ds = Dataset.from_generator(lambda: iter(values), output_signature=spec)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match="^TypeError: `generator` yielded " + message):
        list(ds)


def test_output_shapes_do_not_go_with_a_signature():
    with pytest.raises(TypeError, match="^The `output_shapes` argument can not be used "
                                        "together with the `output_signature` argument.$"):
        Dataset.from_generator(_rows, output_shapes=(), output_signature=mt.TensorSpec(()))
