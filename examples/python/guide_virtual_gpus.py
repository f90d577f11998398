"""The GPU guide's "Using multiple GPUs": two virtual GPUs of 1 GB each on the first card,
so code for several GPUs can be tried on one. Each is a full logical device with its own
pool; the other cards, if any, follow as one logical GPU each."""
import sys

import minitensor as mt
from example_support import MiB, say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)

# Create 2 virtual GPUs with 1GB memory each
try:
    mt.config.set_logical_device_configuration(
        gpus[0], [mt.config.LogicalDeviceConfiguration(memory_limit=1024),
                  mt.config.LogicalDeviceConfiguration(memory_limit=1024)])
    logical_gpus = mt.config.list_logical_devices("GPU")
    print(len(gpus), "Physical GPU,", len(logical_gpus), "Logical GPUs")
except RuntimeError as e:
    # Virtual devices must be set before GPUs have been initialized
    print(e)

logical_gpus = mt.config.list_logical_devices("GPU")
for i, gpu in enumerate(logical_gpus):
    if i < 2:
        limit = mt.config.experimental.get_memory_info(gpu.name)["limit"] // MiB
        print(f"{gpu.name}: {limit} MiB on {gpus[0].name}")
    else:
        print(f"{gpu.name}: all of {gpus[i - 1].name}")

# Too late: list_logical_devices initialised the runtime.
try:
    mt.config.set_logical_device_configuration(
        gpus[0], [mt.config.LogicalDeviceConfiguration(memory_limit=2048)])
except RuntimeError as e:
    print(e)
