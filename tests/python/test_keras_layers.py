"""The layers of mt.keras.layers beside Dense: values against NumPy, gradients, Keras 3's
defaults and messages (TensorFlow 2.21 / Keras 3.15), and how ``training=`` reaches
them from fit, evaluate, predict and calls."""

import numpy as np
import pytest

import minitensor as mt
from conftest import raises_at_call_or_first_read

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


def test_a_layer_built_by_hand_is_not_built_again():
    dense = layers.Dense(2)
    dense.build((None, 3))
    kernel = dense.kernel
    dense(np.ones((1, 3), np.float32))
    assert dense.built and dense.kernel is kernel and len(dense.weights) == 2


def test_layer_names_follow_keras():
    assert layers.ReLU().name.startswith("re_lu")
    assert layers.GlobalAveragePooling2D().name.startswith("global_average_pooling2d")
    assert layers.LayerNormalization().name.startswith("layer_normalization")


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


# Add and Concatenate

def test_add_sums_a_list_with_broadcasting():
    a, b = RNG.normal(size=(2, 3)).astype(np.float32), RNG.normal(size=(2, 1)).astype(np.float32)
    np.testing.assert_allclose(layers.Add()([a, b, a]).numpy(), a + b + a, rtol=1e-6)
    np.testing.assert_array_equal(layers.Add()([a]).numpy(), a)
    assert layers.Add().compute_output_shape([(None, 3), (None, 1)]) == (None, 3)


@pytest.mark.parametrize("inputs, message", [  # Keras 3.15's messages
    (np.ones((2, 3), np.float32), r"A merge layer should be called on a list of inputs. "
                                  r"Received: input_shape=\(2, 3\) \(not a list of shapes\)"),
    ([np.ones((2, 3), np.float32), np.ones((2, 4), np.float32)],
     r"Inputs have incompatible shapes. Received shapes \(3,\) and \(4,\)"),
    ([np.ones((2, 3), np.float32), np.ones((3, 3), np.float32)],
     "Cannot merge tensors with different batch sizes"),
])
def test_add_refuses_what_does_not_merge(inputs, message):
    with pytest.raises(ValueError, match=message):
        layers.Add()(inputs)


def test_concatenate_joins_along_an_axis():
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 4), np.float32)
    np.testing.assert_array_equal(layers.Concatenate()([a, b]).numpy(),
                                  np.concatenate([a, b], -1))
    np.testing.assert_array_equal(layers.Concatenate(axis=0)([a, a]).numpy(),
                                  np.concatenate([a, a], 0))
    assert layers.Concatenate().compute_output_shape([(None, 3), (None, 4)]) == (None, 7)
    assert layers.Concatenate().get_config()["axis"] == -1


@pytest.mark.parametrize("inputs, message", [  # Keras 3.15's messages
    ([np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)],
     r"A `Concatenate` layer requires inputs with matching shapes except for the "
     r"concatenation axis. Received: input_shape=\[\(2, 3\), \(3, 4\)\]"),
    (np.ones((2, 3), np.float32), r"A `Concatenate` layer should be called on a list of at "
                                  r"least 1 input. Received: input_shape=\(2, 3\)"),
])
def test_concatenate_refuses_shapes_that_differ_elsewhere(inputs, message):
    with pytest.raises(ValueError, match=message):
        layers.Concatenate()(inputs)


def test_merge_layers_in_a_functional_model_train():
    keras.utils.set_random_seed(2)
    inputs = layers.Input(shape=(4,))
    left, right = layers.Dense(8, activation="relu")(inputs), layers.Dense(8)(inputs)
    joined = layers.Concatenate()([layers.Add()([left, right]), inputs])
    model = keras.Model(inputs, layers.Dense(1)(joined))
    assert model.compute_output_shape((None, 4)) == (None, 1)
    x = RNG.normal(size=(64, 4)).astype(np.float32)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    history = model.fit(x, x.sum(1, keepdims=True), epochs=20, verbose=0)
    assert history.history["loss"][-1] < 0.05 * history.history["loss"][0]


# GlobalAveragePooling2D

