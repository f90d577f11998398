"""TensorFlow's CNN tutorial ("Convolutional Neural Network") with `tf` replaced by `mt`, on
scikit-learn's bundled digits (1,797 8x8 grey images) instead of CIFAR-10, which would need
a download: two Conv2D + MaxPooling2D blocks, Flatten, Dense, Dense logits,
SparseCategoricalCrossentropy with from_logits, Adam, fit with validation data, evaluate.

scikit-learn is an optional dependency: `pip install scikit-learn`. Without it the example
says so and exits 0. Prints the model's summary and the test accuracy; exits 1 below 95%.
An argument (the verbosity of fit, 0, 1 or 2; 2 by default) is passed to fit. The model
runs on the first GPU when there is one (CUDA_VISIBLE_DEVICES= keeps it on the CPU)."""

import sys

import numpy as np

import minitensor as mt

try:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
except ImportError:
    load_digits = None

EPOCHS = 15


def load_data():
    """The digits as (train, test) images of shape (8, 8, 1), pixels scaled to [0, 1] as
    the tutorial divides CIFAR's by 255 (the digits' pixels go to 16)."""
    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.images[..., np.newaxis], digits.target.astype(np.uint8), test_size=0.25,
        random_state=0)
    return (x_train / 16.0, y_train), (x_test / 16.0, y_test)


def main(verbose):
    if load_digits is None:
        print("This example needs scikit-learn for its digits dataset: "
              "pip install scikit-learn")
        return 0
    mt.keras.utils.set_random_seed(0)
    (train_images, train_labels), (test_images, test_labels) = load_data()

    # From here on, the tutorial's code with tf -> mt, for 8x8x1 images: the first
    # convolution keeps the size ('same'), and the third block is left out (1x1 by then).
    model = mt.keras.models.Sequential()
    model.add(mt.keras.layers.Conv2D(32, (3, 3), activation="relu", padding="same",
                                     input_shape=(8, 8, 1)))
    model.add(mt.keras.layers.MaxPooling2D((2, 2)))
    model.add(mt.keras.layers.Conv2D(64, (3, 3), activation="relu"))
    model.add(mt.keras.layers.MaxPooling2D((2, 2)))
    model.add(mt.keras.layers.Flatten())
    model.add(mt.keras.layers.Dense(64, activation="relu"))
    model.add(mt.keras.layers.Dense(10))
    model.summary()

    model.compile(optimizer="adam",
                  loss=mt.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(train_images, train_labels, epochs=EPOCHS, verbose=verbose,
                        validation_data=(test_images, test_labels))
    test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=2)

    print(f"validation accuracy by epoch: "
          f"{' '.join(f'{a:.3f}' for a in history.history['val_accuracy'])}")
    print(f"weights on {model.layers[0].kernel.device}")
    print(f"test accuracy {test_acc:.4f}")
    return 0 if test_acc >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2))
