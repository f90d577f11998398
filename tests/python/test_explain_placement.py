"""mt.debugging.explain_placement and set_log_placement_reasons reach runtime/debugging.h:
the decision, its reason and its copies, as data and in the log."""

import pytest

import minitensor as mt

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
# Where an op with no scope goes: the first GPU when there is one (it has every kernel used
# here), else the CPU.
BEST = ("/job:localhost/replica:0/task:0/device:GPU:0"
        if mt.config.list_physical_devices("GPU") else CPU)


@pytest.fixture
def log_lines():
    lines = []
    mt.debugging.set_log_sink(lines.append)
    mt.debugging.set_log_device_placement(True)
    yield lines
    mt.debugging.set_log_device_placement(False)
    mt.debugging.set_log_placement_reasons(False)
    mt.debugging.set_log_sink(None)


def test_explain_placement_returns_the_decision_without_running_the_op(log_lines):
    a, b = mt.constant([1.0, 2.0]), mt.constant([3.0, 4.0])
    log_lines.clear()
    e = mt.debugging.explain_placement("AddV2", [a, b])
    assert log_lines == []  # nothing ran
    assert (e.op, e.device, e.requested, e.reason) == ("AddV2", BEST, "", "default")
    assert e.detail == "default: the best device with a kernel" and e.copies == []
    assert repr(e) == ('op: "AddV2"\ndevice: "' + BEST + '"\nreason: "default"\n'
                       'detail: "default: the best device with a kernel"')


def test_explain_placement_converts_inputs_and_takes_a_dtype_name():
    assert mt.debugging.explain_placement("Cast", [[1, 2]]).op == "Cast"
    e = mt.debugging.explain_placement("_EagerConst", [], dtype="int64")
    assert (e.op, e.device, e.reason) == ("_EagerConst", BEST, "default")


def test_explain_placement_says_a_soft_fallback_names_the_scope(num_gpus):
    if num_gpus:
        pytest.skip("the machine has a GPU")
    soft = mt.config.get_soft_device_placement()
    mt.config.set_soft_device_placement(True)
    try:
        with mt.device("/GPU:0"):
            e = mt.debugging.explain_placement("AddV2", [mt.constant(1.0), mt.constant(2.0)])
    finally:
        mt.config.set_soft_device_placement(soft)
    assert (e.device, e.requested, e.reason) == (CPU, "/device:GPU:0", "soft_fallback")
    assert e.detail == "soft placement: /device:GPU:0 does not exist"


def test_explain_placement_lists_the_inputs_copied(needs_gpu):
    with mt.device("/GPU:0"):
        g = mt.constant([1.0, 2.0])
    with mt.device("/CPU:0"):
        e = mt.debugging.explain_placement("AddV2", [g, mt.constant([1.0, 2.0])])
    assert [(c.input, c.source, c.bytes) for c in e.copies] == [(0, "GPU:0", 8)]
    assert 'copies { input: 0 from: "GPU:0" bytes: 8 }' in repr(e)


def test_explain_placement_errors():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[explain_placement\] unknown op 'Nope'$"):
        mt.debugging.explain_placement("Nope", [mt.constant(1.0)])
    with pytest.raises(TypeError, match="^Cannot convert the argument `type_value`: 'nope' "
                                        "to a minitensor DType.$"):
        mt.debugging.explain_placement("_EagerConst", [], dtype="nope")


def test_log_placement_reasons_append_why_to_each_line(log_lines):
    assert mt.debugging.get_log_placement_reasons() is False
    mt.debugging.set_log_placement_reasons(True)
    assert mt.debugging.get_log_placement_reasons() is True
    a = mt.constant([1.0])
    a + a
    mt.debugging.set_log_placement_reasons(False)
    a + a
    assert log_lines == [
        f"Executing op _EagerConst in device {BEST} (default: the best device with a kernel)",
        f"Executing op AddV2 in device {BEST} (default: the best device with a kernel)",
        f"Executing op AddV2 in device {BEST}"]
