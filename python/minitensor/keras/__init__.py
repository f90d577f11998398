"""The Keras subset minitensor has (tf.keras): what TensorFlow's GPU guide, its beginner
quickstart and a small classifier need, with Keras's names; not a Keras clone
(docs/keras.md).

    inputs = mt.keras.layers.Input(shape=(2,))
    hidden = mt.keras.layers.Dense(16, activation="relu")(inputs)
    outputs = mt.keras.layers.Dense(3, activation="softmax")(hidden)
    model = mt.keras.models.Model(inputs=inputs, outputs=outputs)
    model.compile(loss="sparse_categorical_crossentropy", optimizer="adam",
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=5, validation_split=0.2)
"""

from . import activations, initializers, losses, metrics, optimizers, random_seed
from . import callbacks, layers, mixed_precision, models, regularizers, utils
from . import keras_archive, weights_h5  # noqa: F401  (register Model's file formats)
from .layers import Input
from .models import Model, Sequential

__all__ = ["Input", "Model", "Sequential", "activations", "callbacks", "initializers",
           "mixed_precision",
           "layers", "losses", "metrics", "models", "optimizers", "regularizers", "utils"]
