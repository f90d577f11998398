"""tf.keras.models under Keras's name: Model and Sequential."""

from .model import Model
from .sequential import Sequential

__all__ = ["Model", "Sequential"]
