"""mt.nn.layer_norm (the LayerNorm row), mt.nn.layer_norm_grad and mt.nn.add_layer_norm: values against a float64
NumPy reference and against the composite of ops Keras's LayerNormalization is written with
(moments, rsqrt), gradients through a GradientTape (first and second order, through y and
the statistics) against central differences and the composite's, the errors, the GPU against
the CPU, and Keras's LayerNormalization on the fused op (values and gradients unchanged)."""

import json

import numpy as np
import pytest

import minitensor as mt

RNG = np.random.default_rng(38)


def _reference(x, gamma, beta, begin, eps):
    """y, mean, inv_std in float64 over the axes from ``begin``."""
    x = x.astype(np.float64)
    axes = tuple(range(begin % x.ndim, x.ndim))
    mean = x.mean(axes, keepdims=True)
    inv = 1 / np.sqrt(((x - mean) ** 2).mean(axes, keepdims=True) + eps)
    y = (x - mean) * inv * gamma.astype(np.float64) + beta.astype(np.float64)
    return y, np.squeeze(mean, axes), np.squeeze(inv, axes)


def _composite(x, gamma, beta, begin, eps):
    """Keras's formula in ops: x * inv + (beta - mean * inv), inv = gamma / sqrt(var + eps)."""
    axes = list(range(begin % len(x.shape), len(x.shape)))
    mean, var = mt.nn.moments(x, axes, keepdims=True)
    inv = mt.math.rsqrt(var + eps) * gamma
    return x * inv + (beta - mean * inv)


def _inputs(shape, begin=-1, dtype=np.float32):
    x = (RNG.normal(size=shape) * 2 + 0.5).astype(dtype)
    params = shape[begin % len(shape):]
    gamma = RNG.uniform(0.5, 2, params).astype(dtype)
    beta = RNG.normal(size=params).astype(dtype)
    return x, gamma, beta


@pytest.mark.parametrize("shape,begin", [((4, 7), -1), ((2, 3, 5), -2), ((2, 3, 5), 1),
                                         ((6,), -1), ((3, 1), -1), ((5, 1200), -1)])
def test_values_match_the_float64_reference(shape, begin):
    x, gamma, beta = _inputs(shape, begin)
    y, mean, inv = mt.nn.layer_norm(x, gamma, beta, begin_norm_axis=begin, epsilon=1e-5)
    want_y, want_mean, want_inv = _reference(x, gamma, beta, begin, 1e-5)
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(inv.numpy(), want_inv, rtol=1e-5)
    assert y.dtype == mt.float32 and y.shape == shape
    assert mean.shape == shape[:begin % len(shape)] and inv.dtype == mt.float32


def test_float64_matches_the_reference_to_rounding():
    x, gamma, beta = _inputs((5, 9), dtype=np.float64)
    y, mean, inv = mt.nn.layer_norm(x, gamma, beta, epsilon=1e-3)
    want_y, want_mean, want_inv = _reference(x, gamma, beta, -1, 1e-3)
    np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-13, atol=1e-13)
    assert mean.dtype == mt.float64
    np.testing.assert_allclose(inv.numpy(), want_inv, rtol=1e-13)


@pytest.mark.parametrize("dtype,rtol", [(mt.bfloat16, 1.6e-2), (mt.float16, 2e-3)])
def test_half_types_compute_in_float32_and_round_once(dtype, rtol):
    x, gamma, beta = _inputs((6, 40))
    xh = mt.cast(x, dtype)
    y, mean, inv = mt.nn.layer_norm(xh, gamma, beta)
    assert y.dtype == dtype and mean.dtype == mt.float32 and inv.dtype == mt.float32
    x32 = mt.cast(xh, mt.float32).numpy()
    want_y, want_mean, _ = _reference(x32, gamma, beta, -1, 1e-3)
    got = mt.cast(y, mt.float32).numpy()
    np.testing.assert_allclose(got, want_y, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-6, atol=1e-6)
    # The float32 result rounded once (an ulp of float32 may move a tie: one ulp of dtype).
    y32, _, _ = mt.nn.layer_norm(x32, gamma, beta)
    ulp = 2.0 ** (-7 if dtype == mt.bfloat16 else -10)
    np.testing.assert_allclose(got, mt.cast(mt.cast(y32, dtype), mt.float32).numpy(), rtol=ulp,
                               atol=1e-6)


