"""tf.io: ``gfile``, TensorFlow's file operations, on this machine's file system (what the
multi-worker checkpoint pattern of docs/checkpoints.md needs)."""

from . import gfile

__all__ = ["gfile"]
