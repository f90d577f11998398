"""mt.keras.regularizers and the losses they add: L1, L2 and L1L2 values and Keras 3's
messages, Dense's kernel_regularizer and bias_regularizer in ``model.losses``, and the
penalty in what fit minimises and evaluate reports (values TensorFlow 2.21 / Keras 3.15
gives for the same model)."""

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras
regularizers = keras.regularizers
W = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)


def test_regularizers_compute_their_penalties():
    assert float(regularizers.L2(0.1)(mt.constant(W))) == pytest.approx(0.1 * (W ** 2).sum())
    assert float(regularizers.L1(0.5)(mt.constant(W))) == pytest.approx(0.5 * np.abs(W).sum())
    both = regularizers.L1L2(l1=0.5, l2=0.1)(mt.constant(W))
    assert float(both) == pytest.approx(0.5 * np.abs(W).sum() + 0.1 * (W ** 2).sum())
    assert float(regularizers.L1L2()(mt.constant(W))) == 0.0


def test_regularizers_by_name_with_keras_defaults():
    assert regularizers.get("l2").get_config() == {"l2": 0.01}
    assert regularizers.get("L1").get_config() == {"l1": 0.01}
    assert regularizers.get("L1L2").get_config() == {"l1": 0.0, "l2": 0.0}
    assert regularizers.get(None) is None
    assert regularizers.l2 is regularizers.L2
    assert regularizers.L2.from_config({"l2": 0.3}).l2 == 0.3
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier: foo"):
        regularizers.get("foo")


@pytest.mark.parametrize("make, name, value", [
    (lambda: regularizers.L2(-1), "l2", -1), (lambda: regularizers.L2("a"), "l2", "a"),
    (lambda: regularizers.L1L2(l1=-1), "l1", -1), (lambda: regularizers.L1(np.inf), "l1", "inf")])
def test_regularizers_refuse_a_negative_factor_with_keras_message(make, name, value):
    with pytest.raises(ValueError, match=f"Invalid value for argument {name}: expected a "
                                         f"non-negative float.Received: {name}={value}"):
        make()


def test_dense_regularizers_appear_in_the_layer_and_model_losses():
    dense = keras.layers.Dense(2, kernel_regularizer="l2", bias_regularizer=regularizers.L1(0.5),
                               bias_initializer="ones")
    model = keras.Sequential([keras.layers.Input(shape=(2,)), dense])
    kernel = dense.kernel.numpy()
    expected = [0.01 * (kernel ** 2).sum(), 0.5 * 2.0]
    np.testing.assert_allclose([float(p) for p in dense.losses], expected, rtol=1e-6)
    np.testing.assert_allclose([float(p) for p in model.losses], expected, rtol=1e-6)
    assert keras.layers.Dense(2).losses == []


def test_losses_are_differentiable_and_follow_the_weights():
    dense = keras.layers.Dense(2, kernel_regularizer=regularizers.L2(0.1))
    dense(np.ones((1, 2), np.float32))
    dense.kernel.assign(W)
    with mt.GradientTape() as tape:
        penalty = mt.add_n(dense.losses)
    np.testing.assert_allclose(tape.gradient(penalty, dense.kernel).numpy(), 0.2 * W, rtol=1e-6)
    dense.trainable = False
    assert dense.losses == []


def _regularized_line(rate):
    x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    model = keras.Sequential([keras.layers.Input(shape=(4,)), keras.layers.Dense(
        1, kernel_initializer="ones", kernel_regularizer=regularizers.L2(0.1))])
    model.compile(optimizer=keras.optimizers.SGD(rate), loss="mse")
    return model, x, x @ np.ones((4, 1), np.float32)


def test_fit_minimises_and_evaluate_reports_the_penalty():
    model, x, y = _regularized_line(0.0)  # the weights fit y exactly: the loss is the penalty
    assert model.evaluate(x, y, verbose=0) == pytest.approx(0.4)  # Keras 3.15: 0.4
    assert model.fit(x, y, batch_size=64, verbose=0).history["loss"] == [pytest.approx(0.4)]
    model, x, y = _regularized_line(0.1)
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    np.testing.assert_allclose(model.get_weights()[0].ravel(), [0.98] * 4, rtol=1e-6)


def test_a_keras_file_keeps_the_regularizers(tmp_path):
    model = keras.Sequential([keras.layers.Input(shape=(2,)), keras.layers.Dense(
        2, kernel_regularizer=regularizers.L2(0.25), bias_regularizer="l1")])
    model.save(str(tmp_path / "m.keras"))
    loaded = keras.models.load_model(str(tmp_path / "m.keras"))
    dense = loaded.layers[0]
    assert isinstance(dense.kernel_regularizer, regularizers.L2)
    assert dense.kernel_regularizer.l2 == 0.25 and dense.bias_regularizer.l1 == 0.01
    np.testing.assert_allclose([float(p) for p in loaded.losses],
                               [float(p) for p in model.losses], rtol=1e-6)
