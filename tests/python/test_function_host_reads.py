"""Host reads while mt.function traces are errors naming the user's line; mt.cond and
mt.while_loop decide on the host, eagerly and in functions (which then run their body
eagerly at every call), giving TensorFlow's answers at every call."""

import inspect

import numpy as np
import pytest

import minitensor as mt


def _line_of(text, func):
    """The absolute line number of ``text`` in ``func``'s source."""
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_a_python_branch_on_a_tensor_raises_naming_the_line():
    @mt.function
    def h(x):
        return x if mt.reduce_sum(x) > 0 else -x

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError) as info:
        h(mt.constant([1.0]))
    message = str(info.value)
    assert isinstance(info.value, TypeError)
    assert message.startswith("Using a tensor as a Python `bool` is not allowed while "
                              "mt.function traces 'h'")
    assert f'File "{__file__}", line {_line_of("return x if", h.python_function)}' in message
    assert "`return x if mt.reduce_sum(x) > 0 else -x`" in message
    assert "Move the read outside the function" in message and "mt.cond" in message
    assert "mt.where" in message


@pytest.mark.parametrize("read, what", [
    (float, "a Python `float`"), (int, "a Python `int`"), (bool, "a Python `bool`"),
    (lambda t: t.numpy(), "`.numpy()`"), (lambda t: t.__array__(), "a NumPy array"),
    (lambda t: [1, 2, 3][mt.cast(t, mt.int32)], "a Python index"),
    (lambda t: mt.Variable(t).numpy(), "`.numpy()`")])
def test_every_host_read_raises_while_tracing(read, what):
    @mt.function
    def f(x):
        read(x)
        return x

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError,
                       match=f"Using a tensor as {what.replace('(', '[(]').replace(')', '[)]')}"
                       " is not allowed while mt.function traces 'f'"):
        f(mt.constant(2.0))
    assert float(f.python_function(mt.constant(2.0))) == 2.0  # eagerly the read is fine


def test_a_nested_function_names_the_outer_trace_and_the_users_line():
    @mt.function
    def inner(x):
        return float(x)

    @mt.function
    def outer(x):
        return inner(x * 2.0)

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError) as info:
        outer(mt.constant(1.0))
    assert "mt.function traces 'outer'" in str(info.value)
    assert f"line {_line_of('return float(x)', inner.python_function)}" in str(info.value)


def test_printing_and_shapes_are_allowed_while_tracing(capsys):
    v = mt.Variable([1.0, 2.0])

    @mt.function
    def f(x):
        print(x, repr(x), v, len(x), x.shape)
        return x * 2.0

    np.testing.assert_array_equal(f(mt.constant([1.0, 3.0])).numpy(), [2.0, 6.0])
    out = capsys.readouterr().out
    assert out.startswith("Tensor([1. 3.], shape=(2,), dtype=float32)")
    assert "numpy=array([1., 3.]" in out and "numpy=[1., 2.]> 2 (2,)" in out


def test_reads_after_the_function_returned_are_fine():
    @mt.function
    def f(x):
        return mt.reduce_sum(x)

    assert float(f(mt.constant([1.0, 2.0]))) == 3.0
    assert f(mt.constant([1.0, 2.0])).numpy() == 3.0


def test_cond_in_a_function_gives_the_eager_answer_at_every_call():
    @mt.function
    def h(x):
        return mt.cond(mt.reduce_sum(x) > 0, lambda: x, lambda: -x)

    for value, want in [([1.0], [1.0]), ([-1.0], [1.0]), ([-2.0, 1.0], [2.0, -1.0]),
                        ([3.0], [3.0]), ([-4.0], [4.0])]:
        np.testing.assert_array_equal(h(mt.constant(value)).numpy(), want)
    assert h.experimental_get_tracing_count() == 2  # two shapes
    assert h.replay_kind == "eager"


def test_a_signature_that_cannot_replay_reads_freely_after_its_trace():
    calls = []

    @mt.function
    def f(x):
        calls.append(1)
        y = mt.cond(x > 0, lambda: x + 1.0, lambda: x - 1.0)
        # The first call traces (a read would raise); later calls run eagerly and may read.
        return y * 2.0 if len(calls) == 1 else y * float(y)

    assert float(f(mt.constant(1.0))) == 4.0
    assert float(f(mt.constant(1.0))) == 4.0
    assert float(f(mt.constant(-3.0))) == 16.0
    assert len(calls) == 3


