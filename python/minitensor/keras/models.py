"""tf.keras.models under Keras's name: Model, Sequential and load_model."""

from .keras_archive import load_model
from .model import Model
from .sequential import Sequential

__all__ = ["Model", "Sequential", "load_model"]
