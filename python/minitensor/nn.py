"""Neural-network ops (tf.nn)."""

from ._minitensor import relu

__all__ = ["relu"]