def test_cond_eagerly_and_its_errors_match_tensorflow():
    assert mt.cond(mt.constant(True), lambda: 1, lambda: 2) == 1
    assert mt.cond(False, lambda: 1, lambda: 2) == 2
    assert mt.cond(mt.constant(0), lambda: 1, lambda: 2) == 2
    assert mt.cond(mt.constant([True]), lambda: 1, lambda: 2) == 1
    for args, error, message in [
            ((mt.constant(True),), TypeError, "cond(): 'true_fn' argument required"),
            ((mt.constant(True), lambda: 1), TypeError, "cond(): 'false_fn' argument required"),
            ((mt.constant(True), 1, lambda: 2), TypeError, "'true_fn' must be callable."),
            ((mt.constant(True), lambda: 1, 2), TypeError, "'false_fn' must be callable."),
            ((mt.constant([True, False]), lambda: 1, lambda: 2), ValueError,
             "The truth value of an array with more than one element is ambiguous. Use "
             "a.any() or a.all()"),
            ((None, lambda: 1, lambda: 2), ValueError, "Attempt to convert a value (None)")]:
        with pytest.raises(error) as info:
            mt.cond(*args)
        assert str(info.value).startswith(message)


def test_while_loop_eagerly_matches_tensorflow():
    i, total = mt.while_loop(lambda i, t: i < 10, lambda i, t: (i + 1, t * 2), (0, 1))
    assert (int(i), int(total)) == (10, 1024) and i.dtype == mt.int32
    out = mt.while_loop(lambda i: i < 10, lambda i: i + 1, [mt.constant(0)])
    assert int(out) == 10
    out = mt.while_loop(lambda i: i < 10, lambda i: [i + 1], [mt.constant(0)])
    assert isinstance(out, list) and int(out[0]) == 10
    out = mt.while_loop(lambda i: i < 3, lambda i: (i + 1,), [5])
    assert isinstance(out, list) and int(out[0]) == 5
    out = mt.while_loop(lambda i: i < 3, lambda i: (i + 1,), [0], maximum_iterations=2)
    assert int(out[0]) == 2
    i, d = mt.while_loop(lambda i, d: i < 3, lambda i, d: (i + 1, {"a": d["a"] * 2.0}),
                         [0, {"a": 1.5}])
    assert float(d["a"]) == 12.0 and d["a"].dtype == mt.float32


def test_while_loop_errors_match_tensorflow():
    for args, error, message in [
            ((1, lambda i: i, [0]), TypeError, "'cond' must be callable."),
            ((lambda i: i < 1, 1, [0]), TypeError, "'body' must be callable."),
            ((lambda i: i < 1, lambda i: i, []), ValueError, "'loop_vars' must be provided."),
            ((lambda i, j: i < 3, lambda i, j: (i + 1,), (0, 1)), ValueError,
             "The two structures don't have the same nested structure"),
            ((lambda i: mt.constant([True, True]), lambda i: i, [0]), ValueError,
             "The truth value of an array with more than one element is ambiguous")]:
        with pytest.raises(error) as info:
            mt.while_loop(*args)
        assert str(info.value).startswith(message)


def test_while_loop_in_a_function_loops_at_every_call():
    @mt.function
    def f(n):
        return mt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), [0, 0])[1]

    assert [int(f(mt.constant(n))) for n in (3, 5, 0, 4)] == [3, 10, 0, 6]
    assert f.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("read", [np.asarray, np.array, memoryview,
                                  lambda t: np.frombuffer(t, np.float32)])
def test_a_buffer_read_raises_while_tracing(read):
    @mt.function
    def f(x):
        read(x)
        return x

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError,
                       match="is not allowed while mt.function traces 'f'") as info:
        f(mt.constant([2.0]))
    assert f'File "{__file__}", line ' in str(info.value)  # the read's line (or the lambda's)
    with mt.device("/CPU:0"):  # (a GPU tensor has no host buffer to view)
        host = mt.constant([2.0])
    np.testing.assert_array_equal(read(host), [2.0])  # after the trace, fine


def test_memoryview_names_the_buffer_protocol():
    @mt.function
    def f(x):
        memoryview(x)
        return x

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError,
                       match=r"Using a tensor as a buffer \(`np.asarray`, `memoryview`\) is "
                             "not allowed while mt.function traces 'f'") as info:
        f(mt.constant([2.0]))
    assert f"line {_line_of('memoryview(x)', f.python_function)}" in str(info.value)


def test_a_buffer_read_of_a_variable_raises_while_tracing():
    v = mt.Variable([1.0, 2.0])

    @mt.function
    def f():
        return np.asarray(v.read_value()).sum()

    with pytest.raises(mt.errors.OperatorNotAllowedInGraphError):
        f()


def test_another_thread_reads_buffers_while_one_traces():
    import threading
    inside, read = threading.Event(), threading.Event()
    seen = []

    @mt.function
    def f(x):
        inside.set()
        read.wait(10)
        return x * 2.0

    def reader():
        inside.wait(10)
        with mt.device("/CPU:0"):  # (a GPU tensor has no host buffer to view)
            host = mt.constant([3.0])
        seen.append(np.asarray(memoryview(host)).tolist())
        read.set()

    thread = threading.Thread(target=reader)
    thread.start()
    np.testing.assert_array_equal(f(mt.constant([1.0])).numpy(), [2.0])
    thread.join()
    assert seen == [[3.0]]
