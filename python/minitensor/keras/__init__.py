"""The Keras subset minitensor has (tf.keras): the optimizers."""

from . import optimizers

__all__ = ["optimizers"]
