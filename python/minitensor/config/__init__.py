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
"""

import functools

from .. import _minitensor as _mt
from .. import errors
from .._minitensor import LogicalDevice, LogicalDeviceConfiguration, PhysicalDevice

__all__ = [
    "LogicalDevice", "LogicalDeviceConfiguration", "PhysicalDevice", "experimental",
    "list_physical_devices", "list_logical_devices", "set_visible_devices",
    "get_visible_devices", "set_logical_device_configuration",
    "get_logical_device_configuration", "set_soft_device_placement",
    "get_soft_device_placement", "enable_tensor_float_32_execution",
    "tensor_float_32_execution_enabled",
]


def _runtime_error_after_init(fn):
    """Raises FailedPreconditionError (configuration after initialisation) as RuntimeError."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors.FailedPreconditionError as e:
            raise RuntimeError(e.message) from None

    return wrapper


def list_physical_devices(device_type=None):
    """Lists the physical devices of ``device_type`` ("CPU", "GPU"; None for all)."""
    return _mt.list_physical_devices(device_type or "")


def list_logical_devices(device_type=None):
    """Lists the logical devices of ``device_type``; initialises the runtime."""
    return _mt.list_logical_devices(device_type or "")


@_runtime_error_after_init
def set_visible_devices(devices, device_type=None):
    """Makes only ``devices`` (one PhysicalDevice or a list) of ``device_type`` visible."""
    if isinstance(devices, PhysicalDevice):
        devices = [devices]
    _mt.set_visible_devices(list(devices), device_type or "")


def get_visible_devices(device_type=None):
    return _mt.get_visible_devices(device_type or "")


@_runtime_error_after_init
def set_logical_device_configuration(device, logical_devices):
    """Splits ``device`` into one logical device per LogicalDeviceConfiguration."""
    _mt.set_logical_device_configuration(device, list(logical_devices))


def get_logical_device_configuration(device):
    return _mt.get_logical_device_configuration(device)


def set_soft_device_placement(enabled):
    """Runs an op asked for on a missing device on the best existing one instead."""
    _mt.set_soft_device_placement(bool(enabled))


def get_soft_device_placement():
    return _mt.get_soft_device_placement()


def enable_tensor_float_32_execution(enabled):
    _mt.enable_tensor_float_32_execution(bool(enabled))


def tensor_float_32_execution_enabled():
    return _mt.tensor_float_32_execution_enabled()


from . import experimental  # noqa: E402  (last: it uses the names above)
