"""Shared helpers of the Python tests. They run against the installed package
(scripts/test.sh installs it into a venv first), never against the source tree."""

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


@pytest.fixture
def num_gpus():
    return len(mt.config.list_physical_devices("GPU"))


@pytest.fixture
def needs_gpu(num_gpus):
    if num_gpus == 0:
        pytest.skip("needs a GPU")
