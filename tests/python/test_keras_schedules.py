"""mt.keras.optimizers.schedules: Keras 3's values (from Keras 3.15 beside TensorFlow 2.21),
configs and errors; optimizers step through them eagerly and at every replay of a function."""

import numpy as np
import pytest

import minitensor as mt

S = mt.keras.optimizers.schedules
STEPS = [0, 1, 3, 4, 5, 7, 8, 10, 12, 20, 25, 31]

# Keras's float32 values at STEPS.
CASES = [
    (S.ExponentialDecay(0.1, 10, 0.5),
     [0.1, 0.0933033, 0.08122524, 0.07578583, 0.07071068, 0.06155722, 0.05743492, 0.05,
      0.04352752, 0.025, 0.01767767, 0.01166291]),
    (S.ExponentialDecay(0.1, 10, 0.5, staircase=True),
     [0.1] * 7 + [0.05, 0.05, 0.025, 0.025, 0.0125]),
    (S.PiecewiseConstantDecay([3, 7], [1.0, 0.5, 0.1]), [1.0] * 3 + [0.5] * 3 + [0.1] * 6),
    (S.CosineDecay(0.1, 20),
     [0.1, 0.09938442, 0.09455033, 0.09045085, 0.08535534, 0.07269952, 0.06545085, 0.05,
      0.03454914, 0.0, 0.0, 0.0]),
    (S.CosineDecay(0.1, 20, alpha=0.1),
     [0.1, 0.09944598, 0.09509529, 0.09140576, 0.08681981, 0.07542957, 0.06890576, 0.055,
      0.04109422, 0.01, 0.01, 0.01]),
    (S.CosineDecay(0.0, 20, warmup_target=0.2, warmup_steps=5),
     [0.0, 0.04, 0.12, 0.16, 0.2, 0.19510566, 0.18910065, 0.17071068, 0.14539905, 0.02928932,
      0.0, 0.0]),
    (S.InverseTimeDecay(0.1, 5, 0.5),
     [0.1, 0.09090909, 0.07692308, 0.07142857, 0.06666667, 0.05882353, 0.05555556, 0.05,
      0.04545455, 0.03333334, 0.02857143, 0.02439024]),
    (S.InverseTimeDecay(0.1, 5, 0.5, staircase=True),
     [0.1] * 4 + [0.06666667] * 3 + [0.05, 0.05, 0.03333334, 0.02857143, 0.025]),
    (S.PolynomialDecay(0.1, 10),
     [0.1, 0.09001, 0.07003, 0.06004, 0.05005, 0.03007, 0.02008] + [0.0001] * 5),
    (S.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=2.0, cycle=True),
     [0.1, 0.0829, 0.0541, 0.0424, 0.0325, 0.0181, 0.0136, 0.01, 0.0244, 0.01, 0.0125,
      0.01455625]),
]


@pytest.mark.parametrize("schedule, expected", CASES, ids=lambda c: type(c).__name__)
def test_a_schedule_gives_kerass_values(schedule, expected):
    values = [schedule(step) for step in STEPS]
    assert all(v.dtype == mt.float32 and v.shape == () for v in values)
    np.testing.assert_allclose([float(v) for v in values], expected, rtol=1e-6, atol=1e-9)
    assert float(schedule(mt.constant(4))) == float(schedule(4))  # a tensor step, eagerly


@pytest.mark.parametrize("schedule, expected", CASES, ids=lambda c: type(c).__name__)
def test_a_schedule_rebuilds_from_its_config(schedule, expected):
    config = schedule.get_config()
    copy = type(schedule).from_config(config)
    assert copy.get_config() == config and float(copy(5)) == float(schedule(5))
    again = S.deserialize(S.serialize(schedule))
    assert type(again) is type(schedule) and again.get_config() == config


def test_configs_have_kerass_keys_and_defaults():
    assert S.CosineDecay(0.1, 20).get_config() == {
        "initial_learning_rate": 0.1, "decay_steps": 20, "alpha": 0.0, "name": "CosineDecay",
        "warmup_target": None, "warmup_steps": 0}
    assert S.PiecewiseConstantDecay([3], [1.0, 0.5]).get_config() == {
        "boundaries": [3], "values": [1.0, 0.5], "name": "PiecewiseConstant"}
    assert S.serialize(S.PolynomialDecay(0.1, 10)) == {
        "module": "keras.optimizers.schedules", "class_name": "PolynomialDecay",
        "config": {"initial_learning_rate": 0.1, "decay_steps": 10,
                   "end_learning_rate": 0.0001, "power": 1.0, "cycle": False,
                   "name": "PolynomialDecay"}, "registered_name": None}


@pytest.mark.parametrize("make", [
    lambda: S.ExponentialDecay(0.1, 0, 0.5), lambda: S.CosineDecay(0.1, -1),
    lambda: S.InverseTimeDecay(0.1, 0, 0.5), lambda: S.PolynomialDecay(0.1, 0)])
def test_decay_steps_must_be_positive(make):
    with pytest.raises(ValueError, match=r"^Argument `decay_steps` must be > 0. Received: "
                                         r"decay_steps=-?\d$"):
        make()


