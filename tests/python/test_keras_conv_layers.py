"""Conv2D, MaxPooling2D, AveragePooling2D and GlobalMaxPooling2D: values against NumPy,
gradients, Keras 3's arguments, defaults, weight names and messages (TensorFlow 2.21 /
Keras 3.15), shapes in Sequential and functional models, summary(), training, and
.weights.h5 files in Keras's layout."""

import re

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras
layers = keras.layers
RNG = np.random.default_rng(0)


def _conv(x, kernel, bias, stride=1, same=False):
    """A direct NHWC float64 convolution (cross-correlation) with a bias."""
    kh, kw = kernel.shape[:2]
    if same:
        out_h, out_w = -(-x.shape[1] // stride), -(-x.shape[2] // stride)
        pad_h = max((out_h - 1) * stride + kh - x.shape[1], 0)
        pad_w = max((out_w - 1) * stride + kw - x.shape[2], 0)
        x = np.pad(x, [(0, 0), (pad_h // 2, pad_h - pad_h // 2),
                       (pad_w // 2, pad_w - pad_w // 2), (0, 0)])
    out_h, out_w = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], out_h, out_w, kernel.shape[3]))
    for i in range(out_h):
        for j in range(out_w):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j] = np.einsum("nhwc,hwco->no", patch, kernel)
    return out + bias


# Conv2D

def test_conv2d_defaults_weights_and_config_follow_keras():
    layer = layers.Conv2D(8, 3)
    assert layer.name.startswith("conv2d")
    layer.build((None, 5, 5, 2))
    assert [(w.name.split("/")[-1], w.shape) for w in layer.weights] == [
        ("kernel:0", (3, 3, 2, 8)), ("bias:0", (8,))]
    assert isinstance(layer.kernel_initializer, keras.initializers.GlorotUniform)
    limit = np.sqrt(6 / (3 * 3 * 2 + 3 * 3 * 8))  # Glorot's fans count the window
    kernel = layer.kernel.numpy()
    assert np.abs(kernel).max() <= limit and np.abs(kernel).max() > 0.8 * limit
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(8))
    config = layer.get_config()
    assert {k: config[k] for k in ["filters", "kernel_size", "strides", "padding",
                                   "data_format", "dilation_rate", "groups", "activation",
                                   "use_bias"]} == {
        "filters": 8, "kernel_size": (3, 3), "strides": (1, 1), "padding": "valid",
        "data_format": "channels_last", "dilation_rate": (1, 1), "groups": 1,
        "activation": "linear", "use_bias": True}
    assert layer.count_params() == 3 * 3 * 2 * 8 + 8
    assert layers.Conv2D(4, [3, 2]).kernel_size == (3, 2)
    assert layers.Conv2D(4, 3, padding="SAME").padding == "same"
    assert layers.Convolution2D is layers.Conv2D


@pytest.mark.parametrize("stride, padding", [(1, "valid"), (2, "same"), (2, "valid"),
                                             (1, "same")])
def test_conv2d_computes_activation_of_convolution_plus_bias(stride, padding):
    x = RNG.normal(size=(2, 7, 6, 3)).astype(np.float32)
    layer = layers.Conv2D(4, (3, 2), strides=stride, padding=padding, activation="relu")
    layer.build(x.shape)
    kernel = RNG.normal(size=(3, 2, 3, 4)).astype(np.float32)
    bias = RNG.normal(size=4).astype(np.float32)
    layer.set_weights([kernel, bias])
    out = layer(x)
    expected = np.maximum(_conv(x.astype(np.float64), kernel, bias, stride, padding == "same"),
                          0)
    assert out.shape == expected.shape == layer.compute_output_shape((2, 7, 6, 3))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_conv2d_channels_first_and_dilation():
    x = RNG.normal(size=(2, 9, 8, 3)).astype(np.float32)
    last = layers.Conv2D(5, 3, dilation_rate=2, padding="same")
    first = layers.Conv2D(5, 3, dilation_rate=2, padding="same", data_format="channels_first")
    last.build(x.shape)
    first.build((2, 3, 9, 8))
    first.set_weights([w + 0.5 for w in last.get_weights()])  # a bias that is not zero
    last.set_weights(first.get_weights())
    out_first = first(x.transpose(0, 3, 1, 2))
    assert out_first.shape == (2, 5, 9, 8)
    assert first.compute_output_shape((None, 3, 9, 8)) == (None, 5, 9, 8)
    np.testing.assert_allclose(out_first.numpy().transpose(0, 2, 3, 1), last(x).numpy(),
                               rtol=1e-5, atol=1e-5)
    kernel, bias = last.get_weights()
    dilated = np.zeros((5, 5, 3, 5), np.float32)
    dilated[::2, ::2] = kernel  # a dilated window is a sparse larger one
    np.testing.assert_allclose(last(x).numpy(), _conv(x.astype(np.float64), dilated, bias,
                                                      same=True), rtol=1e-5, atol=1e-5)


