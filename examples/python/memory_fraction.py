"""Seed 002 (managing GPU RAM): per_process_gpu_memory_fraction = 0.4 caps each GPU's pool
at 40% of the card, so two such programs share the cards but three do not. Each pool
reserves its whole cap at the first allocation, here a tensor of 30% of the card.

    python3 memory_fraction.py [NAME] [--hold]   # --hold: keep the memory until stdin closes
"""
import sys

import minitensor as mt
from example_support import hold_until_stdin_closes, reserved_whole_limit, say_if_no_gpu
from example_support import without_shape

name = sys.argv[1] if len(sys.argv) > 1 else "process"
hold = len(sys.argv) > 2 and sys.argv[2] == "--hold"
if say_if_no_gpu(mt.config.list_physical_devices("GPU"), name):
    sys.exit(0)

mt.config.experimental.set_gpu_options(per_process_gpu_memory_fraction=0.4)
held = []
try:
    for gpu in mt.config.list_logical_devices("GPU"):
        with mt.device(gpu.name):
            limit = mt.config.experimental.get_memory_info(gpu.name)["limit"]  # 40% of the card
            held.append(mt.zeros([limit // 4 // 4 * 3]))  # float32: 30% of it
            share = "40% of its card" if reserved_whole_limit(gpu.name) else \
                "less than 40% of its card"
            print(f"{name}: {gpu.name} holds {share}", flush=True)
except mt.errors.OpError as e:
    print(f"{name}: {without_shape(e)}", flush=True)
    sys.exit(1)

if hold:
    hold_until_stdin_closes(name)
