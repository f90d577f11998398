"""The GPU guide's "Manual placement" across GPUs: the same matmul on every logical GPU,
then add_n of the results on /CPU:0. With one card, four virtual GPUs of 1 GB stand in
for the guide's four GPUs; with two cards, each is one GPU."""
import sys

import minitensor as mt
from example_support import say_if_no_gpu

physical = mt.config.list_physical_devices("GPU")
if say_if_no_gpu(physical):
    sys.exit(0)
if len(physical) == 1:
    mt.config.set_logical_device_configuration(
        physical[0], [mt.config.LogicalDeviceConfiguration(memory_limit=1024)] * 4)

mt.debugging.set_log_device_placement(True)
mt.debugging.set_log_sink(print)

gpus = mt.config.list_logical_devices("GPU")
# Replicate your computation on multiple GPUs
c = []
for gpu in gpus:
    with mt.device(gpu.name):
        a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        c.append(mt.matmul(a, b))

with mt.device("/CPU:0"):
    matmul_sum = mt.add_n(c)

print(matmul_sum)