def test_piecewise_constant_needs_one_value_more_than_boundaries():
    with pytest.raises(ValueError, match=re_escape(
            "The length of boundaries should be 1 less than the length of values. Received: "
            "boundaries=[3, 7] of length 2, and values=[1.0, 0.5] of length 2.")):
        S.PiecewiseConstantDecay([3, 7], [1.0, 0.5])


def test_unknown_names_and_bare_schedules_raise():
    with pytest.raises(ValueError, match="Could not interpret learning rate schedule 'Nope'"):
        S.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(NotImplementedError,
                       match="Learning rate schedule 'LearningRateSchedule' must override"):
        S.LearningRateSchedule()(0)
    with pytest.raises(NotImplementedError, match="must override `get_config"):
        S.LearningRateSchedule().get_config()


def re_escape(text):
    import re
    return re.escape(text)


def _sgd_steps(schedule, calls, as_function):
    v = mt.Variable([0.0])
    opt = mt.keras.optimizers.SGD(learning_rate=schedule)

    def step(g):
        opt.apply_gradients([(g, v)])
        return v.read_value()

    run = mt.function(step) if as_function else step
    values = [float(run(mt.constant([-1.0]))[0]) for _ in range(calls)]
    return values, run


@pytest.mark.parametrize("schedule, expected", CASES, ids=lambda c: type(c).__name__)
def test_sgd_steps_through_a_schedule_at_every_replay(schedule, expected):
    eager, _ = _sgd_steps(schedule, 9, as_function=False)
    traced, f = _sgd_steps(schedule, 9, as_function=True)
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(eager, np.cumsum(expected[:1] + [schedule._host_value(s)
                                                               for s in range(1, 9)]),
                               rtol=1e-6)
    assert traced == eager


def test_an_optimizer_reports_the_schedules_rate_of_the_next_step():
    opt = mt.keras.optimizers.Adam(learning_rate=S.ExponentialDecay(0.1, 10, 0.5))
    v = mt.Variable([1.0])
    for _ in range(10):
        opt.apply_gradients([(mt.constant([1.0]), v)])
    assert opt.iterations == 10 and opt.learning_rate == pytest.approx(0.05)


def test_a_scalar_tensor_learning_rate_is_its_value():
    opt = mt.keras.optimizers.SGD(learning_rate=mt.constant(0.5))
    v = mt.Variable([1.0])
    opt.apply_gradients([(mt.constant([1.0]), v)])
    assert opt.learning_rate == 0.5 and v.numpy().tolist() == [0.5]


def test_a_learning_rate_of_another_kind_raises_kerass_error():
    with pytest.raises(ValueError, match=re_escape(
            "Argument `learning_rate` should be float, or an instance of LearningRateSchedule, "
            "or a callable (that takes in the current iteration value and returns the "
            "corresponding learning rate value). Received instead: learning_rate=x")):
        mt.keras.optimizers.SGD(learning_rate="x")


@pytest.mark.parametrize("make", [mt.keras.optimizers.SGD, mt.keras.optimizers.Adam],
                         ids=["SGD", "Adam"])
def test_a_set_learning_rate_reaches_eager_steps_and_every_replay(make):
    # Keras's `optimizer.learning_rate = x` (what ReduceLROnPlateau does): the next step
    # uses it, eagerly and in a function traced before the change, which never retraces.
    def run(as_function):
        opt = make(learning_rate=0.1)
        v = mt.Variable([1.0, -2.0])

        def step():
            opt.apply_gradients([(mt.constant([1.0, 0.5]), v)])
            return v.read_value()

        f = mt.function(step) if as_function else step
        out = [f().numpy().tolist()]
        for rate in (0.5, mt.constant(0.25), lambda: 0.05, 1e-3):
            opt.learning_rate = rate
            out.append(f().numpy().tolist())
        if as_function:
            assert f.experimental_get_tracing_count() == 1
        return out, opt

    eager, opt = run(False)
    traced, _ = run(True)
    assert traced == eager
    assert opt.learning_rate == pytest.approx(1e-3)
    if make is mt.keras.optimizers.SGD:  # v - lr * g at each step
        expected = [1.0 - 0.1, 1.0 - 0.1 - 0.5, 1.0 - 0.1 - 0.5 - 0.25]
        np.testing.assert_allclose([row[0] for row in eager[:3]], expected, rtol=1e-6)


def test_setting_the_learning_rate_follows_keras():
    opt = mt.keras.optimizers.SGD(learning_rate=S.ExponentialDecay(0.1, 10, 0.5))
    with pytest.raises(TypeError, match="hence its learning rate is not settable"):
        opt.learning_rate = 0.3
    opt.learning_rate = S.ExponentialDecay(0.2, 10, 0.5)  # another schedule is taken
    assert opt.learning_rate == pytest.approx(0.2)
    plain = mt.keras.optimizers.SGD(learning_rate=0.1)
    with pytest.raises(TypeError, match=re_escape("Cannot convert 'x' to EagerTensor of dtype float")):
        plain.learning_rate = "x"
    assert plain.learning_rate == pytest.approx(0.1)  # unchanged by the refused value
    plain.learning_rate = S.ExponentialDecay(0.1, 10, 0.5)
    with pytest.raises(TypeError, match="not settable"):
        plain.learning_rate = 0.5