def test_conv2d_output_shapes():
    assert layers.Conv2D(4, 3, strides=2).compute_output_shape((None, 7, 8, 3)) == \
        (None, 3, 3, 4)
    assert layers.Conv2D(4, 3).compute_output_shape((None, None, None, 3)) == \
        (None, None, None, 4)
    assert layers.Conv2D(4, 3, data_format="channels_first").compute_output_shape(
        (None, 3, 7, 8)) == (None, 4, 5, 6)
    assert layers.Conv2D(4, 3, padding="same", strides=2).compute_output_shape(
        (None, 7, 8, 3)) == (None, 4, 4, 4)


def test_conv2d_gradients_reach_kernel_bias_and_input():
    for data_format, shape, axes in [("channels_last", (2, 5, 5, 3), (0, 1, 2)),
                                     ("channels_first", (2, 3, 5, 5), (0, 2, 3))]:
        layer = layers.Conv2D(4, 3, padding="same", data_format=data_format)
        x = mt.Variable(RNG.normal(size=shape).astype(np.float32))
        with mt.GradientTape() as tape:
            out = layer(x)
            upstream = RNG.normal(size=out.shape).astype(np.float32)
            total = mt.reduce_sum(out * upstream)
        grad_x, grad_kernel, grad_bias = tape.gradient(total, [x, layer.kernel, layer.bias])
        assert grad_x.shape == shape and grad_kernel.shape == (3, 3, 3, 4)
        np.testing.assert_allclose(grad_bias.numpy(), upstream.sum(axes), rtol=1e-5,
                                   atol=1e-5)


def test_conv2d_kernel_regularizer_adds_its_penalty():
    layer = layers.Conv2D(2, 3, kernel_regularizer="l2",
                          bias_regularizer=keras.regularizers.L1(0.1))
    layer.build((None, 4, 4, 1))
    layer.set_weights([np.ones((3, 3, 1, 2), np.float32), np.full(2, -2.0, np.float32)])
    np.testing.assert_allclose([float(v) for v in layer.losses], [0.01 * 18, 0.1 * 4],
                               rtol=1e-6)
    assert len(layers.Conv2D(2, 3, use_bias=False)(np.ones((1, 3, 3, 1))).shape) == 4


