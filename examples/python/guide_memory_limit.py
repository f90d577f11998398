"""The GPU guide's "Limiting GPU memory growth", third part: a logical device with a hard
1 GB limit on the first GPU. Its pool never holds more: 768 MiB fit, 512 MiB more do
not, and the failure is TensorFlow's OOM error."""
import sys

import minitensor as mt
from example_support import MiB, first_line, say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)

# Restrict minitensor to only allocate 1GB of memory on the first GPU
try:
    mt.config.set_logical_device_configuration(
        gpus[0], [mt.config.LogicalDeviceConfiguration(memory_limit=1024)])
    logical_gpus = mt.config.list_logical_devices("GPU")
    print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
except RuntimeError as e:
    # Virtual devices must be set before GPUs have been initialized
    print(e)

with mt.device("/GPU:0"):
    held = mt.zeros([768, MiB // 4])  # 768 MiB of float32
    info = mt.config.experimental.get_memory_info("GPU:0")
    print(f"GPU:0 limit: {info['limit'] // MiB} MiB, reserved: {info['reserved'] // MiB} MiB, "
          f"in use: {info['current'] // MiB} MiB")
    try:
        more = mt.zeros([512, MiB // 4])
    except mt.errors.ResourceExhaustedError as e:
        print(first_line(e))
    info = mt.config.experimental.get_memory_info("GPU:0")
    print(f"GPU:0 after the failure: reserved: {info['reserved'] // MiB} MiB, "
          f"in use: {info['current'] // MiB} MiB")

    # Too late: the runtime is initialised.
    try:
        mt.config.set_logical_device_configuration(
            gpus[0], [mt.config.LogicalDeviceConfiguration(memory_limit=2048)])
    except RuntimeError as e:
        print(e)
