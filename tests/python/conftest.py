"""Shared helpers of the Python tests. They run against the installed package
(scripts/test.sh installs it into a venv first), never against the source tree."""

import re
import subprocess
import sys
import textwrap

import pytest

import minitensor as mt

# The examples and the configuration tests start processes that take much of a GPU; this
# process must not reserve a whole card at its first tensor.
for _gpu in mt.config.list_physical_devices("GPU"):
    mt.config.experimental.set_memory_growth(_gpu, True)


def run_python(code, env=None):
    """Runs `code` in a fresh interpreter (configuration is per process); returns it done."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120)


def raises_at_call_or_first_read(exception, match, fn):
    """Checks the error of an index out of range, which the CPU raises at the call; a GPU
    kernel cannot, so the call returns a GPU tensor and its first host read raises the same
    error (Note [GPU index faults] in kernels/cuda/index_fault.h)."""
    try:
        out = fn()
    except exception as e:
        assert re.search(match, str(e)), str(e)
        return
    assert "GPU" in out.device, f"no {exception.__name__} from the call on {out.device}"
    with pytest.raises(exception, match=match):
        out.numpy()


@pytest.fixture
def num_gpus():
    return len(mt.config.list_physical_devices("GPU"))


@pytest.fixture
def needs_gpu(num_gpus):
    if num_gpus == 0:
        pytest.skip("needs a GPU")
