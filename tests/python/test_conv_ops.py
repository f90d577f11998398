"""mt.nn.conv2d, convolution, max_pool2d, avg_pool2d, max_pool and avg_pool against a
float64 NumPy reference written here (NHWC and NCHW, strides, SAME, VALID and explicit
padding, dilations, odd sizes), their gradients through a GradientTape against the
reference's, TensorFlow's argument forms, and the errors of bad input (TensorFlow 2.21's
messages where TensorFlow raises them in Python)."""

import numpy as np
import pytest

import minitensor as mt

RNG = np.random.default_rng(0)


# The reference: NHWC, float64, windows read by strided slices of the padded input.

def _geometry(length, window, stride, dilation, padding, pair):
    """Returns (output length, padding before, padding after) as TensorFlow computes
    them: VALID none, SAME ceil(length / stride) with the extra padding after."""
    effective = (window - 1) * dilation + 1
    if padding == "VALID":
        return (length - effective) // stride + 1, 0, 0
    if padding == "SAME":
        out = -(-length // stride)
        total = max((out - 1) * stride + effective - length, 0)
        return out, total // 2, total - total // 2
    before, after = pair
    return (length + before + after - effective) // stride + 1, before, after


def _windows(shape, window, strides, padding, dilations=(1, 1), explicit=None):
    """Returns ((oh, ow), the np.pad widths, and for each window offset (i, j) the slices
    of the padded NHWC input that it reads for every output position)."""
    pairs = explicit or [(0, 0), (0, 0)]
    oh, top, bottom = _geometry(shape[1], window[0], strides[0], dilations[0], padding,
                                pairs[0])
    ow, left, right = _geometry(shape[2], window[1], strides[1], dilations[1], padding,
                                pairs[1])
    widths = [(0, 0), (top, bottom), (left, right), (0, 0)]
    slices = {}
    for i in range(window[0]):
        for j in range(window[1]):
            r, c = i * dilations[0], j * dilations[1]
            slices[i, j] = (slice(None), slice(r, r + (oh - 1) * strides[0] + 1, strides[0]),
                            slice(c, c + (ow - 1) * strides[1] + 1, strides[1]), slice(None))
    return (oh, ow), widths, slices


def _nhwc(x, data_format):
    return x if data_format == "NHWC" else x.transpose(0, 2, 3, 1)


def _back(x, data_format):
    return x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)


def conv2d_ref(x, w, strides, padding, data_format="NHWC", dilations=(1, 1), explicit=None,
               upstream=None):
    """Returns conv2d(x, w) in float64, or with ``upstream`` (the output's gradient) the
    gradients (d x, d w). ``strides``, ``dilations`` and ``explicit`` (pairs) are spatial."""
    x, w = _nhwc(np.asarray(x, np.float64), data_format), np.asarray(w, np.float64)
    (oh, ow), widths, slices = _windows(x.shape, w.shape[:2], strides, padding, dilations,
                                        explicit)
    padded = np.pad(x, widths)
    if upstream is None:
        out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
        for (i, j), where in slices.items():
            out += padded[where] @ w[i, j]
        return _back(out, data_format)
    g = _nhwc(np.asarray(upstream, np.float64), data_format)
    grad_padded, grad_w = np.zeros_like(padded), np.zeros_like(w)
    for (i, j), where in slices.items():
        grad_w[i, j] = np.einsum("nhwc,nhwo->co", padded[where], g)
        grad_padded[where] += g @ w[i, j].T
    (top, _), (left, _) = widths[1], widths[2]
    grad_x = grad_padded[:, top:top + x.shape[1], left:left + x.shape[2]]
    return _back(grad_x, data_format), grad_w