def test_matches_the_composite_keras_is_written_with():
    x, gamma, beta = _inputs((3, 4, 6), -2)
    y, _, _ = mt.nn.layer_norm(x, gamma, beta, -2, 1e-3)
    want = _composite(mt.constant(x), mt.constant(gamma), mt.constant(beta), -2, 1e-3)
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_gamma_and_beta_default_to_ones_and_zeros():
    x, _, _ = _inputs((3, 5))
    y, _, _ = mt.nn.layer_norm(x)
    want, _, _ = _reference(x, np.ones(5), np.zeros(5), -1, 1e-3)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-5)


def test_a_row_of_one_element_gives_beta_and_no_gradient():
    x = mt.constant([[3.0], [-2.0]])
    gamma, beta = mt.constant([2.0]), mt.constant([0.5])
    with mt.GradientTape() as tape:
        tape.watch(x)
        y, _, _ = mt.nn.layer_norm(x, gamma, beta)
    np.testing.assert_array_equal(y.numpy(), [[0.5], [0.5]])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0.0], [0.0]])


def _tape_grads(fn, *tensors):
    tensors = [mt.constant(t) for t in tensors]
    with mt.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        loss = fn(*tensors)
    return [g.numpy() for g in tape.gradient(loss, tensors)]


@pytest.mark.parametrize("shape,begin", [((4, 7), -1), ((2, 3, 4), -2)])
def test_gradients_equal_the_composites(shape, begin):
    x, gamma, beta = _inputs(shape, begin)
    w = RNG.normal(size=shape).astype(np.float32)
    fused = _tape_grads(
        lambda x, g, b: mt.reduce_sum(mt.nn.layer_norm(x, g, b, begin, 1e-3)[0] * w),
        x, gamma, beta)
    composite = _tape_grads(lambda x, g, b: mt.reduce_sum(_composite(x, g, b, begin, 1e-3) * w),
                            x, gamma, beta)
    for got, want in zip(fused, composite):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_gradients_through_the_statistics_match_central_differences():
    x, gamma, beta = _inputs((3, 5), dtype=np.float64)
    w = RNG.normal(size=(3, 5))

    def loss(x):
        y, mean, inv = mt.nn.layer_norm(x, gamma, beta, epsilon=0.01)
        return mt.reduce_sum(y * w) + mt.reduce_sum(mean * [1.0, -2.0, 0.5]) + \
            mt.reduce_sum(inv * 0.3)

    (got,) = _tape_grads(loss, x)
    want = np.zeros_like(x)
    h = 1e-6
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        want[i] = (loss(mt.constant(up)).numpy() - loss(mt.constant(down)).numpy()) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_second_order_gradient_equals_the_composites():
    x, gamma, beta = _inputs((3, 6), dtype=np.float64)
    w = RNG.normal(size=(3, 6))

    def second(norm):
        xt = mt.constant(x)
        with mt.GradientTape() as outer:
            outer.watch(xt)
            with mt.GradientTape() as inner:
                inner.watch(xt)
                loss = mt.reduce_sum(norm(xt) * w)
            dx = inner.gradient(loss, xt)
            total = mt.reduce_sum(dx * dx)
        return outer.gradient(total, xt).numpy()

    fused = second(lambda t: mt.nn.layer_norm(t, gamma, beta, epsilon=0.01)[0])
    composite = second(lambda t: _composite(t, mt.constant(gamma), mt.constant(beta), -1, 0.01))
    np.testing.assert_allclose(fused, composite, rtol=1e-9, atol=1e-10)


