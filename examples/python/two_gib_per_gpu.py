"""Seeds 000/001 (managing GPU RAM): every GPU limited to 2 GiB, so several programs can
share all the cards. Each pool reserves its 2 GiB at the first allocation and never more:
a 1 GiB tensor fits on every GPU, a 3 GiB one on none."""
import sys

import minitensor as mt
from example_support import MiB, first_line, say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)
for gpu in gpus:
    mt.config.set_logical_device_configuration(
        gpu, [mt.config.LogicalDeviceConfiguration(memory_limit=2048)])

held = []
for gpu in mt.config.list_logical_devices("GPU"):
    with mt.device(gpu.name):
        held.append(mt.zeros([1024, MiB // 4]))  # 1 GiB of float32
        info = mt.config.experimental.get_memory_info(gpu.name)
        print(f"{gpu.name}: limit {info['limit'] // MiB} MiB, reserved "
              f"{info['reserved'] // MiB} MiB, in use {info['current'] // MiB} MiB")
        try:
            big = mt.zeros([3072, MiB // 4])  # 3 GiB
        except mt.errors.ResourceExhaustedError as e:
            print(" ", first_line(e))
