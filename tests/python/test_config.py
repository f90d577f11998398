"""mt.config and mt.debugging. Configuration is per process and freezes at the first op, so
each case that configures runs in a fresh interpreter."""

import os

import minitensor as mt
from conftest import run_python


def test_lists_devices_with_tensorflows_names():
    cpus = mt.config.list_physical_devices("CPU")
    assert cpus[0].name == "/physical_device:CPU:0" and cpus[0].device_type == "CPU"
    assert repr(cpus[0]) == "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')"
    logical = mt.config.list_logical_devices("CPU")
    assert logical[0].name == "/device:CPU:0"  # TensorFlow 2's LogicalDevice.name
    assert mt.config.list_physical_devices() == mt.config.list_physical_devices("CPU") + \
        mt.config.list_physical_devices("GPU")


def test_logical_cpus_place_ops_and_copy_inputs():
    r = run_python("""
        import minitensor as mt
        cpu = mt.config.list_physical_devices("CPU")[0]
        mt.config.set_logical_device_configuration(
            cpu, [mt.config.LogicalDeviceConfiguration(), mt.config.LogicalDeviceConfiguration()])
        print(mt.config.get_logical_device_configuration(cpu))
        a = mt.constant([[1.0, 2.0], [3.0, 4.0]])
        with mt.device("/CPU:1"):
            c = mt.matmul(a, a)
        print(c.device)
        print(mt.config.experimental.get_memory_info("CPU:1")["current"] > 0)
        mt.config.experimental.reset_memory_stats("CPU:1")
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "[LogicalDeviceConfiguration(memory_limit=None), "
        "LogicalDeviceConfiguration(memory_limit=None)]",
        "/job:localhost/replica:0/task:0/device:CPU:1", "True"]


def test_configuration_after_initialisation_is_a_runtime_error():
    r = run_python("""
        import minitensor as mt
        cpu = mt.config.list_physical_devices("CPU")[0]
        mt.constant(1.0)
        try:
            mt.config.set_logical_device_configuration(
                cpu, [mt.config.LogicalDeviceConfiguration(memory_limit=1)] * 2)
        except RuntimeError as e:
            print(type(e).__name__, e)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("RuntimeError Virtual devices cannot be modified after being "
                               "initialized"), r.stdout


def test_out_of_memory_is_resource_exhausted():
    r = run_python("""
        import minitensor as mt
        cpu = mt.config.list_physical_devices("CPU")[0]
        mt.config.set_logical_device_configuration(
            cpu, [mt.config.LogicalDeviceConfiguration(memory_limit=1)])
        try:
            with mt.device("/CPU:0"):
                mt.zeros([1024, 1024])
        except mt.errors.ResourceExhaustedError as e:
            print(e.message.splitlines()[0])
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OOM when allocating tensor with shape[1024,1024] and type "
                               "float on /job:localhost/replica:0/task:0/device:CPU:0"), r.stdout


def test_soft_placement_runs_on_an_existing_device():
    r = run_python("""
        import minitensor as mt
        mt.config.set_soft_device_placement(True)
        print(mt.config.get_soft_device_placement())
        with mt.device("/GPU:7"):
            print(mt.constant(1.0).device)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "True"
    assert r.stdout.splitlines()[1].startswith("/job:localhost/replica:0/task:0/device:")


def test_log_lines_go_to_stderr_or_to_a_sink():
    r = run_python("""
        import minitensor as mt
        mt.debugging.set_log_device_placement(True)
        a = mt.constant([1.0])
        lines = []
        mt.debugging.set_log_sink(lines.append)
        mt.add(a, a)
        mt.debugging.set_log_sink(None)
        print(lines)
    """, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0, r.stderr
    assert ("Executing op _EagerConst in device "
            "/job:localhost/replica:0/task:0/device:CPU:0") in r.stderr
    assert r.stdout.strip() == (
        "['Executing op AddV2 in device /job:localhost/replica:0/task:0/device:CPU:0']")


def test_placement_policy_switches_between_priority_and_cost(tmp_path):
    r = run_python(f"""
        import minitensor as mt
        exp = mt.config.experimental
        print(exp.get_placement_policy())
        exp.set_placement_policy("cost")
        print(exp.get_placement_policy())
        try:
            exp.set_placement_policy("fastest")
        except ValueError as e:
            print(e)
        print(exp.load_placement_history({str(tmp_path / "missing.txt")!r}))
        exp.save_placement_history({str(tmp_path / "history.txt")!r})
        print(exp.load_placement_history({str(tmp_path / "history.txt")!r}))
        exp.set_placement_policy("priority")
        print(exp.get_placement_policy())
    """, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "priority", "cost",
        "placement policy must be one of 'priority', 'cost', got 'fastest'",
        "False", "True", "priority"]
    assert "placement history" in r.stderr and "not loaded" in r.stderr


def test_log_lines_follow_a_replaced_sys_stderr_as_in_a_notebook():
    # A notebook replaces sys.stderr and never shows the process's file descriptor 2:
    # without a sink of the user's, the lines go through sys.stderr (TensorFlow #24686).
    r = run_python("""
        import io, sys
        import minitensor as mt
        a = mt.constant([1.0])
        notebook = io.StringIO()
        sys.stderr = notebook
        mt.debugging.set_log_device_placement(True)
        mt.add(a, a)
        mt.debugging.set_log_device_placement(False)
        sys.stderr = sys.__stderr__
        print(notebook.getvalue().strip())
    """, env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == (
        "Executing op AddV2 in device /job:localhost/replica:0/task:0/device:CPU:0")
    assert "Executing op" not in r.stderr