def pool_ref(x, kind, ksize, strides, padding, data_format="NHWC", explicit=None,
             upstream=None):
    """Returns max or avg pooling of x in float64 (padding never counts), or with
    ``upstream`` the gradient: a max window's to its first maximum in row-major order, an
    average window's shared by the elements it read."""
    x = _nhwc(np.asarray(x, np.float64), data_format)
    (oh, ow), widths, slices = _windows(x.shape, ksize, strides, padding, explicit=explicit)
    fill = -np.inf if kind == "max" else 0.0
    padded = np.pad(x, widths, constant_values=fill)
    real = np.pad(np.ones_like(x), widths)
    windows = np.stack([padded[where] for where in slices.values()])
    counts = np.stack([real[where] for where in slices.values()]).sum(0)
    if upstream is None:
        out = windows.max(0) if kind == "max" else windows.sum(0) / counts
        return _back(out, data_format)
    g = _nhwc(np.asarray(upstream, np.float64), data_format)
    first = windows.argmax(0)  # the first maximum, windows being in row-major order
    grad = np.zeros_like(padded)
    for k, where in enumerate(slices.values()):
        grad[where] += np.where(first == k, g, 0.0) if kind == "max" else g / counts
    (top, _), (left, _) = widths[1], widths[2]
    return _back(grad[:, top:top + x.shape[1], left:left + x.shape[2]], data_format)


def _devices():
    return ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(mt.config.list_logical_devices("GPU")))]


def _spatial_pairs(explicit, data_format):
    if explicit is None:
        return None
    return explicit[1:3] if data_format == "NHWC" else explicit[2:4]


def _image(batch, h, w, c, data_format, dtype=np.float64):
    x = RNG.normal(size=(batch, h, w, c))
    return (x if data_format == "NHWC" else x.transpose(0, 3, 1, 2)).astype(dtype)


# (input h, w, channels, filter h, w, out channels, strides, padding, dilations, explicit)
CONV_CASES = [
    (5, 5, 2, 3, 3, 4, (1, 1), "VALID", (1, 1), None),
    (5, 5, 2, 3, 3, 4, (1, 1), "SAME", (1, 1), None),
    (7, 6, 3, 3, 2, 5, (2, 2), "SAME", (1, 1), None),
    (8, 9, 1, 3, 3, 2, (2, 3), "VALID", (1, 1), None),
    (6, 7, 2, 4, 2, 3, (3, 1), "SAME", (1, 1), None),  # even filter: padding after is larger
    (9, 8, 3, 3, 3, 2, (1, 1), "SAME", (2, 2), None),
    (10, 9, 2, 3, 2, 3, (1, 1), "VALID", (3, 2), None),
    (5, 6, 2, 3, 3, 2, (1, 2), "EXPLICIT", (1, 1), [(0, 0), (1, 2), (0, 3), (0, 0)]),
    (4, 4, 3, 2, 2, 2, (2, 2), "EXPLICIT", (2, 1), [(0, 0), (2, 0), (1, 1), (0, 0)]),
    (1, 1, 3, 1, 1, 4, (1, 1), "VALID", (1, 1), None),  # a 1x1 convolution
    (3, 11, 2, 1, 5, 3, (1, 4), "SAME", (1, 1), None),
]


def _conv_args(case, data_format):
    h, w, c, fh, fw, oc, strides, padding, dilations, explicit = case
    x = _image(2, h, w, c, data_format)
    f = RNG.normal(size=(fh, fw, c, oc))
    if explicit is not None and data_format == "NCHW":
        explicit = [explicit[0], explicit[3], explicit[1], explicit[2]]
    return x, f, strides, padding, dilations, explicit


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", CONV_CASES, ids=[f"case{i}" for i in range(len(CONV_CASES))])
def test_conv2d_matches_numpy_in_float64(case, data_format):
    x, f, strides, padding, dilations, explicit = _conv_args(case, data_format)
    out = mt.nn.conv2d(x, f, list(strides), explicit or padding, data_format=data_format,
                       dilations=list(dilations))
    expected = conv2d_ref(x, f, strides, padding, data_format, dilations,
                          _spatial_pairs(explicit, data_format))
    assert out.dtype == mt.float64 and out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("dtype, tolerance", [(np.float32, 1e-5), (np.float16, 2e-2),
                                              ("bfloat16", 5e-2)])
