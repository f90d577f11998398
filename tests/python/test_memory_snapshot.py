"""mt.config.experimental.memory_snapshot and last_oom_snapshot reach
runtime/trace/memory_snapshot.h: a pool's regions and chunks, its totals and its JSON."""

import json

import pytest

import minitensor as mt


def test_a_snapshot_covers_the_pool_and_agrees_with_get_memory_info():
    with mt.device("/CPU:0"):  # (the default device is a GPU where there is one)
        keep = mt.zeros([1000])  # noqa: F841  (4000 bytes in use while the snapshot is taken)
    s = mt.config.experimental.memory_snapshot("CPU:0")
    assert s.device == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert s.allocator == "CPU_0_bfc"
    assert s.totals == mt.config.experimental.get_memory_info("CPU:0")
    assert sum(r.size for r in s.regions) == s.totals["reserved"]
    for r in s.regions:
        assert sum(c.size for c in r.chunks) == r.size
        offsets = [c.offset for c in r.chunks]
        assert offsets == sorted(offsets) and offsets[0] == 0
    chunks = [c for r in s.regions for c in r.chunks]
    assert {c.state for c in chunks} <= {"free", "in_use", "cached"}
    # blocks a thread keeps cached read as in use (runtime/trace/memory_snapshot.h)
    assert sum(c.size for c in chunks if c.state == "in_use") >= s.totals["current"]
    assert any(c.state == "in_use" and c.size >= 4000 for c in chunks)
    assert json.loads(s.to_json())["allocator"] == "CPU_0_bfc"
    assert repr(s).startswith("MemorySnapshot(device='/job:localhost/replica:0/task:0/"
                              "device:CPU:0', allocator='CPU_0_bfc', regions=")


def test_a_snapshot_takes_a_logical_device():
    cpu = mt.config.list_logical_devices("CPU")[0]
    assert mt.config.experimental.memory_snapshot(cpu).device.endswith("device:CPU:0")


def test_no_oom_means_no_oom_snapshot():
    assert mt.config.experimental.last_oom_snapshot("CPU:0") is None


def test_an_oom_leaves_its_snapshot():
    from conftest import run_python
    done = run_python("""
        import minitensor as mt
        cpu = mt.config.list_physical_devices("CPU")[0]
        mt.config.set_logical_device_configuration(
            cpu, [mt.config.LogicalDeviceConfiguration(memory_limit=1)])
        with mt.device("/CPU:0"):  # (the default device is a GPU where there is one)
            keep = mt.zeros([100000])
            try:
                mt.zeros([1000000])
            except mt.errors.ResourceExhaustedError:
                pass
        s = mt.config.experimental.last_oom_snapshot("CPU:0")
        print(s.allocator, s.totals["current"] >= 400000, len(s.regions) > 0)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CPU_0_bfc", "True", "True"]


@pytest.mark.parametrize("fn", [mt.config.experimental.memory_snapshot,
                                mt.config.experimental.last_oom_snapshot])
def test_snapshot_errors(fn):
    with pytest.raises(mt.errors.NotFoundError,
                       match=r"^/job:localhost/replica:0/task:0/device:GPU:7 unknown device."):
        fn("GPU:7")
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^Malformed device name 'bad name!'"):
        fn("bad name!")
