"""Keras's BatchNormalization: Keras 3's arguments, weights (names, order, trainable), the
training= modes, the moving statistics after fit steps against Keras 3's formula, their
update on every call of an mt.function, both code paths (FusedBatchNormV3 for 4-D inputs,
the composite otherwise), .weights.h5 files both ways and a TensorFlow-written model
(fixtures/keras/write_bn_with_tensorflow.py) that predicts the same here; with TensorFlow
importable (or MT_TF_PYTHON naming a Python that has it), a model trained here predicts the
same there, and one more epoch there (batch statistics, moving averages, Adam) equals one
more here (SGD)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras
layers = keras.layers
RNG = np.random.default_rng(2)
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras")


def _reference(x, mean, var, gamma, beta, eps, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    r = lambda v: np.reshape(v, shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(gamma) + r(beta)


def test_defaults_weights_and_config_follow_keras():
    bn = layers.BatchNormalization()
    y = bn(np.ones((2, 3, 3, 4), np.float32))
    assert y.shape == (2, 3, 3, 4)
    assert bn.name.startswith("batch_normalization")
    assert [w.name.split("/")[-1] for w in bn.weights] == ["gamma:0", "beta:0", "moving_mean:0",
                                                           "moving_variance:0"]
    assert [w.trainable for w in bn.weights] == [True, True, False, False]
    assert len(bn.trainable_weights) == 2 and len(bn.non_trainable_weights) == 2
    config = bn.get_config()
    assert (config["axis"], config["momentum"], config["epsilon"]) == (3, 0.99, 0.001)
    assert config["center"] and config["scale"]


@pytest.mark.parametrize("shape,axis", [((4, 3, 5, 6), -1), ((4, 6, 3, 5), 1),
                                        ((8, 5), -1), ((4, 3, 5), 1)])
def test_training_uses_the_batch_and_inference_the_moving_statistics(shape, axis):
    x = RNG.normal(size=shape).astype(np.float32) * 3 + 1
    bn = layers.BatchNormalization(axis=axis, momentum=0.9, epsilon=0.01)
    bn(x)  # builds
    channels = shape[axis]
    gamma, beta = RNG.uniform(0.5, 2, channels), RNG.normal(size=channels)
    bn.gamma.assign(gamma.astype(np.float32))
    bn.beta.assign(beta.astype(np.float32))
    axes = tuple(a for a in range(len(shape)) if a != axis % len(shape))
    mean, var = x.mean(axes, dtype=np.float64), x.var(axes, dtype=np.float64)
    y = bn(x, training=True)
    np.testing.assert_allclose(y.numpy(), _reference(x, mean, var, gamma, beta, 0.01, axis),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * var, rtol=1e-5)
    moving_mean, moving_var = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    y = bn(x)  # inference: the moving statistics, unchanged
    np.testing.assert_allclose(
        y.numpy(), _reference(x, moving_mean, moving_var, gamma, beta, 0.01, axis), rtol=1e-4,
        atol=1e-4)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), moving_mean)


def test_a_frozen_layer_uses_the_moving_statistics_in_training():
    x = RNG.normal(size=(4, 2, 2, 3)).astype(np.float32) + 2
    bn = layers.BatchNormalization()
    bn(x)
    bn.trainable = False
    y = bn(x, training=True)
    np.testing.assert_allclose(y.numpy(), x / np.sqrt(1.001), rtol=1e-5)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), np.zeros(3))


def test_fit_updates_the_moving_statistics_by_keras_formula():
    # BatchNormalization on the input: each step's batch statistics are the data's, so
    # the moving averages follow Keras 3's formula over the batches in order.
    x = RNG.normal(size=(12, 3, 3, 2)).astype(np.float32) * 2 + 1
    y = RNG.normal(size=(12, 1)).astype(np.float32)
    model = keras.Sequential([layers.Input(shape=(3, 3, 2)),
                              layers.BatchNormalization(momentum=0.8),
                              layers.Flatten(), layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
    mean, var = np.zeros(2), np.ones(2)
    for _ in range(2):
        for b in range(3):
            batch = x[4 * b:4 * b + 4]
            mean = mean * 0.8 + batch.mean((0, 1, 2)) * 0.2
            var = var * 0.8 + batch.var((0, 1, 2)) * 0.2
    bn = model.layers[0]
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), var, rtol=1e-5)
    # gamma and beta were trained; predict and evaluate leave the statistics alone.
    assert not np.allclose(bn.gamma.numpy(), 1)
    model.predict(x, verbose=0)
    model.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean, rtol=1e-5, atol=1e-6)


def test_a_function_updates_the_moving_statistics_on_every_call():
    x = RNG.normal(size=(6, 2, 2, 3)).astype(np.float32) + 1
    bn = layers.BatchNormalization(momentum=0.5)
    bn(x)
    step = mt.function(lambda t: bn(t, training=True))
    xt = mt.constant(x)
    for _ in range(3):
        step(xt)
    mean = x.mean((0, 1, 2))
    np.testing.assert_allclose(bn.moving_mean.numpy(), mean * (1 - 0.5 ** 3), rtol=1e-5)
    assert step.experimental_get_tracing_count() == 1


def test_gradients_reach_gamma_beta_and_the_input():
    x = mt.constant(RNG.normal(size=(4, 2, 2, 3)).astype(np.float32))
    bn = layers.BatchNormalization()
    bn(x)
    with mt.GradientTape() as tape:
        tape.watch(x)
        loss = mt.reduce_sum(mt.square(bn(x, training=True)) * np.arange(3, dtype=np.float32))
    grads = tape.gradient(loss, [x, bn.gamma, bn.beta])
    assert all(g is not None for g in grads)
    assert grads[0].shape == x.shape and grads[1].shape == (3,)


def test_two_byte_float_inputs_normalise_in_float32():
    x = RNG.normal(size=(4, 2, 2, 3)).astype(np.float32)
    bn = layers.BatchNormalization(dtype="float16")
    y = bn(x.astype(np.float16), training=True)
    assert y.dtype == mt.float16
    mean, var = x.astype(np.float16).astype(np.float32).mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(mt.cast(y, mt.float32).numpy(),
                               (x - mean) / np.sqrt(var + 1e-3), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"axis": [1, 2]}, TypeError, "Expected an int"),
    ({"renorm": True}, NotImplementedError, "renorm"),
    ({"synchronized": True}, NotImplementedError, "synchronized"),
])
def test_refuses_what_it_does_not_have(kwargs, error, message):
    with pytest.raises(error, match=message):
        layers.BatchNormalization(**kwargs)


def test_an_axis_outside_the_input_is_a_value_error():
    with pytest.raises(ValueError, match="Invalid axis"):
        layers.BatchNormalization(axis=4)(np.ones((2, 3), np.float32))


def _bn_cnn(seed=0):
    """The model of fixtures/keras/write_bn_with_tensorflow.py."""
    keras.utils.set_random_seed(seed)
    return keras.Sequential([layers.Input(shape=(6, 6, 2)),
                             layers.Conv2D(3, 3, padding="same"),
                             layers.BatchNormalization(momentum=0.8),
                             layers.ReLU(), layers.Flatten(), layers.Dense(4),
                             layers.BatchNormalization(epsilon=0.01), layers.Dense(2)])


def test_a_weights_file_has_keras_layout_and_loads(tmp_path):
    h5py = pytest.importorskip("h5py")
    model = _bn_cnn(1)
    x = RNG.normal(size=(6, 6, 6, 2)).astype(np.float32)
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    model.fit(x, RNG.normal(size=(6, 2)).astype(np.float32), epochs=2, batch_size=3, verbose=0)
    path = str(tmp_path / "bn.weights.h5")
    model.save_weights(path)
    with h5py.File(path) as f:
        assert f["layers/batch_normalization/vars/2"].shape == (3,)
        assert f["layers/batch_normalization_1/vars/3"].shape == (4,)
    other = _bn_cnn(2)
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))


def test_a_tensorflow_batch_norm_model_loads_and_predicts_the_same():
    pytest.importorskip("h5py")
    with open(os.path.join(FIXTURES, "bn_expected.json")) as f:
        expected = json.load(f)
    x = np.asarray(expected["x"], np.float32)
    model = _bn_cnn(3)
    model.load_weights(os.path.join(FIXTURES, "tf_bn.weights.h5"))
    bn = [layer for layer in model.layers if isinstance(layer, layers.BatchNormalization)]
    for layer, mean, var in zip(bn, expected["moving_mean"], expected["moving_variance"]):
        np.testing.assert_array_equal(layer.moving_mean.numpy(), np.float32(mean))
        np.testing.assert_array_equal(layer.moving_variance.numpy(), np.float32(var))
    np.testing.assert_allclose(model.predict(x, verbose=0), expected["predictions"], rtol=1e-5,
                               atol=1e-5)


_TF_BN = r"""
import sys, numpy as np, keras
x, y = np.load(sys.argv[1]), np.load(sys.argv[2])
L = keras.layers
m = keras.Sequential([L.Input(shape=(6, 6, 2)), L.Conv2D(3, 3, padding="same"),
                      L.BatchNormalization(momentum=0.8), L.ReLU(), L.Flatten(), L.Dense(4),
                      L.BatchNormalization(epsilon=0.01), L.Dense(2)])
