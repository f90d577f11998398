"""Seed 002 (managing GPU RAM): CUDA_VISIBLE_DEVICES decides which cards a program sees and
in which order. This program makes only its GPU:0 visible and takes 60% of it
(per_process_gpu_memory_fraction 0.6, with a tensor of half the card), so two copies fit
only on different cards.

    python3 cuda_visible_devices.py [NAME] [--hold]   # --hold: keep the memory until stdin closes
    python3 cuda_visible_devices.py --count           # prints the number of GPUs it sees
"""
import sys

import minitensor as mt
from example_support import hold_until_stdin_closes, reserved_whole_limit, say_if_no_gpu
from example_support import without_shape

name = sys.argv[1] if len(sys.argv) > 1 else "program"
hold = len(sys.argv) > 2 and sys.argv[2] == "--hold"
gpus = mt.config.list_physical_devices("GPU")
if name == "--count":
    print(len(gpus))
    sys.exit(0)
if say_if_no_gpu(gpus, name):
    sys.exit(0)
print(f"{name}: sees " + " ".join(gpu.name for gpu in gpus), flush=True)

# Use only GPU:0, whichever card CUDA_VISIBLE_DEVICES made it, and 60% of it.
mt.config.set_visible_devices(gpus[0], "GPU")
mt.config.experimental.set_gpu_options(per_process_gpu_memory_fraction=0.6)
try:
    with mt.device("/GPU:0"):
        limit = mt.config.experimental.get_memory_info("GPU:0")["limit"]  # 60% of the card
        held = mt.zeros([limit // 4 // 6 * 5])  # float32: 50% of it
        share = "60%" if reserved_whole_limit("GPU:0") else "less than 60%"
        print(f"{name}: GPU:0 holds {share} of its card", flush=True)
except mt.errors.OpError as e:
    print(f"{name}: {without_shape(e)}", flush=True)
    sys.exit(1)

if hold:
    hold_until_stdin_closes(name)
