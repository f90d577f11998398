"""The GPU guide's other way to turn memory growth on: TF_FORCE_GPU_ALLOW_GROWTH=true, with
no set_memory_growth call. minitensor accepts exactly "true" or "false"; any other value
is reported on stderr and ignored."""
import os
import sys

import minitensor as mt
from example_support import print_memory_growth, reservation, say_if_no_gpu

env = os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH")
print("TF_FORCE_GPU_ALLOW_GROWTH" + (" is unset" if env is None else "=" + env))
gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)

print_memory_growth(gpus)
with mt.device("/GPU:0"):
    t = mt.ones([1024])
    print("GPU:0 after a 4 KiB tensor:", reservation("GPU:0"))
