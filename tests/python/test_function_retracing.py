"""Retracing made visible and bounded: TensorFlow's warning after repeated traces, a bound
on the traces a function keeps (least recently used freed, their memory back in the pool),
input_signature checked and converted as TensorFlow, and reduce_retracing."""

import logging

import numpy as np
import pytest

import minitensor as mt


def _warnings(caplog):
    return [r.getMessage() for r in caplog.records
            if r.name == "minitensor" and r.levelno == logging.WARNING]


def test_repeated_retracing_warns_twice_with_tensorflows_counts(caplog):
    def body(x, n):
        return x

    g = mt.function(body)
    with caplog.at_level(logging.WARNING, logger="minitensor"):
        for n in range(14):  # a new constant every other call, as TensorFlow's check
            g(mt.constant(1.0), n if n % 2 == 0 else 0)
    messages = _warnings(caplog)
    assert len(messages) == 2
    assert messages[0].startswith(f"5 out of the last 9 calls to {body!r} triggered "
                                  "mt.function retracing. Tracing is expensive")
    assert messages[1].startswith(f"6 out of the last 11 calls to {body!r} triggered")
    assert "reduce_retracing=True" in messages[0]


def test_a_function_replaying_its_traces_does_not_warn(caplog):
    f = mt.function(lambda x: x * 2.0)
    with caplog.at_level(logging.WARNING, logger="minitensor"):
        for n in range(4):
            for _ in range(5):
                f(mt.zeros([n + 1]))
    assert _warnings(caplog) == []


def test_traces_are_bounded_and_their_memory_returns_to_the_pool():
    def body(x):
        return mt.reduce_sum(mt.tanh(x * 2.0) + x)

    def current():
        return mt.config.experimental.get_memory_info("CPU:0")["current"]

    g = mt.function(body)
    base = current()
    for n in range(40):
        g(mt.zeros([200 + n, 200]))
    bound = mt._function.MAX_TRACED_SIGNATURES
    assert g.traced_signatures == bound and g.experimental_get_tracing_count() == 40
    assert 0 < g.arena_bytes <= bound * 3 * 239 * 200 * 4
    assert current() - base <= g.arena_bytes + (1 << 20)
    g(mt.zeros([239, 200]))                      # the most recent: replays
    assert g.experimental_get_tracing_count() == 40
    g(mt.zeros([200, 200]))                      # freed long ago: traces again
    assert g.experimental_get_tracing_count() == 41
    assert float(g(mt.ones([201, 200]))) == pytest.approx(float(body(mt.ones([201, 200]))))
    del g
    assert current() - base < (1 << 20)


def test_a_thousand_shapes_leave_the_pool_where_the_bound_says():
    # The measure: 1,000 calls, each with a shape of its own.
    def body(x):
        return mt.reduce_sum(mt.tanh(x * 2.0) + x)

    def current():
        return mt.config.experimental.get_memory_info("CPU:0")["current"]

    g = mt.function(body)
    base = current()
    for n in range(1000):
        g(mt.zeros([n + 1, 256]))
    bound = mt._function.MAX_TRACED_SIGNATURES
    assert g.experimental_get_tracing_count() == 1000 and g.traced_signatures == bound
    # The arena holds at most the bound's traces, each a few tensors of the largest shapes.
    assert 0 < g.arena_bytes <= bound * 3 * 1000 * 256 * 4
    assert current() - base <= g.arena_bytes + (1 << 20)
    del g
    assert current() - base < (1 << 20)


def test_input_signature_converts_and_accepts_any_size_where_none():
    @mt.function(input_signature=[mt.TensorSpec([None], mt.float32)])
    def f(x):
        return x * 2.0

    assert f(mt.constant([1.0, 2.0])).numpy().tolist() == [2.0, 4.0]
    assert f([1.0, 2.0, 3.0]).numpy().tolist() == [2.0, 4.0, 6.0]
    assert f(np.array([1.0])).numpy().tolist() == [2.0]
    assert f(x=mt.Variable([4.0])).numpy().tolist() == [8.0]
    assert f.input_signature == [mt.TensorSpec([None], mt.float32)]
    pair = mt.function(lambda p: p[0] + p[1],
                       input_signature=[(mt.TensorSpec([1]), mt.TensorSpec([1]))])
    assert pair((mt.constant([1.0]), [2.0])).numpy().tolist() == [3.0]