def test_conv2d_in_lower_precisions(device, dtype, tolerance):
    x, f = _image(2, 9, 8, 3, "NHWC"), RNG.normal(size=(3, 3, 3, 4))
    expected = conv2d_ref(x, f, (2, 1), "SAME")
    with mt.device(device):
        xt, ft = mt.cast(mt.constant(x), dtype), mt.cast(mt.constant(f), dtype)
        out = mt.nn.conv2d(xt, ft, [2, 1], "SAME")
    assert out.dtype == xt.dtype
    scale = np.abs(expected).max()
    np.testing.assert_allclose(mt.cast(out, mt.float64).numpy(), expected, rtol=tolerance,
                               atol=tolerance * scale)


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", [CONV_CASES[2], CONV_CASES[4], CONV_CASES[5], CONV_CASES[8]],
                         ids=["stride2", "even_filter", "dilated", "explicit"])
def test_conv2d_gradients_match_numpy(device, case, data_format):
    x, f, strides, padding, dilations, explicit = _conv_args(case, data_format)
    expected_out = conv2d_ref(x, f, strides, padding, data_format, dilations,
                              _spatial_pairs(explicit, data_format))
    upstream = RNG.normal(size=expected_out.shape)
    with mt.device(device):
        xv, fv = mt.Variable(x), mt.Variable(f)
        with mt.GradientTape() as tape:
            out = mt.nn.conv2d(xv, fv, list(strides), explicit or padding,
                               data_format=data_format, dilations=list(dilations))
            total = mt.reduce_sum(out * upstream)
        grad_x, grad_f = tape.gradient(total, [xv, fv])
    want_x, want_f = conv2d_ref(x, f, strides, padding, data_format, dilations,
                                _spatial_pairs(explicit, data_format), upstream=upstream)
    np.testing.assert_allclose(grad_x.numpy(), want_x, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grad_f.numpy(), want_f, rtol=1e-10, atol=1e-10)


def test_conv2d_gradient_agrees_with_finite_differences():
    x, f = _image(1, 5, 4, 2, "NHWC"), RNG.normal(size=(2, 3, 2, 2))
    weights = RNG.normal(size=(1, 3, 2, 2))

    def loss(x, f):
        return (conv2d_ref(x, f, (2, 2), "SAME") * weights).sum()

    xv = mt.Variable(x)
    with mt.GradientTape() as tape:
        total = mt.reduce_sum(mt.nn.conv2d(xv, f, 2, "SAME") * weights)
    grad = tape.gradient(total, xv).numpy()
    step, numeric = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += step
        down[i] -= step
        numeric[i] = (loss(up, f) - loss(down, f)) / (2 * step)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-7)


