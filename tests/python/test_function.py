"""mt.function from Python: one trace per signature, replays equal to the eager function
bit for bit (ops, a Keras-style training step), Python side effects at trace time only,
structures in and out, methods, run_functions_eagerly, and the CUDA graph on a GPU."""

import numpy as np
import pytest

import minitensor as mt


def _devices():
    return ["CPU"] + (["GPU"] if mt.config.list_logical_devices("GPU") else [])


def test_traces_once_per_signature_and_side_effects_run_at_the_trace():
    traced = []

    @mt.function
    def f(x, scale):
        traced.append(scale)  # a Python side effect: at traces only
        return x * x + scale

    x = mt.constant([1.0, 2.0])
    np.testing.assert_array_equal(f(x, 1.0).numpy(), [2.0, 5.0])
    np.testing.assert_array_equal(f(mt.constant([3.0, 4.0]), 1.0).numpy(), [10.0, 17.0])
    assert traced == [1.0]
    np.testing.assert_array_equal(f(x, 2.0).numpy(), [3.0, 6.0])  # a new constant: retrace
    f(mt.constant([1.0, 2.0, 3.0]), 1.0)                            # a new shape: retrace
    assert f.experimental_get_tracing_count() == 3
    assert traced == [1.0, 2.0, 1.0]
    assert f.replay_kind in ("steps", "graph")


@pytest.mark.parametrize("device", _devices())
def test_replays_equal_the_eager_function_bit_for_bit(device):
    def body(x, y):
        h = mt.nn.relu(mt.matmul(x, y) - 0.5)
        s = mt.nn.softmax(h)
        return {"sum": mt.reduce_sum(s * x[:, :3], axis=1), "parts": [mt.sqrt(mt.abs(h)), s]}

    f = mt.function(body)
    rng = np.random.default_rng(7)
    with mt.device(f"/{device}:0"):
        f(mt.constant(rng.standard_normal((4, 3), np.float32)),
          mt.constant(rng.standard_normal((3, 3), np.float32)))
        for _ in range(3):
            x = mt.constant(rng.standard_normal((4, 3), np.float32))
            y = mt.constant(rng.standard_normal((3, 3), np.float32))
            want, got = body(x, y), f(x, y)
            np.testing.assert_array_equal(got["sum"].numpy(), want["sum"].numpy())
            for a, b in zip(got["parts"], want["parts"]):
                np.testing.assert_array_equal(a.numpy(), b.numpy())
                assert a.device == b.device
        # The same tensors again: a graph replay keeps the copies it made of them.
        for _ in range(3):
            np.testing.assert_array_equal(f(x, y)["sum"].numpy(), body(x, y)["sum"].numpy())
    assert f.experimental_get_tracing_count() == 1
    if device == "GPU":
        assert f.replay_kind == "graph"


@pytest.mark.parametrize("device", _devices())
def test_a_training_step_replays_as_eager_training(device):
    def make():
        with mt.device(f"/{device}:0"):
            w = mt.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
            b = mt.Variable(np.zeros(3, np.float32))
        return w, b, mt.keras.optimizers.Adam(0.05)

    def step(x, labels, w, b, opt):
        with mt.GradientTape() as tape:
            logits = mt.matmul(x, w) + b
            loss = mt.reduce_mean(
                mt.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        grads = tape.gradient(loss, [w, b])
        opt.apply_gradients(zip(grads, [w, b]))
        return loss

    eager, traced = make(), make()
    f = mt.function(step)
    rng = np.random.default_rng(3)
    with mt.device(f"/{device}:0"):
        for _ in range(6):
            x = mt.constant(rng.standard_normal((5, 4), np.float32))
            labels = mt.constant(rng.integers(0, 3, 5, np.int32))
            np.testing.assert_array_equal(f(x, labels, *traced).numpy(),
                                          step(x, labels, *eager).numpy())
    np.testing.assert_array_equal(traced[0].numpy(), eager[0].numpy())
    np.testing.assert_array_equal(traced[1].numpy(), eager[1].numpy())
    assert int(traced[2].iterations) == 6
    assert f.experimental_get_tracing_count() == 1


def test_a_method_traces_per_instance():
    class Scaler:
        def __init__(self, k):
            self.k = mt.Variable(k)

        @mt.function
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    x = mt.constant([1.0])
    assert a(x).numpy()[0] == 2.0 and b(x).numpy()[0] == 3.0
    a.k.assign(5.0)
    assert a(x).numpy()[0] == 5.0  # the variable is read at the replay


def test_errors_name_the_op_and_random_ops_run_eagerly(capfd):
    @mt.function
    def bad(x, y):
        return mt.matmul(x, y)

    with pytest.raises(mt.errors.InvalidArgumentError, match="MatMul"):
        bad(mt.ones([2, 3]), mt.ones([2, 3]))

    @mt.function
    def noisy(x):
        return x + mt.random.uniform([3])

    first, second = noisy(mt.zeros([3])).numpy(), noisy(mt.zeros([3])).numpy()
    assert not np.array_equal(first, second)
    assert noisy.replay_kind == "eager"
    assert "cannot replay this signature" in capfd.readouterr().err


def test_run_functions_eagerly_traces_nothing():
    calls = []

    @mt.function
    def f(x):
        calls.append(1)
        return -x

    mt.config.run_functions_eagerly(True)
    try:
        assert mt.config.functions_run_eagerly()
        f(mt.constant(1.0))
        f(mt.constant(1.0))
    finally:
        mt.config.run_functions_eagerly(False)
    assert len(calls) == 2 and f.experimental_get_tracing_count() == 0


def test_numpy_arguments_are_tensors_and_python_outputs_pass_through():
    @mt.function
    def f(x):
        return x + 1, "done", None

    out, word, nothing = f(np.array([1.0, 2.0], np.float32))
    out2, _, _ = f(np.array([5.0, 6.0], np.float32))
    np.testing.assert_array_equal(out2.numpy(), [6.0, 7.0])
    assert word == "done" and nothing is None
    assert f.experimental_get_tracing_count() == 1


def test_the_placement_log_names_the_graphs_args_after_the_parameters():
    lines = []

    @mt.function
    def step(x, pair, *rest, scale=None):
        return mt.matmul(x, pair[0]) + pair[1] + rest[0] * scale

    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    with mt.device("/CPU:0"):
        x, w, b, c = mt.ones([2, 2]), mt.ones([2, 2]), mt.ones([2]), mt.zeros([2])
        mt.debugging.set_log_sink(lines.append)
        mt.debugging.set_log_device_placement(True)
        try:
            step(x, (w, b), c, scale=mt.constant(2.0))
            step(x, (w, b), c, scale=mt.constant(3.0))  # a replay logs nothing
        finally:
            mt.debugging.set_log_device_placement(False)
            mt.debugging.set_log_sink(None)
    args = [line for line in lines if "(_Arg)" in line]
    assert args == [f"{n}: (_Arg): {cpu}" for n in ("x", "pair_0", "pair_1", "rest_0", "scale")]
    assert f"MatMul: (MatMul): {cpu}" in lines
    assert lines.count(f"identity_RetVal: (_Retval): {cpu}") == 1
