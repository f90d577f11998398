"""Keras's MultiHeadAttention and EinsumDense: values, attention masks (a fully masked query
row), causal masks, scores and gradients against Keras 3's own numbers
(fixtures/keras/write_mha_with_tensorflow.py), a TensorFlow-written weights file that
predicts the same here, the weights file's sublayer names, checkpoints, mt.function, and
bad arguments."""

import json
import os

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras
layers = keras.layers
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras")
with open(os.path.join(FIXTURES, "mha_expected.json")) as _f:
    EXPECTED = json.load(_f)


def _array(name):
    return np.asarray(EXPECTED[name], np.float32)


def _fixed_layer():
    """The layer of the fixture's second part, with its weights."""
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2, output_shape=3)
    mha(_array("q"), _array("v"), _array("k"))
    mha.set_weights([np.asarray(w, np.float32) for w in EXPECTED["weights"]])
    return mha


def _attention_model(seed=0):
    """The model of fixtures/keras/write_mha_with_tensorflow.py."""
    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(4, 5))
    h = layers.Dense(6)(inputs)
    a = layers.MultiHeadAttention(num_heads=2, key_dim=3)(h, h, use_causal_mask=True)
    h = layers.Flatten()(layers.Add()([h, a]))
    return keras.Model(inputs, layers.Dense(2)(h))


