"""TensorFlow's "TensorFlow 2 quickstart for beginners" with `tf` replaced by `mt`, on
scikit-learn's bundled digits (1,797 8x8 images) instead of MNIST, which would need a
download: Flatten, Dense, Dropout, Dense logits, SparseCategoricalCrossentropy with
from_logits, Adam, five epochs, evaluate, and a probability model that ends in Softmax.

scikit-learn is an optional dependency: `pip install scikit-learn`. Without it the
example says so and exits 0. Prints the test accuracy; exits 1 below 90%. An argument
(the verbosity of fit, 0, 1 or 2; 2 by default) is passed to fit."""

import sys

import numpy as np

import minitensor as mt

try:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
except ImportError:
    load_digits = None


def load_data():
    """The digits split as MNIST is (train, test), pixels scaled to [0, 1] as the tutorial
    divides MNIST's by 255 (the digits' pixels go to 16)."""
    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.images, digits.target.astype(np.uint8), test_size=0.25, random_state=0)
    return (x_train / 16.0, y_train), (x_test / 16.0, y_test)


def main(verbose):
    if load_digits is None:
        print("This example needs scikit-learn for its digits dataset: "
              "pip install scikit-learn")
        return 0
    mt.keras.utils.set_random_seed(0)
    (x_train, y_train), (x_test, y_test) = load_data()

    # From here on, the tutorial's code with tf -> mt (and 28 -> 8).
    model = mt.keras.models.Sequential([
        mt.keras.layers.Flatten(input_shape=(8, 8)),
        mt.keras.layers.Dense(128, activation="relu"),
        mt.keras.layers.Dropout(0.2),
        mt.keras.layers.Dense(10)
    ])
    predictions = model(x_train[:1]).numpy()
    print("probabilities before training:", mt.nn.softmax(predictions).numpy().round(2))
    loss_fn = mt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    print(f"initial loss {loss_fn(y_train[:1], predictions).numpy():.2f} "
          f"(about -log(1/10) = {-np.log(0.1):.2f})")
    model.compile(optimizer="adam", loss=loss_fn, metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=5, verbose=verbose)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=2)
    probability_model = mt.keras.Sequential([model, mt.keras.layers.Softmax()])
    print("first test predictions:", probability_model(x_test[:5]).numpy().argmax(axis=1),
          "labels:", y_test[:5])

    print(f"test accuracy {accuracy:.4f}")
    return 0 if accuracy >= 0.90 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2))
