"""mt.keras.mixed_precision: the "mixed_bfloat16" policy against Keras 3 under TensorFlow
2.21 (values, loss and gradients recorded by fixtures/mixed/write_mixed_with_tensorflow.py),
the policy objects, and what is refused."""

import pathlib

import numpy as np
import pytest

import minitensor as mt

MP = mt.keras.mixed_precision
FIXTURE = np.load(pathlib.Path(__file__).parent / "fixtures" / "mixed" / "mixed.npz")


@pytest.fixture
def mixed_bfloat16():
    MP.set_global_policy("mixed_bfloat16")
    yield
    MP.set_global_policy("float32")


def _model():
    return mt.keras.Sequential([mt.keras.layers.Input((5,)),
                                mt.keras.layers.Dense(16, activation="relu"),
                                mt.keras.layers.LayerNormalization(),
                                mt.keras.layers.Dense(3, dtype="float32")])


def test_a_mixed_model_computes_as_keras_does(mixed_bfloat16):
    model = _model()
    model.set_weights([FIXTURE[f"w{i}"] for i in range(6)])
    dense, norm, head = model.layers
    assert (dense.dtype, dense.compute_dtype) == ("float32", "bfloat16")
    assert [w.dtype.name for w in model.weights] == ["float32"] * 6
    x = mt.constant(FIXTURE["x"])
    loss_fn = mt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    with mt.GradientTape() as tape:
        hidden = norm(dense(x))
        logits = head(hidden)
        loss = loss_fn(FIXTURE["labels"], logits)
    assert hidden.dtype.name == str(FIXTURE["hidden_dtype"]) == "bfloat16"
    assert logits.dtype == mt.float32
    # bfloat16 keeps 8 bits: values within a few of its ulps of Keras's.
    np.testing.assert_allclose(mt.cast(hidden, mt.float32).numpy(), FIXTURE["hidden"],
                               rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(logits.numpy(), FIXTURE["logits"], rtol=3e-2, atol=3e-2)
    np.testing.assert_allclose(float(loss), float(FIXTURE["loss"]), rtol=1e-2)
    grads = tape.gradient(loss, model.trainable_weights)
    for i, g in enumerate(grads):
        assert g.dtype == mt.float32  # the variables' dtype, through the casts
        np.testing.assert_allclose(g.numpy(), FIXTURE[f"g{i}"], rtol=5e-2, atol=5e-2)


def test_a_mixed_model_trains_with_fit_in_float32_variables(mixed_bfloat16):
    model = _model()
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=mt.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(FIXTURE["x"], FIXTURE["labels"], epochs=30, verbose=0)
    assert history.history["loss"][-1] < 0.7 * history.history["loss"][0]
    assert all(w.dtype == mt.float32 for w in model.weights)


def test_a_mixed_layer_inside_a_function_replays_its_casts(mixed_bfloat16):
    dense = mt.keras.layers.Dense(4)
    x = mt.constant(FIXTURE["x"])
    eager = dense(x)
    traced = mt.function(dense)
    for _ in range(2):
        np.testing.assert_array_equal(mt.cast(traced(x), mt.float32).numpy(),
                                      mt.cast(eager, mt.float32).numpy())
    dense.kernel.assign(dense.kernel * 2.0)  # the replay reads (and casts) the new value
    np.testing.assert_array_equal(mt.cast(traced(x), mt.float32).numpy(),
                                  mt.cast(dense(x), mt.float32).numpy())


def test_policies_follow_keras():
    policy = MP.Policy("mixed_bfloat16")
    assert (policy.name, policy.compute_dtype, policy.variable_dtype) == \
        ("mixed_bfloat16", "bfloat16", "float32")
    assert MP.DTypePolicy("float16").variable_dtype == "float16"
    assert MP.global_policy().name == "float32"
    with pytest.raises(ValueError, match="Cannot convert 'mixed_int8' to a mixed precision"):
        MP.Policy("mixed_int8")
    layer = mt.keras.layers.Dense(2, dtype=policy)
    assert layer.dtype_policy == policy and layer.dtype == "float32"
    # Outside a layer's call a variable reads as itself.
    layer(np.ones((1, 3), np.float32))
    assert mt.convert_to_tensor(layer.kernel).dtype == mt.float32


def test_mixed_float16_is_refused_at_compile():
    model = mt.keras.Sequential([mt.keras.layers.Input((5,)),
                                 mt.keras.layers.Dense(3, dtype="mixed_float16")])
    with pytest.raises(NotImplementedError, match="LossScaleOptimizer"):
        model.compile(optimizer="sgd", loss="mse")


def test_integer_ids_reach_a_mixed_embedding_exactly(mixed_bfloat16):
    # A model casts integer inputs through float32, never bfloat16 (513 would become 512,
    # 999 become 1000); the Embedding reads exact rows and casts them.
    embedding = mt.keras.layers.Embedding(1000, 8)
    model = mt.keras.Sequential([mt.keras.layers.Input((4,), dtype="int32"), embedding])
    ids = np.array([[999, 997, 513, 257]], np.int32)
    got = model(ids)
    assert got.dtype == mt.bfloat16
    rows = mt.nn.embedding_lookup(embedding.embeddings, mt.constant(ids))
    np.testing.assert_array_equal(mt.cast(got, mt.float32).numpy(),
                                  mt.cast(mt.cast(rows, mt.bfloat16), mt.float32).numpy())


def test_multi_head_attention_computes_in_bfloat16_with_float32_weights(mixed_bfloat16):
    # Its projections, softmax and dropout take its policy; the causal fill is bfloat16's.
    x = np.random.default_rng(5).standard_normal((2, 5, 8)).astype(np.float32)
    mixed = mt.keras.layers.MultiHeadAttention(2, 4)
    y, scores = mixed(x, x, use_causal_mask=True, return_attention_scores=True)
    fused = mixed(x, x, use_causal_mask=True)
    assert (y.dtype, scores.dtype, fused.dtype) == (mt.bfloat16,) * 3
    assert {w.dtype for w in mixed.weights} == {mt.float32}
    MP.set_global_policy("float32")
    plain = mt.keras.layers.MultiHeadAttention(2, 4)
    plain(x, x)
    plain.set_weights(mixed.get_weights())
    np.testing.assert_allclose(mt.cast(fused, mt.float32).numpy(),
                               plain(x, x, use_causal_mask=True).numpy(), atol=3e-2)


class _Scale(mt.keras.layers.Layer):
    """A layer whose call puts its variable on the left of operators."""

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1],), "ones")

    def call(self, inputs):
        return self.w * inputs + self.w[0] - inputs * self.w.T

    def compute_output_shape(self, input_shape):
        return input_shape