def test_global_average_pooling_means_the_spatial_axes():
    x = RNG.normal(size=(2, 3, 4, 5)).astype(np.float32)
    # (float32 sums in another order, as a GPU's: a mean near 0 differs by a few ulps of
    # the terms, hence the absolute tolerance)
    np.testing.assert_allclose(layers.GlobalAveragePooling2D()(x).numpy(), x.mean((1, 2)),
                               rtol=1e-6, atol=1e-6)
    first = layers.GlobalAveragePooling2D(data_format="channels_first", keepdims=True)(x)
    np.testing.assert_allclose(first.numpy(), x.mean((2, 3), keepdims=True), rtol=1e-6,
                               atol=1e-6)
    assert layers.GlobalAveragePooling2D().compute_output_shape((None, 3, 4, 5)) == (None, 5)
    assert layers.GlobalAveragePooling2D(keepdims=True).compute_output_shape(
        (None, 3, 4, 5)) == (None, 1, 1, 5)


def test_global_average_pooling_refuses_another_rank():
    with pytest.raises(ValueError, match=r"Input 0 with name 'None' of layer "
                                         r"'global_average_pooling2d\w*' is incompatible with "
                                         r"the layer: expected ndim=4, found ndim=2. Full shape "
                                         r"received: \(2, 3\)"):
        layers.GlobalAveragePooling2D()(np.ones((2, 3), np.float32))


# Embedding

def test_embedding_looks_up_rows_of_its_table():
    keras.utils.set_random_seed(0)
    layer = layers.Embedding(10, 3)
    out = layer(np.array([[1, 2], [9, 1]]))
    table = layer.embeddings.numpy()
    assert out.shape == (2, 2, 3) and out.dtype == mt.float32
    np.testing.assert_array_equal(out.numpy(), table[[[1, 2], [9, 1]]])
    assert table.shape == (10, 3) and np.abs(table).max() <= 0.05  # RandomUniform(-0.05, 0.05)
    np.testing.assert_array_equal(layer(np.array([1.7])).numpy(), table[[1]])  # cast to int32
    assert layer.compute_output_shape((None, 7)) == (None, 7, 3)
    assert layer.get_config()["input_dim"] == 10


def test_embedding_gradient_reaches_the_rows_used():
    layer = layers.Embedding(4, 2, embeddings_initializer="zeros")
    layer.build((None,))
    with mt.GradientTape() as tape:
        total = mt.reduce_sum(layer(np.array([0, 3, 0])))
    grad = tape.gradient(total, layer.embeddings).numpy()
    np.testing.assert_array_equal(grad, [[2, 2], [0, 0], [0, 0], [1, 1]])


@pytest.mark.parametrize("args, message", [  # Keras 3.15's messages
    ((0, 3), r"`input_dim` must be a positive integer. Received: input_dim=0 \(of type int\)."),
    ((10, 0), r"`output_dim` must be a positive integer. Received: output_dim=0 \(of type "
              r"int\)."),
    ((10, 2.5), r"`output_dim` must be a positive integer. Received: output_dim=2.5 \(of type "
                r"float\)."),
])
def test_embedding_refuses_bad_dimensions(args, message):
    with pytest.raises(ValueError, match=message):
        layers.Embedding(*args)


def test_embedding_errors_on_ids_and_masks():
    raises_at_call_or_first_read(mt.errors.InvalidArgumentError,
                                 r"indices\[0,0\] = 11 is not in \[0, 10\)",
                                 lambda: layers.Embedding(10, 3)(np.array([[11]])))
    with pytest.raises(ValueError, match="mask_zero=True"):
        layers.Embedding(10, 3, mask_zero=True)


# LayerNormalization

def _layer_norm(x, axes, epsilon=1e-3):
    mean = x.mean(axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axes, keepdims=True) + epsilon)


