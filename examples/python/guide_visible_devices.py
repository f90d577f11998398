"""The GPU guide's "Limiting GPU memory growth", first part: set_visible_devices restricts
the runtime to the first GPU. Once the runtime has initialised, the visible devices can
no longer change, and the error says so in TensorFlow's words."""
import sys

import minitensor as mt
from example_support import say_if_no_gpu

gpus = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(gpus):
    sys.exit(0)

# Restrict minitensor to only use the first GPU
try:
    mt.config.set_visible_devices(gpus[0], "GPU")
    logical_gpus = mt.config.list_logical_devices("GPU")
    print(len(gpus), "Physical GPUs,", len(logical_gpus), "Logical GPU")
except RuntimeError as e:
    # Visible devices must be set before GPUs have been initialized
    print(e)
for gpu in mt.config.get_visible_devices("GPU"):
    print("Visible:", gpu.name)

# Ops run on the one visible GPU; a second GPU, if the machine has one, is unknown now.
# (Soft placement, on by default, would run the op on GPU:0 instead of saying so.)
mt.config.set_soft_device_placement(False)
a = mt.constant([[1.0, 2.0], [3.0, 4.0]])
print("MatMul ran on", mt.matmul(a, a).device)
try:
    with mt.device("/GPU:1"):
        mt.matmul(a, a)
except mt.errors.NotFoundError as e:
    print(e)

# Too late: the runtime initialised with the first op.
try:
    mt.config.set_visible_devices([], "GPU")
except RuntimeError as e:
    print(e)