def test_a_variable_in_an_expression_reads_as_the_compute_dtype(mixed_bfloat16):
    # w * x, w[0] and w.T read w as an op's argument does (Keras: bfloat16 everywhere).
    y = _Scale()(np.full((2, 3), 2.0, np.float32))
    assert y.dtype == mt.bfloat16
    np.testing.assert_array_equal(mt.cast(y, mt.float32).numpy(), np.full((2, 3), 1.0))
    # Integer inputs to a layer that computes take its compute dtype, as Keras's promotion
    # gives them.
    dense = mt.keras.layers.Dense(2)
    assert dense(np.array([[1, 2, 3]])).dtype == mt.bfloat16
    assert dense(mt.constant([[1, 2, 3]])).dtype == mt.bfloat16


def test_a_function_traced_inside_a_mixed_call_is_another_signature():
    v = mt.Variable([1.0, 2.0])
    g = mt.function(lambda: mt.convert_to_tensor(v) * 2.0)
    seen = []

    class Probe(mt.keras.layers.Layer):
        def call(self, x):
            seen.append(g().dtype)
            return x

        def compute_output_shape(self, input_shape):
            return input_shape

    assert g().dtype == mt.float32  # traced outside: the fast path must not serve inside
    MP.set_global_policy("mixed_bfloat16")
    try:
        Probe()(np.ones((1, 2), np.float32))
        Probe()(np.ones((1, 2), np.float32))
    finally:
        MP.set_global_policy("float32")
    assert seen == [mt.bfloat16, mt.bfloat16]
    assert g().dtype == mt.float32 and g().dtype == mt.float32  # and back outside


def test_integer_ids_past_float32s_mantissa_reach_an_embedding_through_a_model():
    # A model passes integer inputs on uncast: id 2**24 + 1 is not a float32.
    embedding = mt.keras.layers.Embedding(2 ** 24 + 3, 1, embeddings_initializer="zeros")
    model = mt.keras.Sequential([mt.keras.layers.Input((1,), dtype="int64"), embedding])
    model(np.zeros((1, 1), np.int64))
    table = np.zeros((2 ** 24 + 3, 1), np.float32)
    table[2 ** 24 + 1] = 2.0
    table[2 ** 24] = 1.0
    embedding.embeddings.assign(table)
    ids = np.array([[2 ** 24 + 1]], np.int64)
    assert model(ids).numpy().ravel().tolist() == [2.0]
    assert model(mt.constant(ids)).numpy().ravel().tolist() == [2.0]


def test_a_mixed_layer_keeps_its_policy_in_its_config_and_keras_file(tmp_path):
    pytest.importorskip("h5py")
    dense = mt.keras.layers.Dense(2, dtype="mixed_bfloat16")
    assert dense.get_config()["dtype"] == "mixed_bfloat16"
    model = mt.keras.Sequential([mt.keras.layers.Input((3,)), dense])
    path = str(tmp_path / "mixed.keras")
    model.save(path)
    loaded = mt.keras.models.load_model(path)
    assert loaded.layers[-1].dtype_policy.name == "mixed_bfloat16"
    x = np.ones((1, 3), np.float32)
    np.testing.assert_array_equal(mt.cast(loaded(x), mt.float32).numpy(),
                                  mt.cast(model(x), mt.float32).numpy())
