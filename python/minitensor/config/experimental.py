"""tf.config.experimental: memory growth, memory statistics and the older aliases.

    mt.config.experimental.set_memory_growth(gpu, True)
    mt.config.experimental.get_memory_info("GPU:0")   # {"current": ..., "peak": ..., ...}
"""

from .. import _minitensor as _mt
from .._minitensor import LogicalDeviceConfiguration as VirtualDeviceConfiguration
from . import (
    _runtime_error_after_init, get_logical_device_configuration, get_visible_devices,
    list_logical_devices, list_physical_devices, set_logical_device_configuration,
    set_visible_devices)

set_virtual_device_configuration = set_logical_device_configuration
get_virtual_device_configuration = get_logical_device_configuration

__all__ = [
    "VirtualDeviceConfiguration", "get_memory_growth", "get_memory_info",
    "get_virtual_device_configuration", "get_visible_devices", "list_logical_devices",
    "list_physical_devices", "release_unused_memory", "reset_memory_stats", "set_gpu_options",
    "set_memory_growth", "set_virtual_device_configuration", "set_visible_devices",
]


@_runtime_error_after_init
def set_memory_growth(device, enable):
    """Lets ``device``'s pools start small and grow, instead of reserving their limit."""
    _mt.set_memory_growth(device, bool(enable))


def get_memory_growth(device):
    return _mt.get_memory_growth(device)


@_runtime_error_after_init
def set_gpu_options(per_process_gpu_memory_fraction=None):
    """Caps every GPU's pool at a fraction of its card (TensorFlow 1's GPUOptions)."""
    _mt.set_per_process_gpu_memory_fraction(per_process_gpu_memory_fraction)


def get_memory_info(device):
    """Returns the pool's accounting in bytes: current, peak, reserved, limit, and more."""
    return _mt.get_memory_info(device)


def reset_memory_stats(device):
    """Sets the peak of ``device``'s pool to its current use."""
    _mt.reset_memory_stats(device)


def release_unused_memory(device):
    """Returns the pool's empty regions to the system; returns how many bytes."""
    return _mt.release_unused_memory(device)