def test_conv2d_raw_backprops_are_the_gradients():
    x, f = _image(2, 6, 5, 3, "NHWC"), RNG.normal(size=(3, 2, 3, 4))
    upstream = RNG.normal(size=conv2d_ref(x, f, (2, 1), "SAME").shape)
    want_x, want_f = conv2d_ref(x, f, (2, 1), "SAME", upstream=upstream)
    args = ([1, 2, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    grad_x = mt.nn.conv2d_backprop_input([2, 6, 5, 3], mt.constant(f), mt.constant(upstream),
                                         *args)
    grad_f = mt.nn.conv2d_backprop_filter(mt.constant(x), [3, 2, 3, 4], mt.constant(upstream),
                                          *args)
    np.testing.assert_allclose(grad_x.numpy(), want_x, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad_f.numpy(), want_f, rtol=1e-12, atol=1e-12)


def test_the_backprops_take_tensorflows_signatures_and_arrays():
    # TensorFlow 2.21's values on the CPU: a tap in the padding never multiplies (an infinite
    # weight or gradient there adds nothing). cuDNN multiplies it, giving NaN there, as
    # TensorFlow's and PyTorch's GPUs do (docs/keras.md, "Where they run").
    with mt.device("/CPU:0"):
        ones = np.ones((1, 3, 3, 1), np.float32)
        w = np.ones((3, 3, 1, 1), np.float32)
        w[0, 0, 0, 0] = np.inf
        dy = np.ones((1, 3, 3, 1), np.float32)
        dy[0, 0, 0, 0] = np.inf
        inf = np.inf
        assert mt.nn.conv2d(ones, w, 1, "SAME").numpy().ravel().tolist() == \
            [4, 6, 4, 6, inf, inf, 4, inf, inf]
        assert mt.nn.conv2d_backprop_filter(ones, [3, 3, 1, 1], dy, 1, "SAME").numpy().ravel() \
            .tolist() == [4, 6, 4, 6, inf, inf, 4, inf, inf]
        got = mt.nn.conv2d_backprop_input(mt.constant([1, 3, 3, 1]), filter=w, out_backprop=ones,
                                          strides=[1, 1], padding="SAME")
        assert got.numpy().ravel().tolist() == [inf, inf, 4, inf, inf, 6, 4, 6, 4]
        with pytest.raises(ValueError, match="filter_sizes must have 4 elements"):
            mt.nn.conv2d_backprop_filter(ones, [3, 3, 1], dy, 1, "SAME")


def test_conv2d_takes_tensorflows_argument_forms():
    x, f = _image(1, 7, 7, 2, "NHWC"), RNG.normal(size=(3, 3, 2, 3))
    strided = conv2d_ref(x, f, (2, 2), "SAME")
    for strides in [2, [2], [2, 2], (2, 2), [1, 2, 2, 1], np.array([2, 2]), np.int64(2)]:
        np.testing.assert_allclose(mt.nn.conv2d(x, f, strides, "SAME").numpy(), strided,
                                   rtol=1e-12)
    dilated = conv2d_ref(x, f, (1, 1), "VALID", dilations=(2, 2))
    for dilations in [2, [2], (2, 2), [1, 2, 2, 1]]:
        np.testing.assert_allclose(mt.nn.conv2d(x, f, 1, "VALID", dilations=dilations).numpy(),
                                   dilated, rtol=1e-12)
    explicit = conv2d_ref(x, f, (1, 1), "EXPLICIT", explicit=[(1, 0), (2, 1)])
    for padding in [[[0, 0], [1, 0], [2, 1], [0, 0]], ((0, 0), (1, 0), (2, 1), (0, 0))]:
        np.testing.assert_allclose(mt.nn.conv2d(x, f, 1, padding).numpy(), explicit,
                                   rtol=1e-12)
    np.testing.assert_allclose(mt.nn.conv2d(x, f, None, b"VALID").numpy(),
                               conv2d_ref(x, f, (1, 1), "VALID"), rtol=1e-12)


def test_conv2d_converts_operands_to_the_tensors_dtype():
    x, f = _image(1, 4, 4, 2, "NHWC"), RNG.normal(size=(2, 2, 2, 1))
    assert mt.nn.conv2d(mt.constant(x, mt.float32), f, 1, "VALID").dtype == mt.float32
    assert mt.nn.conv2d(x, mt.constant(f, mt.float32), 1, "VALID").dtype == mt.float32
    assert mt.nn.conv2d(x.tolist(), f, 1, "VALID").dtype == mt.float32
    variable = mt.Variable(f)
    np.testing.assert_allclose(mt.nn.conv2d(x, variable, 1, "VALID").numpy(),
                               conv2d_ref(x, f, (1, 1), "VALID"), rtol=1e-12)


def test_conv2d_treats_leading_dimensions_as_batch():
    x, f = RNG.normal(size=(2, 3, 5, 5, 2)), RNG.normal(size=(3, 3, 2, 4))
    xv = mt.Variable(x)
    with mt.GradientTape() as tape:
        out = mt.nn.conv2d(xv, f, 1, "SAME")
        total = mt.reduce_sum(out)
    assert out.shape == (2, 3, 5, 5, 4)
    np.testing.assert_allclose(out.numpy()[1], conv2d_ref(x[1], f, (1, 1), "SAME"),
                               rtol=1e-12)
    ones = np.ones((3, 5, 5, 4))
    np.testing.assert_allclose(tape.gradient(total, xv).numpy()[0],
                               conv2d_ref(x[0], f, (1, 1), "SAME", upstream=ones)[0],
                               rtol=1e-12)


def test_convolution_is_conv2d_with_its_defaults():
    x, f = _image(2, 6, 6, 2, "NHWC"), RNG.normal(size=(3, 3, 2, 3))
    np.testing.assert_allclose(mt.nn.convolution(x, f).numpy(),
                               conv2d_ref(x, f, (1, 1), "VALID"), rtol=1e-12)
    np.testing.assert_allclose(mt.nn.convolution(x, f, strides=2, padding="SAME").numpy(),
                               conv2d_ref(x, f, (2, 2), "SAME"), rtol=1e-12)
    np.testing.assert_allclose(mt.nn.convolution(x, f, padding="SAME", dilations=2).numpy(),
                               conv2d_ref(x, f, (1, 1), "SAME", dilations=(2, 2)), rtol=1e-12)
    xc = x.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(mt.nn.convolution(xc, f, data_format="NCHW").numpy(),
                               conv2d_ref(xc, f, (1, 1), "VALID", "NCHW"), rtol=1e-12)


# Pools: (h, w, channels, window h, w, strides, padding, explicit)
POOL_CASES = [
    (4, 4, 2, 2, 2, (2, 2), "VALID", None),
    (5, 5, 3, 2, 2, (2, 2), "VALID", None),
    (5, 5, 3, 2, 2, (2, 2), "SAME", None),
    (7, 6, 2, 3, 3, (2, 2), "SAME", None),
    (7, 9, 1, 3, 2, (1, 3), "SAME", None),
    (6, 5, 2, 3, 3, (1, 1), "VALID", None),  # overlapping windows
    (5, 5, 2, 3, 2, (2, 1), "EXPLICIT", [(0, 0), (1, 2), (1, 0), (0, 0)]),
]


def _pool_args(case, data_format):
    h, w, c, kh, kw, strides, padding, explicit = case
    if explicit is not None and data_format == "NCHW":
        explicit = [explicit[0], explicit[3], explicit[1], explicit[2]]
    return _image(2, h, w, c, data_format), (kh, kw), strides, padding, explicit


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", POOL_CASES, ids=[f"case{i}" for i in range(len(POOL_CASES))])
def test_pools_match_numpy_in_float64(case, data_format):
    x, ksize, strides, padding, explicit = _pool_args(case, data_format)
    pairs = _spatial_pairs(explicit, data_format)
    out = mt.nn.max_pool2d(x, list(ksize), list(strides), explicit or padding, data_format)
    np.testing.assert_array_equal(out.numpy(), pool_ref(x, "max", ksize, strides, padding,
                                                        data_format, pairs))
    if explicit is None:  # AvgPool has no explicit padding
        out = mt.nn.avg_pool2d(x, list(ksize), list(strides), padding, data_format)
        np.testing.assert_allclose(out.numpy(), pool_ref(x, "avg", ksize, strides, padding,
                                                         data_format), rtol=1e-12)


def test_avg_pool_divides_by_the_real_elements_only():
    x = np.arange(1.0, 10.0).reshape(1, 3, 3, 1)
    out = mt.nn.avg_pool2d(x, 2, 2, "SAME").numpy()[0, :, :, 0]
    # TensorFlow 2.21: tf.nn.avg_pool2d(x, 2, 2, "SAME") on the same x
    np.testing.assert_array_equal(out, [[3.0, 4.5], [7.5, 9.0]])
    assert mt.nn.max_pool2d(-x, 2, 2, "SAME").numpy()[0, 1, 1, 0] == -9.0  # padding ignored


@pytest.mark.parametrize("device", _devices())
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", [POOL_CASES[1], POOL_CASES[3], POOL_CASES[5], POOL_CASES[6]],
                         ids=["valid", "same", "overlapping", "explicit"])
def test_pool_gradients_match_numpy(device, case, data_format):
    x, ksize, strides, padding, explicit = _pool_args(case, data_format)
    pairs = _spatial_pairs(explicit, data_format)
    kinds = [("max", mt.nn.max_pool2d)] + ([] if explicit else [("avg", mt.nn.avg_pool2d)])
    for kind, pool in kinds:
        upstream = RNG.normal(size=pool_ref(x, kind, ksize, strides, padding, data_format,
                                            pairs).shape)
        with mt.device(device):
            xv = mt.Variable(x)
            with mt.GradientTape() as tape:
                total = mt.reduce_sum(pool(xv, list(ksize), list(strides), explicit or padding,
                                           data_format) * upstream)
            grad = tape.gradient(total, xv)
        want = pool_ref(x, kind, ksize, strides, padding, data_format, pairs, upstream)
        np.testing.assert_allclose(grad.numpy(), want, rtol=1e-12, atol=1e-12, err_msg=kind)


def test_max_pool_gradient_goes_to_the_first_maximum_of_a_tie():
    x = mt.Variable(np.array([[1.0, 3.0], [3.0, 3.0]]).reshape(1, 2, 2, 1))
    with mt.GradientTape() as tape:
        total = mt.reduce_sum(mt.nn.max_pool2d(x, 2, 2, "VALID"))
    np.testing.assert_array_equal(tape.gradient(total, x).numpy().reshape(2, 2),
                                  [[0.0, 1.0], [0.0, 0.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, "bfloat16"])
def test_pools_in_lower_precisions(dtype):
    x = _image(2, 6, 6, 3, "NHWC")
    xt = mt.cast(mt.constant(x), dtype)
    out = mt.nn.max_pool2d(xt, 3, 2, "SAME")
    assert out.dtype == xt.dtype
    rounded = mt.cast(xt, mt.float64).numpy()
    np.testing.assert_array_equal(mt.cast(out, mt.float64).numpy(),
                                  pool_ref(rounded, "max", (3, 3), (2, 2), "SAME"))
    np.testing.assert_allclose(mt.cast(mt.nn.avg_pool2d(xt, 3, 2, "SAME"), mt.float64).numpy(),
                               pool_ref(rounded, "avg", (3, 3), (2, 2), "SAME"), atol=2e-2)


def test_generic_pools_take_a_4d_input():
    x = _image(1, 5, 5, 2, "NHWC")
    np.testing.assert_array_equal(mt.nn.max_pool(x, 2, 2, "VALID").numpy(),
                                  pool_ref(x, "max", (2, 2), (2, 2), "VALID"))
    np.testing.assert_allclose(mt.nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME").numpy(),
                               pool_ref(x, "avg", (2, 2), (1, 1), "SAME"), rtol=1e-12)
    xc = x.transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(mt.nn.max_pool(xc, 2, 2, "VALID", data_format="NCHW").numpy(),
                                  pool_ref(xc, "max", (2, 2), (2, 2), "VALID", "NCHW"))


def test_the_ops_are_exported_from_the_table():
    for name in ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "max_pool2d",
                 "avg_pool2d", "max_pool_grad", "avg_pool_grad", "convolution", "max_pool",
                 "avg_pool"]:
        assert name in mt.nn.__all__ and callable(getattr(mt.nn, name)), name


# Bad input. Forms TensorFlow refuses in Python: its messages (TensorFlow 2.21).

X = np.ones((1, 5, 5, 2))
F = np.ones((3, 3, 2, 4))


@pytest.mark.parametrize("call, error, message", [
    (lambda: mt.nn.conv2d(X, F, [1, 2, 2], "SAME"), ValueError,
     r"strides should be of length 1, 2 or 4. Received: strides=\[1, 2, 2\] of length 3"),
    (lambda: mt.nn.conv2d(X, F, 1, "SAME", dilations=[1, 2, 2]), ValueError,
     r"dilations should be of length 1, 2 or 4. Received: dilations=\[1, 2, 2\] of length 3"),
    (lambda: mt.nn.conv2d(X, F, 1, [[1, 2], [0, 1]]), ValueError,
     r"When padding is a list, it must be of size 4. Received: padding=\[\[1, 2\], \[0, 1\]\] "
     r"of size 2"),
    (lambda: mt.nn.conv2d(X, F, 1, [0, 0, 1, 2, 0, 1, 0, 0]), ValueError,
     r"When `padding` is a list, each element of `padding` must be a list/tuple of size 2. "
     r"Received: padding=\[0, 0, 1, 2, 0, 1, 0, 0\] with element at index 0 of type "
     r"<class 'int'>"),
    (lambda: mt.nn.conv2d(X, F, 1, [[0, 0], [1, 1, 1], [1, 1], [0, 0]]), ValueError,
     r"each element of `padding` must be a list/tuple of size 2. Received: padding=\[\[0, 0\], "
     r"\[1, 1, 1\], \[1, 1\], \[0, 0\]\] with element at index 1 of size 3"),
    (lambda: mt.nn.conv2d(X, F, 1, "EXPLICIT"), ValueError,
     r"'EXPLICIT' is not a valid value for `padding`. To use explicit padding, `padding` must "
     r"be a list."),
    (lambda: mt.nn.conv2d(X, F, 1, 1), TypeError,
     r"Expected string for argument 'padding' not 1."),
    (lambda: mt.nn.conv2d(X, F, 1, "same"), mt.errors.InvalidArgumentError,
     r"\[Conv2D\] Value for attr 'padding' of \"same\" is not in the list of allowed values: "
     r"\"SAME\", \"VALID\", \"EXPLICIT\""),
    (lambda: mt.nn.conv2d(X, F, 1, "SAME", data_format="NWHC"), mt.errors.InvalidArgumentError,
     r"\[Conv2D\] Value for attr 'data_format' of \"NWHC\" is not in the list of allowed "
     r"values: \"NHWC\", \"NCHW\""),
    (lambda: mt.nn.max_pool2d(X, [1, 2, 2], 1, "VALID"), ValueError,
     r"ksize should be of length 1, 2 or 4. Received: ksize=\[1, 2, 2\] of length 3"),
    (lambda: mt.nn.avg_pool2d(X, 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]), TypeError,
     r"Expected string for argument 'padding' not \[\[0, 0\], \[1, 1\], \[1, 1\], \[0, 0\]\]."),
    (lambda: mt.nn.avg_pool2d(X, 2, 2, "EXPLICIT"), mt.errors.InvalidArgumentError,
     r"\[AvgPool\] Value for attr 'padding' of \"EXPLICIT\" is not in the list of allowed "
     r"values: \"SAME\", \"VALID\""),
    (lambda: mt.nn.max_pool(np.ones((1, 1, 1, 5, 5, 2)), 2, 2, "VALID"), ValueError,
     r"`input.shape.rank` must be 3, 4 or 5. Received: input.shape=\(1, 1, 1, 5, 5, 2\) of "
     r"rank 6."),
    (lambda: mt.nn.convolution(X, F, strides=2, dilations=2, padding="SAME"), ValueError,
     r"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     r"strides=\[2 2\] and dilation_rate=\[2 2\]"),
    (lambda: mt.nn.convolution(X, F, padding=[[0, 0], [1, 1], [1, 1], [0, 0]]), TypeError,
     r"Expected string for argument 'padding' not \[\[0, 0\], \[1, 1\], \[1, 1\], \[0, 0\]\]."),
])
def test_bad_forms_raise_tensorflows_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("call", [
    lambda: mt.nn.max_pool(np.ones((1, 5, 2)), 2, 2, "VALID"),
    lambda: mt.nn.avg_pool(np.ones((1, 2, 5, 5, 2)), 2, 2, "VALID"),
    lambda: mt.nn.convolution(np.ones((1, 5, 2)), np.ones((3, 2, 4))),
])
def test_one_and_three_dimensional_windows_are_unimplemented(call):
    with pytest.raises(mt.errors.UnimplementedError, match=r"only 2-D"):
        call()


# Values the ops refuse: InvalidArgumentError from the op, its name first.

@pytest.mark.parametrize("call, op, words", [
    (lambda: mt.nn.conv2d(X, F, 0, "SAME"), "Conv2D", "strides"),
    (lambda: mt.nn.conv2d(X, F, [2, 1, 1, 1], "SAME"), "Conv2D", "batch and depth"),
    (lambda: mt.nn.conv2d(X, F, 1, "SAME", dilations=0), "Conv2D", "dilations"),
    (lambda: mt.nn.conv2d(X, F, 1, [[0, 0], [-1, 0], [0, 0], [0, 0]]), "Conv2D", "negative"),
    (lambda: mt.nn.conv2d(X, F, 1, [[1, 0], [0, 0], [0, 0], [0, 0]]), "Conv2D",
     "batch and depth"),
    (lambda: mt.nn.conv2d(X, np.ones((3, 3, 3, 4)), 1, "SAME"), "Conv2D", "depth"),
    (lambda: mt.nn.conv2d(X[0], F, 1, "SAME"), "Conv2D", "4-dimensional"),
    (lambda: mt.nn.conv2d(X, F[0], 1, "SAME"), "Conv2D", "4-dimensional"),
    (lambda: mt.nn.conv2d(X, np.ones((7, 3, 2, 4)), 1, "VALID"), "Conv2D", "negative"),
    (lambda: mt.nn.conv2d(X.astype(np.int32), F.astype(np.int32), 1, "VALID"), "Conv2D", ""),
    (lambda: mt.nn.conv2d(mt.constant(X), mt.constant(F, mt.float32), 1, "VALID"), "Conv2D",
     ""),
    (lambda: mt.nn.max_pool2d(X, 0, 1, "VALID"), "MaxPool", "ksize"),
    (lambda: mt.nn.max_pool2d(X, 2, 0, "VALID"), "MaxPool", "strides"),
    (lambda: mt.nn.max_pool2d(X, [2, 2, 2, 1], 1, "VALID"), "MaxPool", "batch"),
    (lambda: mt.nn.max_pool2d(X[0], 2, 2, "VALID"), "MaxPool", "4-dimensional"),
    (lambda: mt.nn.avg_pool2d(X, 7, 1, "VALID"), "AvgPool", "negative"),
    (lambda: mt.nn.avg_pool2d(np.ones((1, 4, 4, 1), np.int32), 2, 2, "VALID"), "AvgPool", ""),
])
def test_bad_values_raise_invalid_argument_from_the_op(call, op, words):
    with pytest.raises(mt.errors.InvalidArgumentError, match=rf"^\[{op}\].*{words}"):
        call()


def test_a_window_one_larger_than_the_input_gives_an_empty_output():
    # TensorFlow 2.21: VALID output ceil((5 - 6 + 1) / 1) = 0 rows, not an error
    assert mt.nn.max_pool2d(X, 6, 1, "VALID").shape == (1, 0, 0, 2)
    assert mt.nn.conv2d(X, np.ones((6, 3, 2, 4)), 1, "VALID").shape == (1, 0, 3, 4)


def test_nhwc_calls_of_several_patch_chunks_match_the_direct_nchw_loops():
    # NHWC float32 goes through patches and the GEMM a chunk of positions (or, for the input's
    # gradient, of images) at a time (Note [Convolution as a product]); NCHW through the
    # direct loops. 65,536 positions of 144 taps make three chunks.
    from minitensor import _minitensor as raw
    rng = np.random.default_rng(1)
    x = rng.standard_normal((16, 64, 64, 16)).astype(np.float32)
    f = rng.standard_normal((3, 3, 16, 8)).astype(np.float32)
    dy = rng.standard_normal((16, 64, 64, 8)).astype(np.float32)
    nchw = lambda a: np.ascontiguousarray(np.transpose(a, (0, 3, 1, 2)))
    nhwc = lambda a: np.transpose(a, (0, 2, 3, 1))
    one = [1, 1, 1, 1]
    y = raw.conv2d(mt.constant(x), mt.constant(f), one, "SAME", [], "NHWC", one).numpy()
    y_ref = nhwc(raw.conv2d(mt.constant(nchw(x)), mt.constant(f), one, "SAME", [], "NCHW",
                            one).numpy())
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-4)
    df = raw.conv2d_backprop_filter(mt.constant(x), [3, 3, 16, 8], mt.constant(dy), one, "SAME",
                                    [], "NHWC", one).numpy()
    df_ref = raw.conv2d_backprop_filter(mt.constant(nchw(x)), [3, 3, 16, 8],
                                        mt.constant(nchw(dy)), one, "SAME", [], "NCHW",
                                        one).numpy()
    np.testing.assert_allclose(df, df_ref, rtol=1e-4, atol=1e-2)
    dx = raw.conv2d_backprop_input(list(x.shape), mt.constant(f), mt.constant(dy), one, "SAME",
                                   [], "NHWC", one).numpy()
    dx_ref = nhwc(raw.conv2d_backprop_input([16, 16, 64, 64], mt.constant(f),
                                            mt.constant(nchw(dy)), one, "SAME", [], "NCHW",
                                            one).numpy())
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-5, atol=1e-4)
