"""Keras metrics as variables updated by ops: update_state counts at every call of an
mt.function, result() is a tensor, and the values match Keras's."""

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras


def test_a_mean_updated_inside_a_function_counts_every_call():
    acc = keras.metrics.Mean()

    @mt.function
    def f(x):
        acc.update_state(x * 2.0)
        return x

    for i in range(4):
        f(mt.constant(float(i)))
    assert float(acc.result()) == 3.0
    assert f.experimental_get_tracing_count() == 1 and f.replay_kind in ("steps", "graph")


def test_result_is_a_tensor():
    m = keras.metrics.Mean()
    m.update_state([1.0, 2.0])
    result = m.result()
    assert isinstance(result, mt.Tensor) and result.dtype == mt.float32 and result.shape == ()
    assert result.numpy() == np.float32(1.5) and float(result) == 1.5
    assert float(keras.metrics.Mean().result()) == 0.0  # before any update
    assert [v.name for v in m.variables] == ["mean/total:0", "mean/count:0"]


def test_accuracy_and_reset_inside_a_function_match_eager():
    eager, traced = keras.metrics.SparseCategoricalAccuracy(), \
        keras.metrics.SparseCategoricalAccuracy()

    @mt.function
    def step(labels, logits):
        traced.update_state(labels, logits)
        return traced.result()

    @mt.function
    def reset():
        traced.reset_state()

    rng = np.random.default_rng(3)
    for _ in range(2):
        for _ in range(4):
            labels = rng.integers(0, 3, 8).astype(np.int32)
            logits = rng.standard_normal((8, 3)).astype(np.float32)
            eager.update_state(labels, logits)
            got = step(mt.constant(labels), mt.constant(logits))
            assert float(got) == float(eager.result())
        reset()
        eager.reset_state()
        assert float(traced.result()) == 0.0
    assert step.experimental_get_tracing_count() == 1


def test_weighted_mean_and_rows_match_keras():
    m = keras.metrics.Mean()
    m.update_state([1.0, 3.0], sample_weight=[3.0, 1.0])
    assert float(m.result()) == 1.5                       # (3 + 3) / 4
    m = keras.metrics.Mean()
    m.update_state([[1.0, 2.0], [3.0, 6.0]])              # row means 1.5 and 4.5, two rows
    m.update_state([[0.0, 0.0, 3.0]])                     # row mean 1.0, one row
    assert float(m.result()) == pytest.approx(7.0 / 3.0)
    loss = keras.metrics.Mean()
    loss.update_state(mt.constant(0.5), sample_weight=32)
    loss.update_state(2.0, sample_weight=16)
    assert float(loss.result()) == pytest.approx((0.5 * 32 + 2.0 * 16) / 48)


@pytest.mark.parametrize("metric, y_true, y_pred, want", [
    (keras.metrics.BinaryAccuracy(), [[1], [0], [1]], [[0.6], [0.7], [0.2]], 1 / 3),
    (keras.metrics.BinaryAccuracy(threshold=0.65), [[1], [0]], [[0.6], [0.7]], 0.0),
    (keras.metrics.CategoricalAccuracy(), [[0, 1], [1, 0]], [[0.2, 0.8], [0.3, 0.7]], 0.5),
    (keras.metrics.Accuracy(), [1, 2, 3, 4], [1, 2, 0, 4], 0.75),
    (keras.metrics.MeanSquaredError(), [[0.0, 1.0]], [[1.0, 1.0]], 0.5)])
def test_metric_values_match_keras(metric, y_true, y_pred, want):
    metric.update_state(y_true, y_pred)
    assert float(metric.result()) == pytest.approx(want)
