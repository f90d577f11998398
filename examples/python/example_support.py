"""What several example scripts share, as examples/example_support.h does for the C++
programs: the "needs a GPU" check, words about a GPU pool's reservation and memory growth
that hold on any card, the first line of an error message, and the --hold helper."""

import sys

import minitensor as mt

MiB = 1 << 20


def say_if_no_gpu(gpus, who=""):
    """Prints that the example needs a GPU when `gpus` is empty; returns whether it did."""
    if gpus:
        return False
    print((who + ": " if who else "") + "This example needs a GPU; none is visible.", flush=True)
    return True


def reserved_whole_limit(device):
    info = mt.config.experimental.get_memory_info(device)
    # Pools round their limit down to a multiple of 256 bytes.
    return info["reserved"] == info["limit"] // 256 * 256


def reservation(device):
    if reserved_whole_limit(device):
        return "the pool reserved its whole limit"
    return "the pool reserved only part of its limit"


def print_memory_growth(gpus):
    for gpu in gpus:
        growth = "on" if mt.config.experimental.get_memory_growth(gpu) else "off"
        print(f"{gpu.name} memory growth: {growth}")


def first_line(error):
    """Returns the first line of an error's message: minitensor adds details below it."""
    return str(error).split("\n", 1)[0]


def without_shape(error):
    """Returns the first line of an OOM message without the shape, which depends on the card."""
    line = first_line(error)
    start = line.find("shape[")
    end = line.find("]", start)
    if start < 0 or end < 0:
        return line
    return line[:start + 6] + "..." + line[end:]


def hold_until_stdin_closes(name):
    print(f"{name}: holding its memory until stdin closes", flush=True)
    for _ in sys.stdin:
        pass