@pytest.mark.parametrize("kwargs, message", [  # Keras 3.15's messages
    ({"filters": 0, "kernel_size": 3}, r"Invalid value for argument `filters`. Expected a "
                                       r"strictly positive value. Received filters=0."),
    ({"filters": 4, "kernel_size": 0}, r"The `kernel_size` argument must be a tuple of 2 "
                                       r"integers. Received kernel_size=0, including values "
                                       r"\{0\} that do not satisfy `value > 0`"),
    ({"filters": 4, "kernel_size": (3,)}, r"The `kernel_size` argument must be a tuple of 2 "
                                          r"integers. Received kernel_size=\(3,\)"),
    ({"filters": 4, "kernel_size": "a"}, r"The `kernel_size` argument must be a tuple of 2 "
                                         r"integers. Received kernel_size=a"),
    ({"filters": 4, "kernel_size": 3, "strides": 0}, r"The `strides` argument must be a tuple "
                                                     r"of 2 integers. Received strides=0, "
                                                     r"including values \{0\}"),
    ({"filters": 4, "kernel_size": 3, "dilation_rate": (2,)},
     r"The `dilation_rate` argument must be a tuple of 2 integers. Received "
     r"dilation_rate=\(2,\)"),
    ({"filters": 4, "kernel_size": 3, "strides": 2, "dilation_rate": 2},
     r"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
     r"strides=\(2, 2\) and dilation_rate=\(2, 2\)"),
    ({"filters": 4, "kernel_size": 3, "padding": "causal"},
     r"The `padding` argument must be a list/tuple or one of \{'valid', 'same'\}. Received: "
     r"causal"),
    ({"filters": 4, "kernel_size": 3, "padding": ((1, 1), (1, 1))},
     r"`padding` must be either `'valid'` or `'same'`. Received \(\(1, 1\), \(1, 1\)\)."),
    ({"filters": 4, "kernel_size": 3, "groups": 0},
     r"The number of groups must be a positive integer. Received: groups=0."),
    ({"filters": 4, "kernel_size": 3, "groups": 3},
     r"The number of filters must be evenly divisible by the number of groups. Received: "
     r"groups=3, filters=4."),
    ({"filters": 4, "kernel_size": 3, "groups": 2}, r"groups must be 1"),
    ({"filters": 4, "kernel_size": 3, "data_format": "foo"},
     r"The `data_format` argument must be one of \{'channels_first', 'channels_last'\}. "
     r"Received: data_format=foo"),
    ({"filters": 4, "kernel_size": 3, "activation": "foo"},
     r"Could not interpret activation function identifier: foo"),
])
def test_conv2d_refuses_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        layers.Conv2D(**kwargs)


def test_conv2d_refuses_inputs_it_cannot_take():
    x = np.ones((2, 7, 7, 3), np.float32)
    with pytest.raises(ValueError, match=r"Input 0 with name 'None' of layer 'conv2d\w*' is "
                                         r"incompatible with the layer: expected min_ndim=4, "
                                         r"found ndim=3. Full shape received: \(7, 7, 3\)"):
        layers.Conv2D(4, 3)(x[0])
    layer = layers.Conv2D(4, 3)
    layer(x)
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 3, but "
                                         r"received input with shape \(2, 7, 7, 5\)"):
        layer(np.ones((2, 7, 7, 5), np.float32))
    with pytest.raises(ValueError, match=r"Computed output size would be zero or negative. "
                                         r"Received `inputs shape=\(2, 7, 7, 3\)`, `kernel "
                                         r"shape=\(8, 8, 3, 4\)`, `dilation_rate=\[1 1\]`, "
                                         r"`strides=\(1, 1\)`, `padding=valid`."):
        layers.Conv2D(4, 8)(x)
    with pytest.raises(ValueError, match="Computed output size would be zero or negative"):
        layers.Conv2D(4, 8)(layers.Input((7, 7, 3)))
    with pytest.raises(ValueError, match=r"The channel dimension of the inputs should be "
                                         r"defined"):
        layers.Conv2D(4, 3)(layers.Input((7, 7, None)))


# MaxPooling2D, AveragePooling2D, GlobalMaxPooling2D

def test_pooling_defaults_and_config_follow_keras():
    pool = layers.MaxPooling2D()
    assert pool.name.startswith("max_pooling2d")
    assert {k: pool.get_config()[k] for k in ["pool_size", "padding", "strides",
                                              "data_format"]} == {
        "pool_size": (2, 2), "padding": "valid", "strides": (2, 2),
        "data_format": "channels_last"}
    average = layers.AveragePooling2D(3, strides=1, padding="SAME")
    assert (average.pool_size, average.strides, average.padding) == ((3, 3), (1, 1), "same")
    assert average.name.startswith("average_pooling2d")
    with pytest.raises(TypeError):
        layers.AveragePooling2D()  # pool_size has no default in Keras 3
    assert layers.GlobalMaxPooling2D().get_config()["keepdims"] is False
    assert layers.MaxPool2D is layers.MaxPooling2D and layers.AvgPool2D is layers.AveragePooling2D
    assert layers.GlobalMaxPool2D is layers.GlobalMaxPooling2D
    assert layers.GlobalAvgPool2D is layers.GlobalAveragePooling2D


