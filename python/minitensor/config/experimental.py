"""tf.config.experimental: memory growth, memory statistics and the older aliases, and
minitensor's placement policies.

    mt.config.experimental.set_memory_growth(gpu, True)
    mt.config.experimental.get_memory_info("GPU:0")   # {"current": ..., "peak": ..., ...}
    mt.config.experimental.memory_snapshot("GPU:0")   # the pool's regions and chunks
    mt.config.experimental.set_placement_policy("cost")  # docs/placement.md
"""

from .. import _minitensor as _mt
from .._minitensor import LogicalDeviceConfiguration as VirtualDeviceConfiguration
from .devices import (
    _runtime_error_after_init, get_logical_device_configuration, get_visible_devices,
    list_logical_devices, list_physical_devices, set_logical_device_configuration,
    set_visible_devices)

set_virtual_device_configuration = set_logical_device_configuration
get_virtual_device_configuration = get_logical_device_configuration

__all__ = [
    "VirtualDeviceConfiguration", "get_bus_calibration_path", "get_memory_growth",
    "get_memory_info", "get_placement_policy", "last_oom_snapshot", "load_placement_history",
    "memory_snapshot",
    "save_placement_history", "set_placement_policy",
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


def memory_snapshot(device):
    """Returns every region of ``device``'s pool and every chunk in it: a MemorySnapshot
    with ``device``, ``allocator``, ``totals`` (get_memory_info's dict), ``regions``
    (``address``, ``size``, ``chunks``: ``offset``, ``size``, ``state`` "free", "in_use"
    or "cached", and ``op``, ``dtype``, ``shape``, ``time_us`` where a trace recorded the
    allocation) and ``to_json()``. Raises NotFoundError for an unknown device."""
    return _mt.memory_snapshot(_device_name(device))


def last_oom_snapshot(device):
    """Returns the snapshot taken when ``device``'s pool last ran out of memory, or None."""
    return _mt.last_oom_snapshot(_device_name(device))


def _device_name(device):
    return getattr(device, "name", device)


def reset_memory_stats(device):
    """Sets the peak of ``device``'s pool to its current use."""
    _mt.reset_memory_stats(device)


def release_unused_memory(device):
    """Returns the pool's empty regions to the system; returns how many bytes."""
    return _mt.release_unused_memory(device)


_POLICIES = ("priority", "cost")


def set_placement_policy(policy):
    """Chooses how ops that no device scope and no variable pins pick their device.

    "priority" (the default) is TensorFlow's eager placer; "cost" runs each op where its
    estimated finish is earliest, from measured times (docs/placement.md).
    """
    if policy not in _POLICIES:
        raise ValueError(
            f"placement policy must be one of {', '.join(map(repr, _POLICIES))}, got {policy!r}")
    _mt.set_placement_policy(policy == "cost")


def get_placement_policy():
    """Returns "priority" or "cost"."""
    return "cost" if _mt.get_placement_policy_is_cost() else "priority"


def save_placement_history(path):
    """Writes the cost policy's measurements to ``path``."""
    _mt.save_placement_history(str(path))


def load_placement_history(path):
    """Loads measurements saved by save_placement_history; False (with a warning) when the
    file is missing, corrupt or from another machine."""
    return _mt.load_placement_history(str(path))


def get_bus_calibration_path():
    """Returns the bus calibration cache file ("" when none): delete it to measure again."""
    return _mt.get_bus_calibration_path()
