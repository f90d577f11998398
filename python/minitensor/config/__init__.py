"""The devices the runtime sees and how it uses them (tf.config).

    gpus = mt.config.list_physical_devices("GPU")
    if gpus:
        mt.config.experimental.set_memory_growth(gpus[0], True)
        mt.config.set_logical_device_configuration(
            gpus[0], [mt.config.LogicalDeviceConfiguration(memory_limit=1024)])
    mt.config.list_logical_devices("GPU")   # initialises the runtime

Configuration may change until the runtime initialises (the first op, the first tensor or
the first list_logical_devices); after that a change raises RuntimeError with
TensorFlow's wording, as TensorFlow does. Memory limits are in MB.

``experimental_connect_to_cluster`` adds the devices of other processes (docs/distributed.md):

    mt.config.experimental_connect_to_cluster(
        mt.train.ClusterSpec({"worker": ["127.0.0.1:2222", "127.0.0.1:2223"]}))
    mt.config.list_logical_devices()   # ..., /job:worker/replica:0/task:1/device:CPU:0
"""

from .devices import *  # noqa: F401,F403
from .devices import __all__ as _devices_all
from . import experimental, threading

__all__ = [*_devices_all, "experimental", "threading"]