@pytest.mark.parametrize("args, why", [
    ((mt.constant([1, 2]),), "Can not cast TensorSpec(shape=(2,), dtype=mt.int32, name=None) "
     "to TensorSpec(shape=(None,), dtype=mt.float32, name=None)"),
    ((mt.constant([[1.0]]),), "Can not cast TensorSpec(shape=(1, 1), dtype=mt.float32, "
     "name=None) to TensorSpec(shape=(None,), dtype=mt.float32, name=None)"),
    ((1.0,), "Can not cast TensorSpec(shape=(), dtype=mt.float32, name=None) to "
     "TensorSpec(shape=(None,), dtype=mt.float32, name=None)"),
    ((mt.constant([1.0]), mt.constant([1.0])), "too many positional arguments"),
    ((), "missing a required argument: 'x'")])
def test_a_call_that_does_not_fit_the_input_signature_is_tensorflows_type_error(args, why):
    @mt.function(input_signature=[mt.TensorSpec([None], mt.float32)])
    def f(x):
        return x

    with pytest.raises(TypeError) as info:
        f(*args)
    assert str(info.value).startswith(f"Binding inputs to mt.function failed due to `{why}`. "
                                      f"Received args: {args!r} and kwargs: {{}} for "
                                      "signature: (x: TensorSpec(shape=(None,), "
                                      "dtype=mt.float32, name=None)).")


def test_a_bad_input_signature_is_tensorflows_type_error():
    def two(x, y):
        return x

    for make, message in [
            (lambda: mt.function(lambda x: x, input_signature=[1]),
             "input_signature must be a possibly nested sequence of TensorSpec objects, got "
             "invalid args [1] with types [<class 'int'>]."),
            (lambda: mt.function(lambda x: x, input_signature=mt.TensorSpec([1])),
             "input_signature must be either a tuple or a list, got <class "
             "'minitensor.data.tensor_spec.TensorSpec'>."),
            (lambda: mt.function(lambda x: x, input_signature=[mt.TensorSpec([1])] * 2)(
                mt.constant([1.0])), "input_signature contains 1 extra type constraints."),
            (lambda: mt.function(two, input_signature=[mt.TensorSpec([1])])(
                mt.constant([1.0]), 2), "input_signature missing type constraint for y")]:
        with pytest.raises(TypeError) as info:
            make()
        assert str(info.value) == message
    assert repr(mt.TensorSpec(None, mt.int32)) == \
        "TensorSpec(shape=<unknown>, dtype=mt.int32, name=None)"
    assert mt.TensorSpec([2]).dtype == mt.float32


def test_reduce_retracing_runs_new_shapes_eagerly_instead_of_tracing(caplog):
    def body(x):
        return mt.reduce_sum(x * 2.0)

    f = mt.function(body, reduce_retracing=True)
    with caplog.at_level(logging.WARNING, logger="minitensor"):
        for n in range(1, 12):
            assert float(f(mt.ones([n]))) == 2.0 * n
    assert f.experimental_get_tracing_count() == 1 and f.traced_signatures == 1
    assert float(f(mt.ones([1]))) == 2.0 and f.replay_kind in ("steps", "graph")
    assert f(mt.ones([2], mt.float64)).dtype == mt.float64  # a new dtype: traced
    assert f.experimental_get_tracing_count() == 2
    assert _warnings(caplog) == []


def test_input_signature_of_a_method_leaves_out_its_instance():
    class Model:
        def __init__(self):
            self.w = mt.Variable([2.0])

        @mt.function(input_signature=[mt.TensorSpec([None])])
        def scale(self, x):
            return x * self.w

    model = Model()
    assert model.scale([1.0, 2.0]).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(TypeError, match="Binding inputs to mt.function failed due to `Can "
                                        "not cast TensorSpec"):
        model.scale(mt.constant([1]))