def test_layer_norm_grad_is_the_gradient_op():
    x, gamma, beta = _inputs((4, 6))
    dy = RNG.normal(size=(4, 6)).astype(np.float32)
    _, mean, inv = mt.nn.layer_norm(x, gamma, beta)
    dx, dgamma, dbeta = mt.nn.layer_norm_grad(dy, x, gamma, mean, inv)
    want = _tape_grads(lambda x, g, b: mt.reduce_sum(mt.nn.layer_norm(x, g, b)[0] * dy),
                       x, gamma, beta)
    for got, w in zip((dx, dgamma, dbeta), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-6, atol=1e-6)


def test_bad_input_raises_the_ops_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[LayerNorm\] gamma must have the shape of the normalised axes "
                             r"of x, \(3,\), got \(4,\)"):
        mt.nn.layer_norm(x, np.ones(4, np.float32), np.zeros(3, np.float32))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[LayerNorm\] epsilon must be a finite number >= 0, got -1"):
        mt.nn.layer_norm(x, epsilon=-1.0)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[LayerNorm\] dtype int32 is not supported"):
        mt.nn.layer_norm(np.ones((2, 3), np.int32), np.ones(3, np.float32),
                         np.zeros(3, np.float32))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[LayerNorm\] axis 2 is out of range for x of shape \(2, 3\)"):
        mt.nn.layer_norm(x, np.ones(3, np.float32), np.zeros(3, np.float32), begin_norm_axis=2)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[LayerNorm\] gamma must be float32 for x of this dtype, got "
                             r"float64"):
        mt.nn.layer_norm(x, mt.constant(np.ones(3)), np.zeros(3, np.float32))


def _ops_run(fn):
    mt.trace.start()
    try:
        fn()
    finally:
        mt.trace.stop()
    events = json.loads(mt.trace.to_json())["traceEvents"]
    return {e["name"] for e in events if e.get("cat") == "op"}


def test_keras_layer_norm_runs_the_fused_op_over_trailing_axes_only():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    assert "LayerNorm" in _ops_run(lambda: mt.keras.layers.LayerNormalization()(x))
    assert "LayerNorm" in _ops_run(lambda: mt.keras.layers.LayerNormalization(axis=[1, 2])(x))
    ran = _ops_run(lambda: mt.keras.layers.LayerNormalization(axis=1)(x))
    assert "LayerNorm" not in ran and "Mean" in ran


@pytest.mark.parametrize("axis", [-1, [1, 2], [-2, -1], 1])
def test_keras_layer_values_and_gradients_equal_the_composites(axis):
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32) * 3
    layer = mt.keras.layers.LayerNormalization(axis=axis, epsilon=1e-4)
    layer.build(x.shape)
    weights = [RNG.normal(size=w.shape).astype(np.float32) for w in layer.get_weights()]
    layer.set_weights(weights)
    w = RNG.normal(size=x.shape).astype(np.float32)
    xt = mt.constant(x)
    with mt.GradientTape() as tape:
        tape.watch(xt)
        y = layer(xt)
        loss = mt.reduce_sum(y * w)
    got = tape.gradient(loss, [xt] + layer.trainable_weights)
    axes = sorted(a % 3 for a in ([axis] if isinstance(axis, int) else axis))
    shape = [x.shape[a] if a in axes else 1 for a in range(3)]
    gamma, beta = (mt.Variable(np.reshape(v, shape)) for v in weights)
    with mt.GradientTape() as tape:
        tape.watch(xt)
        mean, var = mt.nn.moments(xt, axes, keepdims=True)
        inv = mt.math.rsqrt(var + 1e-4) * gamma
        want_y = xt * inv + (beta - mean * inv)
        loss = mt.reduce_sum(want_y * w)
    want = tape.gradient(loss, [xt, gamma, beta])
    np.testing.assert_allclose(y.numpy(), want_y.numpy(), rtol=1e-5, atol=1e-5)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), np.reshape(e.numpy(), g.shape), rtol=1e-4,
                                   atol=1e-5)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.bfloat16, mt.float16])
