"""TensorFlow's beginner quickstart with `tf` replaced by `mt`: its code unchanged on
synthetic MNIST-shaped data (uint8 labels, float64 pixels), and on scikit-learn's digits
(an optional dependency: these tests skip without it) within 3 points of TensorFlow's
test accuracy, and the example that runs it (examples/python/keras_quickstart.py)."""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt

tf = mt  # the tutorial's code below, as written for TensorFlow
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / \
    "keras_quickstart.py"

# TensorFlow 2.21 (Keras 3.15) on the digits split below, the same model, five epochs:
# test accuracy over keras.utils.set_random_seed(0..9), mean 0.9327 (0.9200 to 0.9444).
# minitensor on the same split and seeds: mean 0.9318 (0.9267 to 0.9400).
TENSORFLOW_DIGITS_ACCURACY = 0.9327


def _synthetic_mnist(n, side, seed=0):
    """Ten classes of noisy images, each class a bright block at its own place."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 10).astype(np.uint8)
    x = rng.integers(0, 60, (n, side, side)).astype(np.uint8)
    for label in range(10):
        row, col = divmod(label, 5)
        x[y == label, row * 3:row * 3 + 3, col * 2:col * 2 + 2] = 255
    return x / 255.0, y


def _quickstart(x_train, y_train, x_test, y_test, side):
    """The tutorial's code, unchanged but for the image side; returns what it computes."""
    model = tf.keras.models.Sequential([
        tf.keras.layers.Flatten(input_shape=(side, side)),
        tf.keras.layers.Dense(128, activation='relu'),
        tf.keras.layers.Dropout(0.2),
        tf.keras.layers.Dense(10)
    ])
    predictions = model(x_train[:1]).numpy()
    probabilities = tf.nn.softmax(predictions).numpy()
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    initial_loss = loss_fn(y_train[:1], predictions).numpy()
    model.compile(optimizer='adam',
                  loss=loss_fn,
                  metrics=['accuracy'])
    model.fit(x_train, y_train, epochs=5, verbose=0)
    evaluation = model.evaluate(x_test, y_test, verbose=0)
    probability_model = tf.keras.Sequential([
        model,
        tf.keras.layers.Softmax()
    ])
    return predictions, probabilities, initial_loss, evaluation, probability_model(x_test[:5])


def test_the_quickstart_runs_unchanged_on_mnist_shaped_data():
    mt.keras.utils.set_random_seed(0)
    x, y = _synthetic_mnist(600, 10)
    predictions, probabilities, initial_loss, (loss, accuracy), top5 = _quickstart(
        x[:500], y[:500], x[500:], y[500:], 10)
    assert predictions.shape == (1, 10) and predictions.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(), 1.0, rtol=1e-6)
    assert np.ndim(initial_loss) == 0 and 1.0 < initial_loss < 4.0  # about -log(1/10)
    assert accuracy > 0.95 and loss < initial_loss
    assert top5.shape == (5, 10)
    np.testing.assert_allclose(top5.numpy().sum(axis=1), np.ones(5), rtol=1e-6)
    assert (top5.numpy().argmax(axis=1) == y[500:505]).all()


def _digits():
    datasets = pytest.importorskip("sklearn.datasets")
    selection = pytest.importorskip("sklearn.model_selection")
    digits = datasets.load_digits()
    x_train, x_test, y_train, y_test = selection.train_test_split(
        digits.images, digits.target, test_size=0.25, random_state=0)
    return x_train / 16.0, y_train, x_test / 16.0, y_test


@pytest.mark.parametrize("seed", [0, 1])
def test_the_quickstart_on_digits_reaches_tensorflows_accuracy(seed):
    x_train, y_train, x_test, y_test = _digits()
    mt.keras.utils.set_random_seed(seed)
    _, _, _, (_, accuracy), _ = _quickstart(x_train, y_train, x_test, y_test, 8)
    assert accuracy >= TENSORFLOW_DIGITS_ACCURACY - 0.03


def test_the_quickstart_example_runs():
    run = subprocess.run([sys.executable, str(EXAMPLE), "0"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    try:
        import sklearn  # noqa: F401
    except ImportError:
        assert "pip install scikit-learn" in run.stdout
        return
    assert "test accuracy 0.9" in run.stdout and "first test predictions:" in run.stdout