def test_layer_normalization_matches_numpy_and_keras():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(layers.LayerNormalization()(x).numpy(), _layer_norm(x, -1),
                               rtol=1e-5, atol=1e-6)
    layer = layers.LayerNormalization(axis=[1, 2], epsilon=1e-6)
    np.testing.assert_allclose(layer(x).numpy(), _layer_norm(x, (1, 2), 1e-6), rtol=1e-5,
                               atol=1e-6)
    assert [w.shape for w in layer.weights] == [(3, 4), (3, 4)]
    # Keras 3.15: LayerNormalization(axis=[0, 1], center=False) on [[1, 2, 4], [0, -1, 3]]
    out = layers.LayerNormalization(axis=[0, 1], center=False)(
        np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]], np.float32))
    np.testing.assert_allclose(out.numpy(), [[-0.29271984, 0.29271984, 1.4635992],
                                             [-0.8781595, -1.4635992, 0.8781595]], rtol=1e-5)


def test_layer_normalization_scales_shifts_and_differentiates():
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    layer = layers.LayerNormalization()
    layer.build(x.shape)
    gamma, beta = RNG.normal(size=4).astype(np.float32), RNG.normal(size=4).astype(np.float32)
    layer.set_weights([gamma, beta])
    np.testing.assert_allclose(layer(x).numpy(), _layer_norm(x, -1) * gamma + beta, rtol=1e-5,
                               atol=1e-5)
    v = mt.Variable(x)
    weights = RNG.normal(size=x.shape).astype(np.float32)
    with mt.GradientTape() as tape:
        total = mt.reduce_sum(layer(v) * weights)
    grad_x, grad_gamma = tape.gradient(total, [v, layer.gamma])
    np.testing.assert_allclose(grad_gamma.numpy(), (_layer_norm(x, -1) * weights).sum(0),
                               rtol=1e-4, atol=1e-5)
    step, numeric = 1e-3, np.zeros_like(x, np.float64)
    for i in np.ndindex(x.shape):
        up, down = x.astype(np.float64), x.astype(np.float64)
        up[i] += step
        down[i] -= step
        numeric[i] = (((_layer_norm(up, -1) - _layer_norm(down, -1)) * gamma * weights).sum()
                      / (2 * step))
    np.testing.assert_allclose(grad_x.numpy(), numeric, rtol=2e-3, atol=2e-3)


def test_layer_normalization_without_center_or_scale_and_in_half_precision():
    layer = layers.LayerNormalization(center=False, scale=False)
    assert layer(np.ones((2, 3), np.float32)).shape == (2, 3) and layer.weights == []
    half = layers.LayerNormalization(dtype="float16")
    x = RNG.normal(size=(2, 8)).astype(np.float16)
    out = half(x)
    assert out.dtype == mt.float16
    np.testing.assert_allclose(out.numpy(), _layer_norm(x.astype(np.float32), -1), atol=2e-3)


def test_layer_normalization_refuses_bad_axes():
    with pytest.raises(TypeError, match="Expected an int or a list/tuple of ints for the "
                                        "argument 'axis', but received: 'a'"):
        layers.LayerNormalization(axis="a")
    with pytest.raises(ValueError, match=r"Invalid axis. Expected 0 <= axis < inputs.rank "
                                         r"\(with inputs.rank=2\). Received: layer.axis=\[3\]"):
        layers.LayerNormalization(axis=3)(np.ones((2, 3), np.float32))


# Initializers

def test_random_initializers_with_keras_defaults():
    init = keras.initializers.get("uniform")
    assert isinstance(init, keras.initializers.RandomUniform)
    assert init.get_config() == {"seed": None, "minval": -0.05, "maxval": 0.05}
    assert keras.initializers.get("normal").get_config() == {"seed": None, "mean": 0.0,
                                                            "stddev": 0.05}
    seeded = keras.initializers.TruncatedNormal(seed=3)
    values = seeded((1000,)).numpy()
    np.testing.assert_array_equal(values, seeded((1000,)).numpy())
    assert np.abs(values).max() <= 0.1 and abs(values.std() - 0.044) < 0.005
    normal = keras.initializers.RandomNormal(mean=1.0, stddev=0.5)((4000,)).numpy()
    assert abs(normal.mean() - 1.0) < 0.05 and abs(normal.std() - 0.5) < 0.05