def test_pooling_values():
    x = RNG.normal(size=(2, 6, 4, 3)).astype(np.float32)
    blocks = x.reshape(2, 3, 2, 2, 2, 3)
    np.testing.assert_array_equal(layers.MaxPooling2D()(x).numpy(), blocks.max((2, 4)))
    np.testing.assert_allclose(layers.AveragePooling2D(2)(x).numpy(), blocks.mean((2, 4)),
                               rtol=1e-6)
    np.testing.assert_array_equal(layers.GlobalMaxPooling2D()(x).numpy(), x.max((1, 2)))
    np.testing.assert_array_equal(
        layers.GlobalMaxPooling2D(data_format="channels_first", keepdims=True)(x).numpy(),
        x.max((2, 3), keepdims=True))
    first = layers.MaxPooling2D(data_format="channels_first")(x.transpose(0, 3, 1, 2))
    np.testing.assert_array_equal(first.numpy(), blocks.max((2, 4)).transpose(0, 3, 1, 2))
    # 'same' on an odd size: the last window reads one row and divides by what it read
    odd = np.arange(1.0, 10.0, dtype=np.float32).reshape(1, 3, 3, 1)
    np.testing.assert_array_equal(
        layers.AveragePooling2D(2, padding="same")(odd).numpy()[0, :, :, 0],
        [[3.0, 4.5], [7.5, 9.0]])


def test_pooling_output_shapes():
    assert layers.MaxPooling2D(3, 2, padding="same").compute_output_shape((None, 7, 7, 3)) == \
        (None, 4, 4, 3)
    assert layers.MaxPooling2D(3, 2).compute_output_shape((None, None, 7, 3)) == \
        (None, None, 3, 3)
    assert layers.MaxPooling2D(3, 1, "same", "channels_first").compute_output_shape(
        (None, 3, 7, 7)) == (None, 3, 7, 7)
    assert layers.GlobalMaxPooling2D().compute_output_shape((None, 4, 4, 6)) == (None, 6)


def test_max_pooling_gradients_reach_the_maximum():
    x = mt.Variable(np.array([[1.0, 2.0], [4.0, 3.0]], np.float32).reshape(1, 2, 2, 1))
    for layer in [layers.MaxPooling2D(), layers.GlobalMaxPooling2D()]:
        with mt.GradientTape() as tape:
            total = mt.reduce_sum(layer(x))
        np.testing.assert_array_equal(tape.gradient(total, x).numpy().reshape(2, 2),
                                      [[0, 0], [1, 0]])


@pytest.mark.parametrize("make, message", [  # Keras 3.15's messages
    (lambda: layers.MaxPooling2D(0), r"The `pool_size` argument must be a tuple of 2 integers. "
                                     r"Received pool_size=0, including values \{0\} that do not "
                                     r"satisfy `value > 0`"),
    (lambda: layers.MaxPooling2D((2,)), r"The `pool_size` argument must be a tuple of 2 "
                                        r"integers. Received pool_size=\(2,\)"),
    (lambda: layers.MaxPooling2D(2, (2,)), r"The `strides` argument must be a tuple of 2 "
                                           r"integers. Received strides=\(2,\)"),
    (lambda: layers.MaxPooling2D(2, padding="foo"), r"Argument `padding` must be either "
                                                    r"'valid' or 'same'. Received: padding=foo"),
    (lambda: layers.AveragePooling2D(2, data_format="foo"),
     r"The `data_format` argument must be one of \{'channels_first', 'channels_last'\}"),
    (lambda: layers.MaxPooling2D()(np.ones((7, 7, 3), np.float32)),
     r"Input 0 with name 'None' of layer 'max_pooling2d\w*' is incompatible with the layer: "
     r"expected ndim=4, found ndim=3. Full shape received: \(7, 7, 3\)"),
    (lambda: layers.GlobalMaxPooling2D()(np.ones((7, 7, 3), np.float32)),
     r"layer 'global_max_pooling2d\w*' is incompatible with the layer: expected ndim=4, found "
     r"ndim=3"),
    (lambda: layers.MaxPooling2D(8)(layers.Input((7, 7, 3))),
     r"Computed output size would be zero or negative. Received: `inputs.shape=\[None 7 7 3\]`, "
     r"`pool_size=\[8 8\]`, `strides=\(8, 8\)`, `padding=valid`."),
])
def test_pooling_refuses_bad_arguments_and_inputs(make, message):
    with pytest.raises(ValueError, match=message):
        make()


