"""Seed 004 (differing memory growth across GPUs): growth on the first GPU, not on the
second. A small tensor on each shows the difference: the growing pool reserves only a
small region, the other its whole limit."""
import sys

import minitensor as mt
from example_support import print_memory_growth, reservation, say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)
mt.config.experimental.set_memory_growth(gpus[0], True)
if len(gpus) > 1:
    mt.config.experimental.set_memory_growth(gpus[1], False)
print_memory_growth(gpus)

for gpu in mt.config.list_logical_devices("GPU")[:2]:
    with mt.device(gpu.name):
        t = mt.ones([1024])
        print(f"{gpu.name} after a 4 KiB tensor: {reservation(gpu.name)}")