def test_a_new_constant_at_every_call_keeps_the_bound_too():
    def current():
        return mt.config.experimental.get_memory_info("CPU:0")["current"]

    f = mt.function(lambda x, k: mt.tanh(x * 2.0) + k)
    x = mt.zeros([100, 100])
    base = current()
    for k in range(60):
        f(x, float(k))
    assert f.traced_signatures == mt._function.MAX_TRACED_SIGNATURES
    assert f.experimental_get_tracing_count() == 60
    assert current() - base <= f.arena_bytes + (1 << 20)
    for n in range(20):  # then varying shapes as well
        f(mt.zeros([n + 1, 3]), 1.0)
    assert f.traced_signatures == mt._function.MAX_TRACED_SIGNATURES
    assert float(f(x, 59.0)[0, 0]) == 59.0
    del f
    assert current() - base < (1 << 20)


# The fast path of calls with tensors alone (Note [A call's fast path] in _function.py).


def test_calls_on_the_fast_path_count_in_the_retracing_warning(caplog):
    def body(x):
        return x + 1.0

    g = mt.function(body)
    with caplog.at_level(logging.WARNING, logger="minitensor"):
        for n in range(5):
            g(mt.zeros([n + 1]))              # traces
            for _ in range(3):
                g(mt.zeros([n + 1]))          # replays, on the fast path after the first
    messages = _warnings(caplog)
    # Five traces among the last 4 * 3 + 5 calls (TensorFlow counts every call).
    assert messages and messages[0].startswith(f"5 out of the last 17 calls to {body!r}")


def test_the_fast_path_retraces_a_new_dtype_and_follows_run_functions_eagerly():
    traces = []

    def body(x, y):
        traces.append(x.dtype)
        return x * y

    f = mt.function(body)
    one, two = mt.constant([1.0]), mt.constant([2.0])
    assert f(one, two).numpy().tolist() == [2.0]
    assert f(one, two).numpy().tolist() == [2.0]
    assert f(mt.constant([3]), mt.constant([4])).numpy().tolist() == [12]  # same count
    assert f.experimental_get_tracing_count() == 2
    assert f(one, two).numpy().tolist() == [2.0]
    assert len(traces) == 2
    mt.config.run_functions_eagerly(True)
    try:
        assert f(one, two).numpy().tolist() == [2.0]
        assert len(traces) == 3               # the body ran: no replay
    finally:
        mt.config.run_functions_eagerly(False)
    assert f(one, two).numpy().tolist() == [2.0] and len(traces) == 3


def test_the_fast_path_leaves_other_arguments_to_the_whole_call():
    f = mt.function(lambda x, y: x + y)
    x = mt.constant([1.0, 2.0])
    v = mt.Variable([10.0, 20.0])
    assert f(x, x).numpy().tolist() == [2.0, 4.0]
    assert f(x, x).numpy().tolist() == [2.0, 4.0]
    assert f(x, v).numpy().tolist() == [11.0, 22.0]        # a variable, same count
    v.assign([30.0, 40.0])
    assert f(x, v).numpy().tolist() == [31.0, 42.0]        # read at every call
    assert f(x, 5.0).numpy().tolist() == [6.0, 7.0]        # a Python number
    assert f(x, y=x).numpy().tolist() == [2.0, 4.0]        # a keyword
    assert f(x, x).numpy().tolist() == [2.0, 4.0]


def test_the_fast_path_returns_the_traced_structure():
    f = mt.function(lambda x: {"double": x * 2.0, "pair": (x, x + 1.0)})
    x = mt.constant([1.0])
    for _ in range(3):
        out = f(x)
        assert out["double"].numpy().tolist() == [2.0]
        assert [t.numpy().tolist() for t in out["pair"]] == [[1.0], [2.0]]
