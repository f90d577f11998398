"""mt.trace from Python: a recording, its JSON and report files, and its errors."""

import json

import pytest

import minitensor as mt


@pytest.fixture(autouse=True)
def no_recording_left():
    yield
    if mt.trace.is_recording():
        mt.trace.stop()


def test_recording_holds_each_op_with_its_device_and_shapes():
    a = mt.constant([1.0, 2.0, 3.0])
    with mt.device("/CPU:0"):
        with mt.trace.Recording():
            assert mt.trace.is_recording()
            mt.multiply(mt.add(a, a), a)
    assert not mt.trace.is_recording()
    events = json.loads(mt.trace.to_json())["traceEvents"]
    ops = [e for e in events if e.get("cat") == "op"]
    assert [e["name"] for e in ops] == ["AddV2", "Mul"]
    for e in ops:
        assert e["args"]["device"] == "/job:localhost/replica:0/task:0/device:CPU:0"
        assert e["args"]["dtype"] == "float32"
        assert e["args"]["shapes"] == "(3,), (3,) -> (3,)"
        assert e["args"]["bytes_allocated"] > 0
        assert e["dur"] >= 0
    assert any(e.get("cat") == "memory" for e in events)


def test_save_and_write_report_write_files(tmp_path):
    a = mt.constant([[1.0, 2.0], [3.0, 4.0]])
    mt.trace.start()
    mt.matmul(a, a)
    mt.trace.stop()
    mt.trace.save(tmp_path / "trace.json")
    mt.trace.write_report(str(tmp_path / "report.html"))
    saved = json.loads((tmp_path / "trace.json").read_text())
    assert any(e.get("name") == "MatMul" for e in saved["traceEvents"])
    report = (tmp_path / "report.html").read_text()
    assert report == mt.trace.report_html()
    assert "MatMul" in report


def test_starting_twice_or_stopping_nothing_fails():
    mt.trace.start()
    with pytest.raises(mt.errors.FailedPreconditionError, match="already running"):
        mt.trace.start()
    mt.trace.stop()
    with pytest.raises(mt.errors.FailedPreconditionError, match="no recording is running"):
        mt.trace.stop()


def test_writing_into_a_missing_folder_is_not_found(tmp_path):
    with pytest.raises(mt.errors.NotFoundError, match="cannot write"):
        mt.trace.save(tmp_path / "missing" / "trace.json")
    with pytest.raises(mt.errors.NotFoundError, match="cannot write"):
        mt.trace.write_report(tmp_path / "missing" / "report.html")
