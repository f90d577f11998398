"""``mt.device``: the device scope of the Python thread (re-exported by the package)."""

from typing import Union

from . import _minitensor as _mt
from ._minitensor import LogicalDevice, PhysicalDevice

__all__ = ["device"]


def device(device_name: Union[str, LogicalDevice, PhysicalDevice]) -> _mt.DeviceBlock:
    """Asks that the ops of this thread run on ``device_name`` inside a ``with`` block:
    ``with mt.device("/GPU:0"):``. Blocks nest; each thread has its own."""
    if isinstance(device_name, (LogicalDevice, PhysicalDevice)):
        device_name = device_name.name
    return _mt.DeviceBlock(device_name)
