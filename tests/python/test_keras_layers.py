"""The layers of mt.keras.layers beside Dense: values against NumPy, gradients, Keras 3's
defaults and messages (TensorFlow 2.21 / Keras 3.15), and how ``training=`` reaches
them from fit, evaluate, predict and calls."""

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras
layers = keras.layers
RNG = np.random.default_rng(0)


# training= is passed down

class _Probe(layers.Layer):
    """Records the training mode each call received."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def call(self, inputs, training=None):
        self.seen.append(training)
        return inputs

    def compute_output_shape(self, input_shape):
        return input_shape


def test_training_reaches_nested_layers_from_fit_evaluate_predict_and_calls():
    probe = _Probe()
    inner = keras.Sequential([probe])
    model = keras.Sequential([layers.Input(shape=(2,)), inner, layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    model.fit(x, y, batch_size=4, verbose=0)
    model.evaluate(x, y, verbose=0)
    model.predict(x, verbose=0)
    model(x)
    model(x, training=True)
    assert probe.seen == [True, False, False, None, True]


def test_a_subclassed_models_layers_inherit_the_mode_of_its_call():
    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.probe = _Probe()
            self.dropout = layers.Dropout(0.5, seed=1)

        def call(self, x):  # no training argument: the layers inside inherit the mode
            return self.dropout(self.probe(x))

    net = Net()
    x = np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(net(x).numpy(), x)
    dropped = net(x, training=True).numpy()
    assert net.probe.seen == [None, True]
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0 < (dropped == 0).sum() < 32


def test_a_layers_own_training_argument_wins_over_the_enclosing_mode():
    probe = _Probe()

    class Net(keras.Model):
        def call(self, x, training=None):
            return probe(x, training=False)

    Net()(np.ones((1, 1), np.float32), training=True)
    assert probe.seen == [False]


# Flatten and Reshape

def test_flatten_keeps_the_batch_and_joins_the_rest():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(layers.Flatten()(x).numpy(), x.reshape(2, 12))
    assert layers.Flatten()(np.ones(3, np.float32)).shape == (3, 1)
    # channels_first moves the channels last first (Keras 3.15's order)
    np.testing.assert_array_equal(layers.Flatten(data_format="channels_first")(x).numpy()[0],
                                  [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11])
    assert layers.Flatten().compute_output_shape((None, 3, 4)) == (None, 12)
    assert layers.Flatten().get_config()["data_format"] == "channels_last"


def test_flatten_refuses_an_unknown_data_format():
    with pytest.raises(ValueError, match=r"The `data_format` argument must be one of "
                                         r"\{'channels_first', 'channels_last'\}. Received: "
                                         "data_format=foo"):
        layers.Flatten(data_format="foo")


def test_reshape_infers_its_minus_one_and_keeps_the_batch():
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    out = layers.Reshape((-1, 2))(x)
    np.testing.assert_array_equal(out.numpy(), x.reshape(2, 4, 2))
    assert layers.Reshape((2, 4)).compute_output_shape((None, 8)) == (None, 2, 4)
    model = keras.Sequential([layers.Input(shape=(8,)), layers.Reshape((-1, 4))])
    assert model.compute_output_shape((None, 8)) == (None, 2, 4)


@pytest.mark.parametrize("target, message", [  # Keras 3.15's messages
    ((5,), r"The total size of the tensor must be unchanged. Received: input_shape=\(3,\), "
           r"target_shape=\(5,\)"),
    ((-1, 2), r"The total size of the tensor must be unchanged. Received: input_shape=\(3,\), "
              r"target_shape=\(-1, 2\)"),
])
def test_reshape_refuses_another_size(target, message):
    with pytest.raises(ValueError, match=message):
        layers.Reshape(target)(np.ones((2, 3), np.float32))


def test_reshape_refuses_two_unknown_dimensions():
    with pytest.raises(ValueError, match=r"There must be at most one unknown dimension \(-1\) "
                                         r"in `target_shape`. Received: target_shape=\(-1, -1\)."):
        layers.Reshape((-1, -1))


# Dropout

def test_dropout_is_inactive_outside_training():
    x = RNG.normal(size=(8, 16)).astype(np.float32)
    layer = layers.Dropout(0.5)
    np.testing.assert_array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    np.testing.assert_array_equal(layers.Dropout(0.0)(x, training=True).numpy(), x)


def test_dropout_zeroes_about_rate_and_scales_the_rest():
    x = np.ones((100, 100), np.float32)
    out = layers.Dropout(0.2, seed=3)(x, training=True).numpy()
    kept = out != 0
    assert abs(1 - kept.mean() - 0.2) < 0.02
    np.testing.assert_allclose(out[kept], 1 / 0.8)
    np.testing.assert_array_equal(layers.Dropout(1.0)(x, training=True).numpy(), 0 * x)


def test_dropout_masks_repeat_for_a_seed_and_change_between_calls():
    x = np.ones((4, 32), np.float32)
    first, second = layers.Dropout(0.5, seed=7), layers.Dropout(0.5, seed=7)
    a1, a2 = first(x, training=True).numpy(), first(x, training=True).numpy()
    b1, b2 = second(x, training=True).numpy(), second(x, training=True).numpy()
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    assert not np.array_equal(a1, a2)
    keras.utils.set_random_seed(5)
    c = layers.Dropout(0.5)(x, training=True).numpy()
    keras.utils.set_random_seed(5)
    np.testing.assert_array_equal(layers.Dropout(0.5)(x, training=True).numpy(), c)


def test_dropout_noise_shape_shares_the_mask_along_dimensions_of_one():
    out = layers.Dropout(0.5, noise_shape=(None, 1), seed=3)(np.ones((64, 3), np.float32),
                                                              training=True).numpy()
    assert (out == out[:, :1]).all() and 0 < (out[:, 0] == 0).sum() < 64


def test_dropout_gradient_is_the_mask_over_keep_probability():
    x = mt.Variable(np.ones((8, 8), np.float32))
    layer = layers.Dropout(0.25, seed=2)
    with mt.GradientTape() as tape:
        out = layer(x, training=True)
        total = mt.reduce_sum(out)
    np.testing.assert_allclose(tape.gradient(total, x).numpy(), out.numpy())


@pytest.mark.parametrize("rate", [1.5, -0.1, "a"])
def test_dropout_refuses_a_rate_outside_zero_one(rate):
    with pytest.raises(ValueError, match=r"Invalid value received for argument `rate`. Expected "
                                         f"a float value between 0 and 1. Received: rate={rate}"):
        layers.Dropout(rate)


def test_a_function_with_dropout_runs_eagerly_so_masks_change():
    layer = layers.Dropout(0.5, seed=1)

    @mt.function
    def step(x):
        return layer(x, training=True)

    x = mt.ones([4, 32])
    assert not np.array_equal(step(x).numpy(), step(x).numpy())


# Softmax, Activation and ReLU

def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def test_softmax_layer_over_an_axis_several_axes_and_a_mask():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(layers.Softmax()(x).numpy(), _softmax(x), rtol=1e-6)
    np.testing.assert_allclose(layers.Softmax(axis=1)(x).numpy(), _softmax(x, 1), rtol=1e-6)
    flat = _softmax(x.reshape(2, 12)).reshape(2, 3, 4)
    np.testing.assert_allclose(layers.Softmax(axis=(1, 2))(x).numpy(), flat, rtol=1e-5)
    mask = np.array([[1, 1, 0, 1]] * 3 * 2, np.float32).reshape(2, 3, 4)
    masked = layers.Softmax()(x, mask=mask).numpy()
    expected = np.where(mask > 0, np.exp(x), 0)
    np.testing.assert_allclose(masked, expected / expected.sum(-1, keepdims=True), rtol=1e-5)
    assert layers.Softmax().get_config()["axis"] == -1


def test_activation_layer_takes_names_callables_and_none():
    x = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(layers.Activation("relu")(x).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(layers.Activation("gelu")(x).numpy(),
                               mt.nn.gelu(x).numpy())
    np.testing.assert_allclose(layers.Activation(mt.tanh)(x).numpy(), np.tanh(x), rtol=1e-6)
    np.testing.assert_array_equal(layers.Activation(None)(x).numpy(), x)
    with pytest.raises(ValueError, match="Could not interpret activation function identifier: "
                                         "foo"):
        layers.Activation("foo")


def test_relu_layer_with_keras_arguments():
    x = np.array([-2, 0, 0.5, 1, 2, 7], np.float32)
    np.testing.assert_array_equal(layers.ReLU()(x).numpy(), np.maximum(x, 0))
    # Keras 3.15: ReLU(max_value=6, negative_slope=0.1, threshold=1.0) on the same x
    np.testing.assert_allclose(layers.ReLU(max_value=6, negative_slope=0.1, threshold=1.0)(x)
                               .numpy(), [-0.3, -0.1, -0.05, 0.0, 2.0, 6.0], rtol=1e-6)
    np.testing.assert_allclose(layers.ReLU(max_value=1.5)(x).numpy(), np.clip(x, 0, 1.5))
    assert layers.ReLU().get_config()["negative_slope"] == 0.0


@pytest.mark.parametrize("kwargs, message", [  # Keras 3.15's messages
    ({"max_value": -1}, "max_value of a ReLU layer cannot be a negative value. Received: "
                        "max_value=-1"),
    ({"negative_slope": -1}, "negative_slope of a ReLU layer cannot be None or a negative "
                             "value. Received: negative_slope=-1"),
    ({"negative_slope": None}, "negative_slope of a ReLU layer cannot be None or a negative "
                               "value. Received: negative_slope=None"),
    ({"threshold": -1}, "threshold of a ReLU layer cannot be None or a negative value. "
                        "Received: threshold=-1"),
])
def test_relu_layer_refuses_negative_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        layers.ReLU(**kwargs)


def test_activations_by_name():
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    for name in ["elu", "exponential", "gelu", "leaky_relu", "linear", "log_softmax", "relu",
                 "relu6", "sigmoid", "silu", "softmax", "softplus", "swish", "tanh"]:
        assert keras.activations.get(name)(x).shape == (3,)
    np.testing.assert_allclose(keras.activations.elu(x, alpha=2.0).numpy(),
                               [2 * np.expm1(-1.0), 0.0, 2.0], rtol=1e-6)
    np.testing.assert_allclose(keras.activations.leaky_relu(x).numpy(), [-0.2, 0.0, 2.0])


# A Sequential of models

def test_a_sequential_takes_a_model_as_a_layer():
    keras.utils.set_random_seed(0)
    model = keras.Sequential([layers.Flatten(input_shape=(2, 2)), layers.Dense(3)])
    probability_model = keras.Sequential([model, layers.Softmax()])
    assert probability_model.built and len(probability_model.weights) == 2
    x = RNG.normal(size=(5, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(probability_model(x).numpy(), _softmax(model(x).numpy()),
                               rtol=1e-6)
    np.testing.assert_allclose(probability_model.predict(x, verbose=0),
                               _softmax(model.predict(x, verbose=0)), rtol=1e-6)
    assert probability_model.count_params() == 15


def test_a_sequential_builds_a_functional_model_it_starts_with():
    inputs = layers.Input(shape=(3,))
    functional = keras.Model(inputs, layers.Dense(2)(inputs))
    stacked = keras.Sequential([functional, layers.Activation("relu")])
    assert stacked.built
    assert stacked.compute_output_shape((None, 3)) == (None, 2)
