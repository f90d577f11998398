"""Python threads: each has its own mt.device scopes, and ops release the GIL."""

import threading
import time

import numpy as np

import minitensor as mt
from conftest import run_python


def test_device_scopes_are_per_thread():
    r = run_python("""
        import threading
        import minitensor as mt
        cpu = mt.config.list_physical_devices("CPU")[0]
        mt.config.set_logical_device_configuration(cpu, [mt.config.LogicalDeviceConfiguration()] * 2)
        seen = {}
        def work(i):
            with mt.device(f"/CPU:{i}"):
                for _ in range(200):
                    t = mt.constant([1.0]) + 1.0
                seen[i] = t.device
        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for th in threads: th.start()
        for th in threads: th.join()
        print(seen[0].endswith("CPU:0"), seen[1].endswith("CPU:1"))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "True True"


def test_ops_release_the_gil():
    with mt.device("/CPU:0"):  # a CPU matmul takes long; a GPU one only launches
        a = mt.constant(np.ones((1024, 1024), np.float32))
    stop = threading.Event()
    ticks = [0]

    def count():
        while not stop.is_set():
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    time.sleep(0.05)
    # A thread holding the GIL through a long call lets no Python code run meanwhile; the
    # counter advances during the matmuls only because they release it.
    during = 0
    with mt.device("/CPU:0"):
        for _ in range(5):
            before = ticks[0]
            mt.matmul(a, a)
            during = max(during, ticks[0] - before)
    stop.set()
    counter.join()
    assert during > 100
