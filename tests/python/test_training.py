"""Variables, GradientTape and the optimizers from Python, on every device the package sees,
and the training example (examples/python/train_mlp.py) reaching its accuracy."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt

SOURCE_DIR = pathlib.Path(os.environ.get("MT_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


def _devices():
    return ["CPU"] + (["GPU"] if mt.config.list_logical_devices("GPU") else [])


@pytest.mark.parametrize("device", _devices())
def test_variable_reads_assigns_and_converts_like_a_tensor(device):
    with mt.device(f"/{device}:0"):
        v = mt.Variable([1.0, 2.0], name="v")
    assert v.name == "v:0" and v.shape == (2,) and v.dtype == mt.float32
    assert device in v.device
    v.assign([3.0, 4.0]).assign_add([1.0, 1.0]).assign_sub(mt.constant([0.5, 0.5]))
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    np.testing.assert_array_equal(np.asarray(v), [3.5, 4.5])
    np.testing.assert_array_equal((v * 2).numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(mt.add(v, v).numpy(), [7.0, 9.0])
    np.testing.assert_array_equal(mt.matmul(mt.reshape(v, [1, 2]), mt.ones([2, 1])).numpy(),
                                  [[8.0]])
    assert "mt.Variable 'v:0' shape=(2,) dtype=float32" in repr(v)
    with pytest.raises(mt.errors.InvalidArgumentError, match="wrong shape"):
        v.assign([1.0, 2.0, 3.0])


def test_variable_ops_stay_on_the_variables_device_and_log_it():
    lines = []
    mt.debugging.set_log_sink(lines.append)
    try:
        mt.debugging.set_log_device_placement(True)
        with mt.device("/CPU:0"):
            v = mt.Variable([1.0, 2.0])
            delta = mt.constant([1.0, 1.0])
        with mt.device("/device:CPU:7"):  # unknown device: ops on v still go to its device
            v.assign_add(delta)
    finally:
        mt.debugging.set_log_device_placement(False)
        mt.debugging.set_log_sink(None)
    ops = [l.split()[2] for l in lines if l.startswith("Executing op")]
    assert ops[:3] == ["_EagerConst", "VarHandleOp", "AssignVariableOp"]  # as in the guide
    assert "AssignAddVariableOp" in ops
    assert all(l.endswith("device:CPU:0") for l in lines if "Variable" in l)


@pytest.mark.parametrize("device", _devices())
def test_gradient_tape_computes_gradients_of_nested_sources(device):
    with mt.device(f"/{device}:0"):
        x = mt.constant([1.0, 2.0, 3.0])
        w = mt.Variable([[1.0], [2.0], [3.0]])
        b = mt.Variable(0.5, trainable=False)
        with mt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = mt.reduce_sum(mt.matmul(mt.reshape(x, [1, 3]), w) + b)
            z = mt.reduce_sum(x * x)
        grads = tape.gradient(y, {"x": x, "pair": (w, b)})
        np.testing.assert_allclose(grads["x"].numpy(), [1.0, 2.0, 3.0])
        np.testing.assert_allclose(grads["pair"][0].numpy(), [[1.0], [2.0], [3.0]])
        assert grads["pair"][1] is None  # not trainable: not watched
        np.testing.assert_allclose(tape.gradient(z, x).numpy(), [2.0, 4.0, 6.0])
        zero = tape.gradient(z, [w], unconnected_gradients=mt.UnconnectedGradients.ZERO)
        np.testing.assert_array_equal(zero[0].numpy(), np.zeros((3, 1)))
    assert device in grads["x"].device


def test_tape_rules_match_tensorflow():
    x = mt.constant(3.0)
    with mt.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            unrecorded = x * x
        y = x * mt.stop_gradient(x) + x
    assert tape.gradient(y, x).numpy() == pytest.approx(4.0)  # d/dx (x * c + x) = c + 1
    with pytest.raises(mt.errors.FailedPreconditionError, match="non-persistent"):
        tape.gradient(y, x)
    with mt.GradientTape() as tape:
        tape.watch(x)
    assert tape.gradient(unrecorded, x) is None
    with mt.GradientTape() as outer:
        outer.watch(x)
        with mt.GradientTape() as inner:
            inner.watch(x)
            y = x * x * x
        dy = inner.gradient(y, x)
    assert dy.numpy() == pytest.approx(27.0) and outer.gradient(dy, x).numpy() == pytest.approx(18.0)


@pytest.mark.parametrize("make,steps", [
    (lambda: mt.keras.optimizers.SGD(0.1), 10),
    (lambda: mt.keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True), 10),
    (lambda: mt.keras.optimizers.Adam(0.1), 10),
    (lambda: mt.keras.optimizers.AdamW(0.1), 10),
    (lambda: mt.keras.optimizers.RMSprop(0.1, centered=True), 10)])
def test_optimizers_minimize_a_quadratic(make, steps):
    opt = make()
    v = mt.Variable([3.0, -2.0])
    for _ in range(steps):
        with mt.GradientTape() as tape:
            loss = mt.reduce_sum(mt.square(v))
        opt.apply_gradients(zip(tape.gradient(loss, [v]), [v]))
    assert opt.iterations == steps
    assert float(mt.reduce_sum(mt.square(v))) < 13.0 * 0.5


def test_adam_matches_kerass_formula_for_ten_steps():
    g = np.array([0.5, -1.0, 2.0], np.float32)
    v = mt.Variable(np.array([1.0, 2.0, 3.0], np.float32))
    class Decay(mt.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):  # a schedule of the user's: ops on the step tensor
            return 0.1 / (mt.cast(step, mt.float32) + 1.0)

    opt = mt.keras.optimizers.Adam(learning_rate=Decay())
    w, m, s = np.array([1.0, 2.0, 3.0]), np.zeros(3), np.zeros(3)
    for t in range(1, 11):
        opt.apply_gradients([(mt.constant(g), v)])
        lr = 0.1 / t
        alpha = lr * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        m += (g - m) * 0.1
        s += (g * g - s) * 0.001
        w -= m * alpha / (np.sqrt(s) + 1e-7)
    np.testing.assert_allclose(v.numpy(), w, rtol=1e-5)


@pytest.mark.parametrize("device", _devices())
def test_train_mlp_example_reaches_its_accuracy(device):
    script = SOURCE_DIR / "examples" / "python" / "train_mlp.py"
    run = subprocess.run([sys.executable, str(script), device], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "epoch 8: loss" in run.stdout and f"device:{device}:0" in run.stdout


def test_a_callable_learning_rate_leaks_nothing_at_exit():
    from conftest import run_python
    done = run_python("""
        import minitensor as mt
        opt = mt.keras.optimizers.Adam(lambda: 0.1)
        v = mt.Variable([1.0])
        opt.apply_gradients([(mt.constant([1.0]), v)])
        print(round(float(v.numpy()[0]), 4))
        sgd = mt.keras.optimizers.SGD(learning_rate=lambda: 0.5 / (sgd.iterations + 1))
        sgd.apply_gradients([(mt.constant([1.0]), v)])
        sgd.apply_gradients([(mt.constant([1.0]), v)])
        print(round(float(v.numpy()[0]), 4))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0.9", "0.15"]
    assert "leaked" not in done.stderr, done.stderr