m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
m.optimizer.build(m.trainable_variables)
m.load_weights(sys.argv[3])
np.save(sys.argv[4], m.predict(x, verbose=0))
m.fit(x, y, epochs=1, verbose=0)
np.save(sys.argv[5], m.predict(x, verbose=0))
np.save(sys.argv[6], np.concatenate([np.asarray(l.moving_variance) for l in m.layers
                                     if isinstance(l, L.BatchNormalization)]))
"""


def _tensorflow_python():
    try:
        import tensorflow  # noqa: F401
        return sys.executable
    except ImportError:
        return os.environ.get("MT_TF_PYTHON")


def test_a_model_trained_here_loads_and_trains_on_in_tensorflow(tmp_path):
    python = _tensorflow_python()
    if python is None:
        pytest.skip("TensorFlow is not importable and MT_TF_PYTHON is not set")
    pytest.importorskip("h5py")
    x = RNG.normal(size=(6, 6, 6, 2)).astype(np.float32)
    y = RNG.normal(size=(6, 2)).astype(np.float32)
    # SGD, not Adam: the biases before each BatchNormalization have gradients that are zero
    # but for rounding, which Adam would scale up to whole steps differing by library.
    model = _bn_cnn(4)
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse")
    model.fit(x, y, epochs=3, verbose=0)
    files = [str(tmp_path / name) for name in
             ("x.npy", "y.npy", "bn.weights.h5", "before.npy", "after.npy", "var.npy")]
    np.save(files[0], x)
    np.save(files[1], y)
    model.save_weights(files[2])
    done = subprocess.run([python, "-c", _TF_BN, *files], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    np.testing.assert_allclose(np.load(files[3]), model.predict(x, verbose=0), rtol=1e-5,
                               atol=1e-5)
    model.fit(x, y, epochs=1, verbose=0)  # one batch: its order does not matter
    np.testing.assert_allclose(np.load(files[4]), model.predict(x, verbose=0), rtol=1e-4,
                               atol=1e-4)
    variances = np.concatenate([layer.moving_variance.numpy() for layer in model.layers
                                if isinstance(layer, layers.BatchNormalization)])
    np.testing.assert_allclose(np.load(files[5]), variances, rtol=1e-4, atol=1e-6)