def test_gpu_matches_the_cpu(needs_gpu, dtype):
    x, gamma, beta = _inputs((64, 768))
    dy = RNG.normal(size=(64, 768)).astype(np.float32)
    stats = mt.float64 if dtype == mt.float64 else mt.float32
    results = []
    for device in ("/CPU:0", "/GPU:0"):
        with mt.device(device):
            xt = mt.cast(mt.constant(x), dtype)
            g, b = mt.cast(mt.constant(gamma), stats), mt.cast(mt.constant(beta), stats)
            with mt.GradientTape() as tape:
                tape.watch([xt, g, b])
                y, mean, inv = mt.nn.layer_norm(xt, g, b)
                loss = mt.reduce_sum(mt.cast(y, stats) * mt.cast(mt.constant(dy), stats))
            grads = tape.gradient(loss, [xt, g, b])
            assert device[1:4] in y.device
            results.append([mt.cast(t, mt.float64).numpy() for t in [y, mean, inv, *grads]])
    tol = {mt.float64: 1e-12, mt.float32: 1e-4}.get(dtype, 2e-2)
    for cpu, gpu in zip(*results):
        np.testing.assert_allclose(gpu, cpu, rtol=tol, atol=tol * np.abs(cpu).max())


@pytest.mark.parametrize("device", ["/CPU:0", "/GPU:0"])
def test_a_function_replays_the_fused_forward_and_gradient(device, num_gpus):
    if device == "/GPU:0" and num_gpus == 0:
        pytest.skip("needs a GPU")
    x, gamma, beta = _inputs((16, 96))
    w = RNG.normal(size=(16, 96)).astype(np.float32)
    with mt.device(device):
        layer = mt.keras.layers.LayerNormalization(epsilon=1e-5)
        layer.build(x.shape)
        layer.set_weights([gamma, beta])
        weights = mt.constant(w)

        def step(x):
            with mt.GradientTape() as tape:
                tape.watch(x)
                loss = mt.reduce_sum(layer(x) * weights)
            return [loss] + tape.gradient(loss, [x] + layer.trainable_weights)

        eager = [t.numpy() for t in step(mt.constant(x))]
        f = mt.function(step)
        for _ in range(3):  # the trace, then replays
            got = [t.numpy() for t in f(mt.constant(x))]
            for g, e in zip(got, eager):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [mt.float32, mt.bfloat16])
def test_add_layer_norm_is_the_add_then_layer_norm(dtype):
    x, gamma, beta = _inputs((6, 40))
    r = RNG.normal(size=(6, 40)).astype(np.float32)
    xt, rt = mt.cast(mt.constant(x), dtype), mt.cast(mt.constant(r), dtype)
    y, total, mean, inv = mt.nn.add_layer_norm(xt, rt, gamma, beta)
    want_total = xt + rt
    want = mt.nn.layer_norm(want_total, gamma, beta)
    for got, expected in zip((y, total, mean, inv), (want[0], want_total, want[1], want[2])):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(mt.cast(got, mt.float32).numpy(),
                                      mt.cast(expected, mt.float32).numpy())


def test_add_layer_norm_gradients_equal_the_add_then_layer_norms():
    x, gamma, beta = _inputs((4, 9))
    r = RNG.normal(size=(4, 9)).astype(np.float32)
    w, v = RNG.normal(size=(2, 4, 9)).astype(np.float32)

    def fused(x, r, g, b):
        y, total, _, _ = mt.nn.add_layer_norm(x, r, g, b)
        return mt.reduce_sum(y * w) + mt.reduce_sum(total * v)

    def separate(x, r, g, b):
        total = x + r
        return mt.reduce_sum(mt.nn.layer_norm(total, g, b)[0] * w) + mt.reduce_sum(total * v)

    for got, want in zip(_tape_grads(fused, x, r, gamma, beta),
                         _tape_grads(separate, x, r, gamma, beta)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_add_layer_norm_rejects_a_residual_of_another_shape():
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[AddLayerNorm\] x and residual must have the same shape, got "
                             r"\(2, 3\) and \(3, 2\)"):
        mt.nn.add_layer_norm(np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))