def test_a_callable_learning_rate_takes_no_arguments_as_kerass():
    # Keras 3 calls it with none, at every step: TensorFlow 2.21 gives these values.
    lr = mt.Variable(0.5)
    opt = mt.keras.optimizers.SGD(lambda: lr)
    v = mt.Variable([1.0])

    @mt.function
    def step():
        opt.apply_gradients([(mt.constant([1.0]), v)])

    for _ in range(3):
        step()
        lr.assign(lr * 0.5)
    np.testing.assert_allclose(v.numpy(), [0.125])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 's'"):
        mt.keras.optimizers.Adam(lambda s: 0.1).apply_gradients(
            [(mt.constant([1.0]), mt.Variable([1.0]))])


def test_a_schedule_of_the_users_runs_its_ops_at_every_step_and_replay():
    class Custom(mt.keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 1.0 / (mt.cast(step, mt.float32) + 1.0)

    opt, w = mt.keras.optimizers.SGD(Custom()), mt.Variable([0.0])
    step = mt.function(lambda: opt.apply_gradients([(mt.constant([1.0]), w)]))
    for _ in range(4):
        step()
    np.testing.assert_allclose(w.numpy(), [-(1 + 1 / 2 + 1 / 3 + 1 / 4)], rtol=1e-6)
    assert float(opt.learning_rate) == np.float32(0.2)  # TensorFlow's: the next step's
