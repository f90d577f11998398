"""tf.distribute.experimental: the options of MultiWorkerMirroredStrategy's collectives."""

from .multi_worker_mirrored_strategy import CommunicationImplementation, CommunicationOptions

__all__ = ["CommunicationImplementation", "CommunicationOptions"]
