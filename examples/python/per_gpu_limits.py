"""Seed 004 (differing memory limits across GPUs): 1 GB on GPU 0, 4 GB on GPU 1 and 2 GB on
GPU 2, configuring only as many GPUs as the machine has. A 1536 MiB tensor then fits
where the limit allows it and fails with TensorFlow's OOM error where it does not."""
import sys

import minitensor as mt
from example_support import MiB, first_line, say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)
try:
    for gpu, limit_mb in zip(gpus, [1024, 4096, 2048]):  # GPU 0, 1, 2
        mt.config.set_logical_device_configuration(
            gpu, [mt.config.LogicalDeviceConfiguration(memory_limit=limit_mb)])
    print("Memory limits configured for each GPU.")
except (RuntimeError, mt.errors.OpError) as e:
    print("Error setting logical device configuration:", e)

for gpu in mt.config.list_logical_devices("GPU"):
    limit = mt.config.experimental.get_memory_info(gpu.name)["limit"] // MiB
    print(f"{gpu.name}: limit {limit} MiB; a 1536 MiB tensor ", end="")
    try:
        with mt.device(gpu.name):
            t = mt.zeros([1536, MiB // 4])
        print("fits")
    except mt.errors.ResourceExhaustedError as e:
        print("does not fit:\n ", first_line(e))