# Models

def _cnn():
    """The model of examples/python/train_cnn.py, on 8x8 images of one channel."""
    return keras.Sequential([
        layers.Input(shape=(8, 8, 1)),
        layers.Conv2D(32, 3, activation="relu", padding="same"),
        layers.MaxPooling2D(),
        layers.Conv2D(64, 3, activation="relu"),
        layers.MaxPooling2D(),
        layers.Flatten(),
        layers.Dense(64, activation="relu"),
        layers.Dense(10)])


def test_a_cnn_summary_counts_keras_parameters(capsys):
    model = _cnn()
    model.summary()
    out = capsys.readouterr().out
    # Keras 3.15's summary of the same model
    assert re.search(r"│ conv2d\S* \(Conv2D\) +│ \(None, 8, 8, 32\) +│ +320 │", out)
    assert re.search(r"│ max_pooling2d\S* \(MaxPooling2D\) +│ \(None, 4, 4, 32\) +│ +0 │", out)
    assert re.search(r"│ conv2d\S* \(Conv2D\) +│ \(None, 2, 2, 64\) +│ +18,496 │", out)
    assert re.search(r"│ flatten\S* \(Flatten\) +│ \(None, 64\) +│ +0 │", out)
    assert " Total params: 23,626 (92.29 KB)\n" in out
    assert model.count_params() == 23626


def test_a_long_layer_name_wraps_in_the_summary(capsys):
    inputs = layers.Input((4, 4, 2))
    keras.Model(inputs, layers.AveragePooling2D(2)(inputs)).summary()
    out = capsys.readouterr().out
    assert re.search(r"│ average_pooling2d\S* +│ \(None, 2, 2, 2\) +│ +0 │\n"
                     r"│ \(AveragePooling2D\) +│ +│ +│\n", out)


def test_a_functional_cnn_computes_what_its_layers_do():
    keras.utils.set_random_seed(1)
    inputs = layers.Input((9, 9, 2))
    conv = layers.Conv2D(4, (3, 2), padding="same", activation="relu")
    pool = layers.MaxPooling2D()
    head = layers.Dense(3)
    model = keras.Model(inputs, head(layers.GlobalMaxPooling2D()(pool(conv(inputs)))))
    assert model.compute_output_shape((None, 9, 9, 2)) == (None, 3)
    x = RNG.normal(size=(5, 9, 9, 2)).astype(np.float32)
    by_hand = head(mt.reduce_max(pool(conv(x)), [1, 2]))
    np.testing.assert_allclose(model.predict(x, verbose=0), by_hand.numpy(), rtol=1e-6)


def test_a_cnn_trains():
    keras.utils.set_random_seed(0)
    x = RNG.normal(size=(64, 8, 8, 1)).astype(np.float32)
    y = (x[:, :4].sum((1, 2, 3)) > x[:, 4:].sum((1, 2, 3))).astype(np.int32)  # top vs bottom
    model = _cnn()
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, epochs=15, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.9


def test_a_cnn_weights_file_has_keras_layout_and_loads(tmp_path):
    h5py = pytest.importorskip("h5py")
    keras.utils.set_random_seed(3)
    model = _cnn()
    path = str(tmp_path / "cnn.weights.h5")
    model.save_weights(path)
    with h5py.File(path) as f:
        assert f["layers/conv2d/vars/0"].shape == (3, 3, 1, 32)
        assert f["layers/conv2d_1/vars/0"].shape == (3, 3, 32, 64)
        assert f["layers/conv2d_1/vars/1"].shape == (64,)
        assert "layers/max_pooling2d_1/vars" in f and "layers/dense_1/vars/1" in f
    keras.utils.set_random_seed(4)
    other = _cnn()
    x = RNG.normal(size=(3, 8, 8, 1)).astype(np.float32)
    assert not np.allclose(other.predict(x, verbose=0), model.predict(x, verbose=0))
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))
