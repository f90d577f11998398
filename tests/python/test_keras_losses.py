"""The cross-entropy losses of mt.keras.losses beside the sparse one: CategoricalCrossentropy
and BinaryCrossentropy (objects and functions) against NumPy formulas and the values and
messages of TensorFlow 2.21 (Keras 3.15), and labels of integer types minitensor has no
dtype for."""

import numpy as np
import pytest

import minitensor as mt

losses = mt.keras.losses
EPS = 1e-7


def _cce(y, p):
    p = np.clip(p / p.sum(-1, keepdims=True), EPS, 1 - EPS)
    return -(y * np.log(p)).sum(-1)


def _bce(y, p):
    p = np.clip(p, EPS, 1 - EPS)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean(-1)


ONE_HOT = np.array([[0, 1, 0], [0, 0, 1]], np.float32)
PROBS = np.array([[0.05, 0.95, 0.0], [0.1, 0.8, 0.1]], np.float32)


def test_categorical_crossentropy_matches_numpy_and_keras():
    values = losses.categorical_crossentropy(ONE_HOT, PROBS)
    np.testing.assert_allclose(values.numpy(), _cce(ONE_HOT, PROBS), rtol=1e-6)
    # Keras 3.15: the object's mean, label smoothing 0.1, and from_logits on the same arrays
    np.testing.assert_allclose(float(losses.CategoricalCrossentropy()(ONE_HOT, PROBS)),
                               1.1769392, rtol=1e-6)
    np.testing.assert_allclose(
        float(losses.CategoricalCrossentropy(label_smoothing=0.1)(ONE_HOT, PROBS)), 1.4591359,
        rtol=1e-6)
    np.testing.assert_allclose(
        float(losses.CategoricalCrossentropy(from_logits=True)(ONE_HOT, PROBS)), 0.9868951,
        rtol=1e-6)


def test_categorical_crossentropy_from_logits_gradient_is_softmax_minus_labels():
    logits = mt.Variable(PROBS * 3)
    with mt.GradientTape() as tape:
        loss = losses.CategoricalCrossentropy(from_logits=True)(ONE_HOT, logits)
    softmax = np.exp(PROBS * 3) / np.exp(PROBS * 3).sum(-1, keepdims=True)
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), (softmax - ONE_HOT) / 2,
                               rtol=1e-5, atol=1e-7)


def test_binary_crossentropy_matches_numpy_and_keras():
    y = np.array([[0, 1], [0, 0]], np.float32)
    p = np.array([[0.6, 0.4], [0.4, 0.6]], np.float32)
    np.testing.assert_allclose(losses.binary_crossentropy(y, p).numpy(), _bce(y, p), rtol=1e-6)
    # Keras 3.15's values for the object, label smoothing 0.2 and from_logits
    np.testing.assert_allclose(float(losses.BinaryCrossentropy()(y, p)), 0.8149245, rtol=1e-6)
    np.testing.assert_allclose(float(losses.BinaryCrossentropy(label_smoothing=0.2)(y, p)),
                               0.7946512, rtol=1e-6)
    np.testing.assert_allclose(float(losses.BinaryCrossentropy(from_logits=True)(y, p)),
                               0.87525165, rtol=1e-6)


def test_binary_crossentropy_adds_the_last_dimension_of_one():
    y, p = np.array([1.0, 0.0]), np.array([[0.7], [0.2]], np.float32)
    expected = -(np.log(0.7) + np.log(0.8)) / 2  # Keras: 0.28990924 either way
    np.testing.assert_allclose(float(losses.BinaryCrossentropy()(y, p)), expected, rtol=1e-6)
    np.testing.assert_allclose(losses.binary_crossentropy(y, p[:, 0]).numpy(), expected,
                               rtol=1e-6)


def test_binary_crossentropy_from_logits_is_stable_and_differentiable():
    y = np.array([[1.0, 0.0, 1.0]], np.float32)
    logits = mt.Variable(np.array([[100.0, -100.0, -100.0]], np.float32))
    with mt.GradientTape() as tape:
        loss = losses.BinaryCrossentropy(from_logits=True)(y, logits)
    np.testing.assert_allclose(float(loss), 100.0 / 3, rtol=1e-6)
    np.testing.assert_allclose(tape.gradient(loss, logits).numpy(), [[0.0, 0.0, -1 / 3]],
                               atol=1e-7)


@pytest.mark.parametrize("fn", [losses.categorical_crossentropy, losses.binary_crossentropy])
def test_cross_entropies_refuse_other_shapes_with_keras_message(fn):
    with pytest.raises(ValueError, match=r"Arguments `target` and `output` must have the same "
                                         r"shape. Received: target.shape=\(2, 3\), "
                                         r"output.shape=\(2, 4\)"):
        fn(np.ones((2, 3), np.float32), np.ones((2, 4), np.float32))


def test_cross_entropy_configs_names_and_identifiers():
    assert losses.CategoricalCrossentropy().get_config() == {
        "name": "categorical_crossentropy", "reduction": "sum_over_batch_size",
        "from_logits": False, "label_smoothing": 0.0, "axis": -1}
    assert losses.BinaryCrossentropy(from_logits=True).get_config()["from_logits"] is True
    assert isinstance(losses.get("categorical_crossentropy"), losses.CategoricalCrossentropy)
    assert isinstance(losses.get("BinaryCrossentropy"), losses.BinaryCrossentropy)
    assert float(losses.BinaryCrossentropy(reduction="sum")(ONE_HOT, PROBS)) == pytest.approx(
        _bce(ONE_HOT, PROBS).sum(), rel=1e-6)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.uint16, np.uint32])
def test_labels_of_any_integer_type_reach_the_losses(dtype):
    labels = np.array([2, 0], dtype)
    logits = np.array([[0.1, 0.2, 3.0], [2.0, 0.0, -1.0]], np.float32)
    got = losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    expected = losses.SparseCategoricalCrossentropy(from_logits=True)(labels.astype(np.int32),
                                                                      logits)
    assert float(got) == float(expected)


def test_fit_trains_on_one_hot_labels_and_uint8_labels():
    rng = np.random.default_rng(0)
    y = (np.arange(120) % 3).astype(np.uint8)
    x = (np.eye(3)[y] * 2 + rng.normal(0, 0.3, (120, 3))).astype(np.float32)
    mt.keras.utils.set_random_seed(1)
    model = mt.keras.Sequential([mt.keras.layers.Input(shape=(3,)),
                                 mt.keras.layers.Dense(3, activation="softmax")])
    model.compile(optimizer=mt.keras.optimizers.Adam(0.1), loss="categorical_crossentropy",
                  metrics=["accuracy"])
    history = model.fit(x, np.eye(3, dtype=np.float32)[y], epochs=5, verbose=0)
    assert history.history["accuracy"][-1] > 0.95
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    assert model.evaluate(x, y, verbose=0)[1] > 0.95
