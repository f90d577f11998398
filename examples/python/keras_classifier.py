"""Trains a small classifier with mt.keras on synthetic data made here (three Gaussian
blobs in 2-D): a functional model of two Dense layers, sparse categorical cross-entropy,
Adam, and a validation split. With verbose=0 it prints its own lines, which are the same
on every run (seeded); exits 1 below 95% validation accuracy."""

import sys

import numpy as np

import minitensor as mt

POINTS, CLASSES, EPOCHS = 1200, 3, 8


def make_blobs():
    rng = np.random.default_rng(11)
    y = (np.arange(POINTS) % CLASSES).astype(np.int32)
    centres = np.array([[-2.0, 0.0], [2.0, 0.0], [0.0, 2.5]], np.float32)
    x = centres[y] + rng.normal(0, 0.6, (POINTS, 2))
    return x.astype(np.float32), y


def make_model():
    inputs = mt.keras.layers.Input(shape=(2,))
    hidden = mt.keras.layers.Dense(16, activation="relu")(inputs)
    outputs = mt.keras.layers.Dense(CLASSES, activation="softmax")(hidden)
    return mt.keras.models.Model(inputs=inputs, outputs=outputs)


def main(verbose):
    mt.keras.utils.set_random_seed(7)
    x, y = make_blobs()
    model = make_model()
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=mt.keras.optimizers.Adam(learning_rate=0.02),
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=EPOCHS, batch_size=32, validation_split=0.2,
                        verbose=verbose)
    if verbose == 0:
        for epoch in range(EPOCHS):
            logs = {k: v[epoch] for k, v in history.history.items()}
            print(f"epoch {epoch + 1}: loss {logs['loss']:.2f} accuracy "
                  f"{logs['accuracy']:.2f} val_accuracy {logs['val_accuracy']:.2f}")
    val_accuracy = history.history["val_accuracy"][-1]
    probabilities = model.predict(x[:3], verbose=0)
    print("first predictions:", probabilities.argmax(axis=1).tolist(), "labels:",
          y[:3].tolist())
    print(f"validation accuracy {'at least' if val_accuracy >= 0.95 else 'below'} 95%")
    return 0 if val_accuracy >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
