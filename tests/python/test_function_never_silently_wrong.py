"""The property of issue 37: random small programs with tensor-dependent Python branches,
shapes that depend on a tensor's value, mt.cond, mt.where, metrics and varying shapes, run
eagerly and as functions; each call of the function either equals the eager call, results
and metric alike, or raises the tracing error. Never a silent difference."""

import numpy as np
import pytest

import minitensor as mt

_OPS = [lambda x: mt.tanh(x), lambda x: x * 2.0 + 1.0, lambda x: mt.square(x) - 1.0,
        lambda x: mt.where(x > 0.0, x, -x), lambda x: x / 3.0]


def _step(kind, op):
    """One step of a program: a function of (x, metric) returning the new x."""
    if kind == "op":
        return lambda x, m: op(x)
    if kind == "branch":  # a Python `if` on a tensor: a host read
        return lambda x, m: x * 2.0 if mt.reduce_sum(x) > 0 else x - 1.0
    if kind == "shape":  # a shape op's integers from a tensor's value: a host read
        return lambda x, m: mt.tile(x, mt.fill([len(x.shape)], mt.cast(
            mt.reduce_sum(x) > 0, mt.int32) + 1))
    if kind == "cond":
        return lambda x, m: mt.cond(mt.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
    if kind == "loop":
        return lambda x, m: mt.while_loop(lambda y: mt.reduce_max(y) < 4.0,
                                          lambda y: [y + 1.5], [x], maximum_iterations=5)[0]
    assert kind == "metric"

    def update(x, m):
        m.update_state(x)
        return x
    return update


def _program(rng):
    kinds = rng.choice(["op", "op", "op", "branch", "cond", "loop", "metric", "shape"],
                       size=rng.integers(1, 6))
    steps = [_step(k, _OPS[rng.integers(len(_OPS))]) for k in kinds]

    def body(x, metric):
        for step in steps:
            x = step(x, metric)
        return mt.reduce_sum(x), x
    return body, "branch" in kinds or "shape" in kinds


@pytest.mark.parametrize("seed", range(40))
def test_a_function_equals_eager_or_raises(seed):
    rng = np.random.default_rng(seed)
    body, reads = _program(rng)
    function = mt.function(body)
    eager_metric, function_metric = mt.keras.metrics.Mean(), mt.keras.metrics.Mean()
    shapes = [(2,), (3,), (2, 2)][:rng.integers(1, 4)]
    for _ in range(6):
        x = mt.constant(rng.standard_normal(shapes[rng.integers(len(shapes))]), mt.float32)
        want = body(x, eager_metric)
        try:
            got = function(x, function_metric)
        except mt.errors.OperatorNotAllowedInGraphError:
            assert reads  # only a program that reads on the host may raise
            return
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
        assert float(function_metric.result()) == float(eager_metric.result())
