"""mt.nn.fused_batch_norm (tf.compat.v1.nn.fused_batch_norm over FusedBatchNormV3), the raw
five-output op and its gradient op, mt.nn.batch_normalization and the gradients a
GradientTape takes through them: values against NumPy formulas that TensorFlow 2.21's op
was checked to follow (Bessel's correction of the returned variance, the running
averages), NHWC and NCHW, dtypes, and TensorFlow's errors."""

import numpy as np
import pytest

import minitensor as mt

RNG = np.random.default_rng(5)


def _stats(x, nchw):
    axes = (0, 2, 3) if nchw else (0, 1, 2)
    return x.mean(axes, dtype=np.float64), x.var(axes, dtype=np.float64), x.size // x.shape[
        1 if nchw else 3]


def _normalise(x, mean, var, scale, offset, eps, nchw):
    shape = (1, -1, 1, 1) if nchw else (1, 1, 1, -1)
    r = lambda v: np.reshape(v, shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(offset)


def _inputs(shape, channels):
    x = RNG.normal(size=shape).astype(np.float32) * 2 + 0.5
    scale = RNG.uniform(0.5, 2, channels).astype(np.float32)
    offset = RNG.normal(size=channels).astype(np.float32)
    mean = RNG.normal(size=channels).astype(np.float32)
    var = RNG.uniform(0.5, 1.5, channels).astype(np.float32)
    return x, scale, offset, mean, var


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_training_normalises_with_the_batch_and_returns_unbiased_variance(data_format):
    nchw = data_format == "NCHW"
    x, scale, offset, _, _ = _inputs((3, 4, 5, 6) if not nchw else (3, 6, 4, 5), 6)
    y, mean, var = mt.nn.fused_batch_norm(x, scale, offset, data_format=data_format)
    m, v, n = _stats(x, nchw)
    np.testing.assert_allclose(y.numpy(), _normalise(x, m, v, scale, offset, 0.001, nchw),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mean.numpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.numpy(), v * n / (n - 1), rtol=1e-5)
    assert y.dtype == mt.float32 and y.shape == x.shape


def test_training_blends_the_running_statistics_with_the_factor():
    x, scale, offset, mean0, var0 = _inputs((2, 3, 3, 4), 4)
    _, mean, var = mt.nn.fused_batch_norm(x, scale, offset, mean0, var0, epsilon=0.01,
                                          exponential_avg_factor=0.25)
    m, v, n = _stats(x, False)
    np.testing.assert_allclose(mean.numpy(), 0.75 * mean0 + 0.25 * m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(var.numpy(), 0.75 * var0 + 0.25 * v * n / (n - 1), rtol=1e-5)


def test_inference_uses_and_returns_the_given_statistics():
    x, scale, offset, mean0, var0 = _inputs((2, 3, 3, 4), 4)
    y, mean, var = mt.nn.fused_batch_norm(x, scale, offset, mean0, var0, is_training=False)
    np.testing.assert_allclose(y.numpy(), _normalise(x, mean0, var0, scale, offset, 0.001, False),
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mean.numpy(), mean0)
    np.testing.assert_array_equal(var.numpy(), var0)


def test_the_raw_op_returns_the_batch_mean_and_biased_variance_as_reserve_spaces():
    x, scale, offset, _, _ = _inputs((2, 3, 3, 4), 4)
    empty = mt.zeros([0])
    outputs = mt.nn.fused_batch_norm_v3(*map(mt.constant, (x, scale, offset)), empty, empty)
    assert len(outputs) == 5
    m, v, _ = _stats(x, False)
    np.testing.assert_allclose(outputs[3].numpy(), m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outputs[4].numpy(), v, rtol=1e-5)


@pytest.mark.parametrize("dtype", [mt.float16, mt.bfloat16])
def test_two_byte_floats_normalise_in_float32_with_float32_statistics(dtype):
    x, scale, offset, _, _ = _inputs((2, 3, 3, 4), 4)
    xh = mt.cast(mt.constant(x), dtype)
    y, mean, _ = mt.nn.fused_batch_norm(xh, scale, offset)
    assert y.dtype == dtype and mean.dtype == mt.float32
    x_rounded = mt.cast(xh, mt.float32).numpy()
    m, v, _ = _stats(x_rounded, False)
    want = _normalise(x_rounded, m, v, scale, offset, 0.001, False)
    np.testing.assert_allclose(mt.cast(y, mt.float32).numpy(), want, rtol=2e-2, atol=2e-2)


def test_float64_takes_float64_statistics():
    x = RNG.normal(size=(2, 3, 3, 2))
    y, mean, var = mt.nn.fused_batch_norm(x, np.ones(2), np.zeros(2))
    assert y.dtype == mt.float64 and mean.dtype == mt.float64
    m, v, _ = _stats(x, False)
    np.testing.assert_allclose(y.numpy(), _normalise(x, m, v, 1, 0, 0.001, False), rtol=1e-12)


def _loss_and_grads(x, scale, offset, w, **kwargs):
    tensors = [mt.constant(a) for a in (x, scale, offset)]
    with mt.GradientTape() as tape:
        for t in tensors:
            tape.watch(t)
        y = mt.nn.fused_batch_norm(*tensors, **kwargs)[0]
        loss = mt.reduce_sum(y * w)
    return tape.gradient(loss, tensors)


@pytest.mark.parametrize("is_training", [True, False])
def test_gradients_match_central_differences(is_training):
    x = RNG.normal(size=(2, 2, 3, 3))
    scale, offset = RNG.uniform(0.5, 2, 3), RNG.normal(size=3)
    mean, var = RNG.normal(size=3), RNG.uniform(0.5, 1.5, 3)
    w = RNG.normal(size=x.shape)
    kwargs = {"is_training": is_training}
    if not is_training:
        kwargs.update(mean=mean, variance=var)

    def loss(xv, sv, ov):
        return float(np.sum(mt.nn.fused_batch_norm(xv, sv, ov, **kwargs)[0].numpy() * w))

    grads = _loss_and_grads(x, scale, offset, w, **kwargs)
    for index, value in enumerate((x, scale, offset)):
        numeric = np.zeros_like(value)
        for i in np.ndindex(value.shape):
            args = [x, scale, offset]
            plus, minus = value.copy(), value.copy()
            plus[i] += 1e-6
            minus[i] -= 1e-6
            args[index] = plus
            up = loss(*args)
            args[index] = minus
            numeric[i] = (up - loss(*args)) / 2e-6
        np.testing.assert_allclose(grads[index].numpy(), numeric, rtol=1e-5, atol=1e-7)


def test_the_gradient_op_is_the_tapes_gradient():
    x, scale, offset, _, _ = _inputs((2, 3, 3, 4), 4)
    w = RNG.normal(size=x.shape).astype(np.float32)
    empty = mt.zeros([0])
    x, scale, offset = map(mt.constant, (x, scale, offset))
    _, _, _, saved_mean, saved_var = mt.nn.fused_batch_norm_v3(x, scale, offset, empty, empty)
    dx, dscale, doffset = mt.nn.fused_batch_norm_grad(mt.constant(w), x, scale, saved_mean,
                                                      saved_var)
    tape_grads = _loss_and_grads(x.numpy(), scale.numpy(), offset.numpy(), w)
    for got, want in zip((dx, dscale, doffset), tape_grads):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(doffset.numpy(), w.sum((0, 1, 2)), rtol=1e-5)


def test_bad_shapes_and_arguments_raise_tensorflows_errors():
    x, scale, offset, mean, var = _inputs((2, 3, 3, 4), 4)
    with pytest.raises(mt.errors.InvalidArgumentError, match="x must be 4-dimensional"):
        mt.nn.fused_batch_norm(x[0], scale, offset)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match="scale must have the same number of elements as the channels of "
                             "x, got 3 and 4"):
        mt.nn.fused_batch_norm(x, scale[:3], offset)
    with pytest.raises(mt.errors.InvalidArgumentError, match="scale must be 1-dimensional"):
        mt.nn.fused_batch_norm(x, scale.reshape(1, 4), offset)
    with pytest.raises(ValueError, match="Both `mean` and `variance` must be a 1D tensor"):
        mt.nn.fused_batch_norm(x, scale, offset, is_training=False)
    with pytest.raises(ValueError, match="data_format must be NHWC or NCHW"):
        mt.nn.fused_batch_norm(x, scale, offset, data_format="NDHWC")
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match="When exponential_avg_factor != 1, mean must have"):
        mt.nn.fused_batch_norm(x, scale, offset, mean[:0], var, exponential_avg_factor=0.5)


def test_batch_normalization_is_tensorflows_formula():
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    mean, var = x.mean(0), x.var(0)
    offset, scale = RNG.normal(size=5).astype(np.float32), RNG.uniform(1, 2, 5).astype(np.float32)
    y = mt.nn.batch_normalization(x, mean, var, offset, scale, 1e-3)
    np.testing.assert_allclose(y.numpy(), (x - mean) / np.sqrt(var + 1e-3) * scale + offset,
                               rtol=1e-5, atol=1e-5)
    y = mt.nn.batch_normalization(x, mean, var, None, None, 1e-3)
    np.testing.assert_allclose(y.numpy(), (x - mean) / np.sqrt(var + 1e-3), rtol=1e-5,
                               atol=1e-5)


def test_fused_batch_norm_runs_in_a_function():
    x, scale, offset, _, _ = _inputs((2, 3, 3, 4), 4)
    f = mt.function(lambda a: mt.nn.fused_batch_norm(a, scale, offset)[0])
    np.testing.assert_allclose(f(mt.constant(x)).numpy(),
                               mt.nn.fused_batch_norm(x, scale, offset)[0].numpy())
