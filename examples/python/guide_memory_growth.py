"""The GPU guide's "Limiting GPU memory growth", second part: set_memory_growth makes each
GPU's pool start small and grow as needed instead of reserving its whole limit at the
first allocation. TF_FORCE_GPU_ALLOW_GROWTH, when "true" or "false", overrides it."""
import os
import sys

import minitensor as mt
from example_support import print_memory_growth, reservation, say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)
env = os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH")
print("TF_FORCE_GPU_ALLOW_GROWTH" + (" is unset" if env is None else "=" + env))

try:
    # TensorFlow needs memory growth to be the same across GPUs; minitensor does not.
    for gpu in gpus:
        mt.config.experimental.set_memory_growth(gpu, True)
    logical_gpus = mt.config.list_logical_devices("GPU")
    print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPUs")
except RuntimeError as e:
    # Memory growth must be set before GPUs have been initialized
    print(e)
print_memory_growth(gpus)

with mt.device("/GPU:0"):
    t = mt.ones([1024])
    print("GPU:0 after a 4 KiB tensor:", reservation("GPU:0"))

# Too late: the runtime is initialised.
try:
    mt.config.experimental.set_memory_growth(gpus[0], False)
except RuntimeError as e:
    print(e)