def test_values_scores_and_masks_are_keras_s():
    mha = _fixed_layer()
    out, scores = mha(_array("q"), _array("v"), _array("k"), attention_mask=EXPECTED["mask"],
                      return_attention_scores=True)
    np.testing.assert_allclose(out.numpy(), _array("output"), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(scores.numpy(), _array("scores"), rtol=1e-5, atol=1e-6)
    assert scores.shape == (2, 2, 3, 5)  # (batch, heads, queries, values)
    np.testing.assert_array_equal(scores.numpy()[1, :, 2], 0)  # the fully masked row
    causal = mha(_array("q"), _array("q"), use_causal_mask=True)
    np.testing.assert_allclose(causal.numpy(), _array("causal"), rtol=1e-5, atol=1e-6)


def test_gradients_are_keras_s():
    mha = _fixed_layer()
    with mt.GradientTape() as tape:
        y = mha(_array("q"), _array("v"), _array("k"), attention_mask=EXPECTED["mask"])
        loss = mt.reduce_sum(y * y)
    grads = tape.gradient(loss, mha.trainable_variables)
    assert len(grads) == 8
    for got, want in zip(grads, EXPECTED["grads"]):
        np.testing.assert_allclose(got.numpy(), np.float32(want), rtol=1e-4, atol=1e-5)


def test_weights_are_the_four_projections_in_keras_s_order():
    mha = _fixed_layer()
    names = [w.name.split(":")[0] for w in mha.weights]
    assert names == [f"multi_head_attention{names[0][20:].split('/')[0]}/{p}/{v}"
                     for p in ("query", "key", "value", "attention_output")
                     for v in ("kernel", "bias")]
    assert [tuple(w.shape) for w in mha.weights] == [
        (4, 2, 3), (2, 3), (4, 2, 3), (2, 3), (4, 2, 2), (2, 2), (2, 2, 3), (3,)]
    assert mha.count_params() == sum(int(np.prod(w.shape)) for w in mha.weights)
    without_bias = layers.MultiHeadAttention(num_heads=2, key_dim=3, use_bias=False)
    without_bias(_array("q"), _array("v"))
    assert [tuple(w.shape) for w in without_bias.weights] == [
        (4, 2, 3), (4, 2, 3), (4, 2, 3), (2, 3, 4)]


def test_a_tensorflow_attention_model_loads_and_predicts_the_same():
    pytest.importorskip("h5py")
    model = _attention_model(3)
    model.load_weights(os.path.join(FIXTURES, "tf_mha.weights.h5"))
    np.testing.assert_allclose(model.predict(_array("x"), verbose=0), _array("predictions"),
                               rtol=1e-5, atol=1e-5)


def test_a_weights_file_names_the_sublayers_as_keras_does(tmp_path):
    h5py = pytest.importorskip("h5py")
    model = _attention_model(1)
    x = _array("x")
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    model.fit(x, np.ones((6, 2), np.float32), epochs=2, batch_size=3, verbose=0)
    path = str(tmp_path / "mha.weights.h5")
    model.save_weights(path)
    with h5py.File(path) as f:
        for sub in ("query_dense", "key_dense", "value_dense"):
            assert f[f"layers/multi_head_attention/{sub}/vars/0"].shape == (6, 2, 3)
        assert f["layers/multi_head_attention/output_dense/vars/1"].shape == (6,)
    other = _attention_model(2)
    other.load_weights(path)
    np.testing.assert_array_equal(other.predict(x, verbose=0), model.predict(x, verbose=0))


def test_a_checkpoint_restores_the_projections(tmp_path):
    mha = _fixed_layer()
    ckpt = mt.train.Checkpoint(layer=mha)
    path = ckpt.save(str(tmp_path / "ckpt"))
    want = mha.get_weights()
    for w in mha.weights:
        w.assign(np.zeros(w.shape, np.float32))
    ckpt.restore(path).assert_consumed()
    for got, w in zip(mha.get_weights(), want):
        np.testing.assert_array_equal(got, w)


def test_a_function_replays_the_attention_as_eager():
    mha = _fixed_layer()
    f = mt.function(lambda q, v: mha(q, v, use_causal_mask=True))
    for seed in range(3):
        rng = np.random.default_rng(seed)
        q = rng.standard_normal((2, 3, 4)).astype(np.float32)
        v = rng.standard_normal((2, 3, 4)).astype(np.float32)
        np.testing.assert_allclose(f(mt.constant(q), mt.constant(v)).numpy(),
                                   mha(q, v, use_causal_mask=True).numpy(), rtol=1e-6)
    assert f.experimental_get_tracing_count() == 1


def test_training_drops_attention_and_inference_does_not():
    mha = layers.MultiHeadAttention(num_heads=1, key_dim=2, dropout=0.5, seed=3)
    q = np.random.default_rng(0).standard_normal((1, 4, 2)).astype(np.float32)
    first = mha(q, q).numpy()
    np.testing.assert_array_equal(mha(q, q, training=False).numpy(), first)
    assert not np.allclose(mha(q, q, training=True).numpy(), first)


def test_einsum_dense_shapes_its_kernel_and_bias_from_the_equation():
    layer = layers.EinsumDense("abc,cde->abde", output_shape=(None, 2, 3), bias_axes="de")
    x = np.random.default_rng(1).standard_normal((2, 4, 5)).astype(np.float32)
    y = layer(x)
    assert y.shape == (2, 4, 2, 3)
    assert (tuple(layer.kernel.shape), tuple(layer.bias.shape)) == ((5, 2, 3), (2, 3))
    want = np.einsum("abc,cde->abde", x, layer.kernel.numpy()) + layer.bias.numpy()
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    assert layer.compute_output_shape((None, 4, 5)) == (None, 4, 2, 3)
    assert tuple(layers.EinsumDense("ab,bc->ac", 7, bias_axes="c")(x[0]).shape) == (4, 7)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="Received an invalid value for `num_heads`"):
        layers.MultiHeadAttention(num_heads=0, key_dim=2)
    with pytest.raises(ValueError, match="Received an invalid value for `key_dim`"):
        layers.MultiHeadAttention(num_heads=2, key_dim=None)
    with pytest.raises(ValueError, match="attention_axes=.* is not supported"):
        layers.MultiHeadAttention(num_heads=2, key_dim=2, attention_axes=(1, 2))
    with pytest.raises(ValueError, match="inputs of rank 3"):
        layers.MultiHeadAttention(num_heads=2, key_dim=2)(np.ones((2, 4), np.float32),
                                                           np.ones((2, 4), np.float32))
    with pytest.raises(TypeError, match="needs a `value`"):
        layers.MultiHeadAttention(num_heads=2, key_dim=2)(np.ones((1, 2, 4), np.float32))
    with pytest.raises(ValueError, match="did not have a match"):
        layers.EinsumDense("ab,bz->ac", 3)(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        layers.EinsumDense("ab->b", 3)
