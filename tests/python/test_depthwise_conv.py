"""mt.nn.depthwise_conv2d against TensorFlow 2.21's values and gradients (recorded by
fixtures/depthwise/write_depthwise_with_tensorflow.py), its errors, and Keras's
DepthwiseConv2D layer on top of it."""

import json
import pathlib
import re

import numpy as np
import pytest

import minitensor as mt

FIXTURE = np.load(pathlib.Path(__file__).parent / "fixtures" / "depthwise" / "depthwise.npz")
CASES = json.loads(str(FIXTURE["cases"]))  # the forms the fixture recorded


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_are_tensorflows(name):
    kwargs = CASES[name]
    x = FIXTURE["x"]
    if kwargs.get("data_format") == "NCHW":
        x = np.transpose(x, (0, 3, 1, 2))
    xt, ft = mt.constant(x), mt.constant(FIXTURE["filter"])
    with mt.GradientTape() as tape:
        tape.watch([xt, ft])
        y = mt.nn.depthwise_conv2d(xt, ft, **kwargs)
        loss = mt.reduce_sum(y * mt.constant(FIXTURE[f"{name}/w"]))
    np.testing.assert_allclose(y.numpy(), FIXTURE[f"{name}/y"], rtol=1e-5, atol=1e-5)
    dx, df = tape.gradient(loss, [xt, ft])
    if f"{name}/dx" in FIXTURE:  # TensorFlow's CPU has no gradient for some forms
        np.testing.assert_allclose(dx.numpy(), FIXTURE[f"{name}/dx"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(df.numpy(), FIXTURE[f"{name}/df"], rtol=1e-5, atol=1e-5)


def test_float64_and_a_function_give_the_same():
    x = FIXTURE["x"].astype(np.float64)
    f = FIXTURE["filter"].astype(np.float64)
    eager = mt.nn.depthwise_conv2d(x, f, [1, 2, 2, 1], "SAME")
    assert eager.dtype == mt.float64
    np.testing.assert_allclose(eager.numpy(), FIXTURE["same_stride2/y"], rtol=1e-5, atol=1e-5)
    traced = mt.function(lambda a, b: mt.nn.depthwise_conv2d(a, b, [1, 2, 2, 1], "SAME"))
    for _ in range(2):
        np.testing.assert_array_equal(traced(mt.constant(x), mt.constant(f)).numpy(),
                                      eager.numpy())


def _raises(error, text, *args, **kwargs):
    with pytest.raises(error, match=re.escape(text)):
        mt.nn.depthwise_conv2d(*args, **kwargs)


def test_bad_arguments_are_tensorflows_errors():
    x, f = FIXTURE["x"], FIXTURE["filter"]
    _raises(mt.errors.InvalidArgumentError, "input and filter must have the same depth: 3 vs 4",
            x, np.zeros((3, 2, 4, 1), np.float32), [1, 1, 1, 1], "VALID")
    _raises(mt.errors.InvalidArgumentError, "filter must be 4-dimensional: [3, 2, 3]",
            x, f[..., 0], [1, 1, 1, 1], "VALID")
    _raises(mt.errors.InvalidArgumentError, "strides field must specify 4 dimensions",
            x, f, [2, 2], "VALID")
    _raises(mt.errors.InvalidArgumentError, "Stride must be > 0, but got 0",
            x, f, [1, 0, 1, 1], "VALID")
    _raises(mt.errors.UnimplementedError, "does not yet support strides in the batch and depth",
            x, f, [2, 1, 1, 1], "VALID")
    _raises(mt.errors.InvalidArgumentError, "Value for attr 'T' of int32 is not in the list",
            x.astype(np.int32), f.astype(np.int32), [1, 1, 1, 1], "VALID")
    _raises(mt.errors.InvalidArgumentError, "Value for attr 'padding' of \"FOO\"",
            x, f, [1, 1, 1, 1], "FOO")
    _raises(ValueError, "When dilation rate is greater than 1, then all values of strides",
            x, f, [1, 2, 2, 1], "SAME", dilations=[2, 2])
    _raises(mt.errors.InvalidArgumentError, "Computed output size would be negative",
            np.zeros((1, 2, 2, 3), np.float32), f, [1, 1, 1, 1], "VALID")


def test_keras_depthwise_conv2d_builds_and_trains():
    layer = mt.keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2,
                                            activation="relu")
    x = mt.constant(FIXTURE["x"])
    y = layer(x)
    assert tuple(y.shape) == (2, 7, 6, 6)
    assert [w.name for w in layer.weights] == ["depthwise_conv2d/kernel:0",
                                               "depthwise_conv2d/bias:0"]
    assert tuple(layer.kernel.shape) == (3, 3, 3, 2)
    expected = np.maximum(mt.nn.depthwise_conv2d(x, layer.kernel, [1, 1, 1, 1],
                                                 "SAME").numpy(), 0)  # the bias starts at 0
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    assert layer.compute_output_shape((None, 7, 6, 3)) == (None, 7, 6, 6)
    strided = mt.keras.layers.DepthwiseConv2D((3, 2), strides=2, use_bias=False,
                                              data_format="channels_first")
    assert tuple(strided(mt.constant(np.transpose(FIXTURE["x"], (0, 3, 1, 2)))).shape) == \
        (2, 3, 3, 3)
    model = mt.keras.Sequential([mt.keras.layers.Input((7, 6, 3)),
                                 mt.keras.layers.DepthwiseConv2D(3),
                                 mt.keras.layers.GlobalAveragePooling2D(),
                                 mt.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    target = np.ones((2, 1), np.float32)
    first = model.evaluate(FIXTURE["x"], target, verbose=0)
    model.fit(FIXTURE["x"], target, epochs=20, verbose=0)
    assert model.evaluate(FIXTURE["x"], target, verbose=0) < first


def test_keras_depthwise_conv2d_weights_round_trip(tmp_path):
    pytest.importorskip("h5py")

    def make():
        return mt.keras.Sequential([mt.keras.layers.Input((7, 6, 3)),
                                    mt.keras.layers.DepthwiseConv2D(3, depth_multiplier=2),
                                    mt.keras.layers.Flatten(), mt.keras.layers.Dense(2)])

    model, other = make(), make()
    path = str(tmp_path / "dw.weights.h5")
    model.save_weights(path)
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(FIXTURE["x"], verbose=0),
                                  model.predict(FIXTURE["x"], verbose=0))


def test_keras_depthwise_conv2d_refuses_kerass_bad_arguments():
    with pytest.raises(ValueError, match=re.escape(
            "Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
            "Received depth_multiplier=0.")):
        mt.keras.layers.DepthwiseConv2D(3, depth_multiplier=0)
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        mt.keras.layers.DepthwiseConv2D(3)(np.zeros((1, 2, 2, 3), np.float32))
    with pytest.raises(ValueError, match="`strides > 1` not supported in conjunction"):
        mt.keras.layers.DepthwiseConv2D(3, strides=2, dilation_rate=2)


def test_gradients_match_central_differences_in_float64():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 5, 4, 2))
    f = rng.standard_normal((2, 3, 2, 2))
    w = rng.standard_normal((1, 3, 4, 4))

    def loss(xv, fv):
        y = mt.nn.depthwise_conv2d(xv, fv, [1, 2, 1, 1], [[0, 0], [1, 0], [1, 1], [0, 0]])
        return mt.reduce_sum(y * w)

    xt, ft = mt.constant(x), mt.constant(f)
    with mt.GradientTape() as tape:
        tape.watch([xt, ft])
        value = loss(xt, ft)
    dx, df = (g.numpy() for g in tape.gradient(value, [xt, ft]))
    h = 1e-6
    for array, grad, is_x in ((x, dx, True), (f, df, False)):
        for flat in range(array.size):
            up, down = array.copy(), array.copy()
            up.flat[flat] += h
            down.flat[flat] -= h
            args_up = (up, f) if is_x else (x, up)
            args_down = (down, f) if is_x else (x, down)
            numeric = (float(loss(*args_up)) - float(loss(*args_down))) / (2 * h)
            assert abs(numeric - grad.flat[flat]) < 1e-6 * max(1.0, abs(numeric))
