"""mt.io.gfile: TensorFlow 2.21's results and errors (class and message) for each call, on
local paths, as tf.io.gfile gave them for the same calls."""

import pytest

import minitensor as mt

gfile = mt.io.gfile


def test_calls_give_tensorflows_results(tmp_path):
    root = str(tmp_path)
    gfile.makedirs(f"{root}/a/b")
    gfile.makedirs(f"{root}/a/b")  # exists: nothing
    gfile.mkdir(f"{root}/a")  # exists: nothing
    gfile.mkdir(f"{root}/c")
    (tmp_path / "f").write_text("x")
    assert (gfile.exists(f"{root}/a"), gfile.exists(f"{root}/f"),
            gfile.exists(f"{root}/nope")) == (True, True, False)
    assert (gfile.isdir(f"{root}/a"), gfile.isdir(f"{root}/f"),
            gfile.isdir(f"{root}/nope")) == (True, False, False)
    assert sorted(gfile.listdir(root)) == ["a", "c", "f"]
    assert gfile.listdir(f"{root}/a") == ["b"]
    assert gfile.glob(f"{root}/[ac]") == [f"{root}/a", f"{root}/c"]
    gfile.rmtree(f"{root}/a")
    gfile.rmtree(f"{root}/f")  # a file: removed
    gfile.rmtree(f"{root}/c")
    assert gfile.listdir(root) == []
    (tmp_path / "g").write_text("x")
    gfile.remove(tmp_path / "g")  # a path-like
    assert not gfile.exists(tmp_path / "g")


def test_errors_are_tensorflows(tmp_path):
    root = str(tmp_path)
    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    cases = [
        (lambda: gfile.makedirs(f"{root}/f/x"), mt.errors.FailedPreconditionError,
         f"{root}/f/x is not a directory"),
        (lambda: gfile.makedirs(f"{root}/f"), mt.errors.FailedPreconditionError,
         f"{root}/f is not a directory"),
        (lambda: gfile.mkdir(f"{root}/z/y"), mt.errors.NotFoundError,
         f"{root}/z/y; No such file or directory"),
        (lambda: gfile.listdir(f"{root}/nope"), mt.errors.NotFoundError,
         f"Could not find directory {root}/nope"),
        (lambda: gfile.listdir(f"{root}/f"), mt.errors.NotFoundError,
         f"Could not find directory {root}/f"),
        (lambda: gfile.remove(f"{root}/nope"), mt.errors.NotFoundError,
         f"{root}/nope; No such file or directory"),
        (lambda: gfile.remove(f"{root}/d"), mt.errors.FailedPreconditionError,
         f"{root}/d; Is a directory"),
        (lambda: gfile.rmtree(f"{root}/nope"), mt.errors.NotFoundError, f"{root}/nope not found"),
    ]
    for call, error, message in cases:
        with pytest.raises(error) as raised:
            call()
        assert str(raised.value) == message
