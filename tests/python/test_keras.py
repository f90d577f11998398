"""The Keras subset: layers, functional and Sequential models, compile/fit/evaluate/predict
with Keras's progress lines and messages, losses and metrics against NumPy formulas and
values TensorFlow 2.21 (Keras 3.15) gives, and fit's distribution hook driven by a fake
strategy that runs its replicas in turn on the CPU."""

import contextlib
import re
import types

import numpy as np
import pytest

import minitensor as mt

keras = mt.keras


def _line_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 1)).astype(np.float32)
    return x, 2 * x + 1


def _blobs(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 3).astype(np.int32)
    centres = np.array([[-2.0, 0.0], [2.0, 0.0], [0.0, 2.5]], np.float32)
    return (centres[y] + rng.normal(0, 0.5, (n, 2))).astype(np.float32), y


def _classifier(seed=1):
    keras.utils.set_random_seed(seed)
    inputs = keras.layers.Input(shape=(2,))
    hidden = keras.layers.Dense(16, activation="relu")(inputs)
    outputs = keras.layers.Dense(3, activation="softmax")(hidden)
    return keras.models.Model(inputs=inputs, outputs=outputs)


def test_guides_model_trains_dense_one_to_a_line():
    inputs = keras.layers.Input(shape=(1,))
    predictions = keras.layers.Dense(1)(inputs)
    model = keras.models.Model(inputs=inputs, outputs=predictions)
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(learning_rate=0.2))
    x, y = _line_data()
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0)
    kernel, bias = model.get_weights()
    np.testing.assert_allclose([kernel[0, 0], bias[0]], [2.0, 1.0], atol=1e-2)
    assert history.history["loss"][-1] < 1e-4 < history.history["loss"][0]
    assert len(history.history["loss"]) == 30 and history.epoch == list(range(30))
    assert model.evaluate(x, y, verbose=0) < 1e-4


def test_small_classifier_reaches_high_accuracy_with_validation():
    x, y = _blobs()
    model = _classifier()
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=keras.optimizers.Adam(0.05), metrics=["accuracy"])
    history = model.fit(x, y, epochs=10, batch_size=32, validation_split=0.25, verbose=0)
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert history.history["accuracy"][-1] > 0.95 and history.history["val_accuracy"][-1] > 0.95
    loss, accuracy = model.evaluate(x, y, verbose=0)
    assert accuracy > 0.95 and loss < history.history["loss"][0]
    assert model.metrics_names == ["loss", "accuracy"]


def test_fit_takes_a_dataset_and_validation_data():
    x, y = _blobs(200)
    model = _classifier()
    model.compile(loss=keras.losses.SparseCategoricalCrossentropy(), optimizer="adam",
                  metrics=["accuracy"])
    train = mt.data.Dataset.from_tensor_slices((x, y)).shuffle(200, seed=1).batch(20)
    history = model.fit(train, epochs=2, validation_data=(x[:50], y[:50]), verbose=0)
    assert len(history.history["val_loss"]) == 2


def test_predict_matches_a_numpy_forward_pass_and_call_returns_tensors():
    x, _ = _blobs(70)
    model = _classifier()
    w1, b1, w2, b2 = model.get_weights()
    logits = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    expected = np.exp(logits - logits.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    predicted = model.predict(x, batch_size=32, verbose=0)
    assert isinstance(predicted, np.ndarray) and predicted.shape == (70, 3)
    np.testing.assert_allclose(predicted, expected, rtol=1e-5, atol=1e-6)
    out = model(mt.constant(x[:4]))
    assert isinstance(out, mt.Tensor)
    np.testing.assert_allclose(out.numpy(), expected[:4], rtol=1e-5, atol=1e-6)


def test_get_and_set_weights_round_trip():
    model = _classifier(seed=1)
    other = _classifier(seed=2)
    assert not np.allclose(model.get_weights()[0], other.get_weights()[0])
    other.set_weights(model.get_weights())
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert [w.shape for w in model.get_weights()] == [(2, 16), (16,), (16, 3), (3,)]
    assert [v.name for v in model.trainable_variables][:2] == [
        f"{model.layers[1].name}/kernel:0", f"{model.layers[1].name}/bias:0"]


def test_sequential_with_and_without_input():
    keras.utils.set_random_seed(3)
    with_input = keras.Sequential([keras.layers.Input(shape=(2,)), keras.layers.Dense(4),
                                   keras.layers.Dense(1)])
    assert with_input.built and len(with_input.weights) == 4
    lazy = keras.models.Sequential([keras.layers.Dense(4, activation="tanh"),
                                    keras.layers.Dense(1, activation="sigmoid")])
    assert lazy.weights == [] and not lazy.built
    lazy.compile(loss="mse", optimizer="sgd")
    lazy.fit(np.zeros((8, 2), np.float32), np.zeros((8, 1), np.float32), verbose=0)
    assert [w.shape for w in lazy.get_weights()] == [(2, 4), (4,), (4, 1), (1,)]


def test_subclassed_model_tracks_its_layers():
    class Linear(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, inputs, training=None):
            return self.dense(inputs)

    model = Linear()
    model.compile(loss="mse", optimizer=keras.optimizers.SGD(0.2))
    x, y = _line_data()
    model.fit(x, y, epochs=20, batch_size=16, verbose=0)
    np.testing.assert_allclose(model.predict(x[:2], verbose=0), y[:2], atol=1e-2)
    assert len(model.trainable_variables) == 2


def test_dense_activations_and_initializers():
    x = np.array([[-1.0, 2.0]], np.float32)
    ones = dict(kernel_initializer="ones", bias_initializer=keras.initializers.Constant(0.5))
    for name, fn in [("relu", lambda v: np.maximum(v, 0)), ("linear", lambda v: v),
                     ("tanh", np.tanh), ("sigmoid", lambda v: 1 / (1 + np.exp(-v)))]:
        layer = keras.layers.Dense(2, activation=name, **ones)
        np.testing.assert_allclose(layer(x).numpy(), fn(np.full((1, 2), 1.5)), rtol=1e-6)
    kernel = keras.initializers.GlorotUniform(seed=4)((30, 10))
    limit = np.sqrt(6 / 40)
    assert np.abs(kernel.numpy()).max() <= limit and kernel.numpy().std() > limit / 3
    np.testing.assert_array_equal(kernel.numpy(),
                                  keras.initializers.GlorotUniform(seed=4)((30, 10)).numpy())


def test_losses_match_numpy_formulas_and_tensorflow_values():
    losses = keras.losses
    y_true, y_pred = np.array([1.0, 2.0, 3.0]), np.array([[1.5], [2.0], [2.0]], np.float32)
    assert float(losses.MeanSquaredError()(y_true, y_pred)) == pytest.approx(0.4166666567)
    per_example = losses.mean_squared_error(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32),
                                            np.array([[1.5, 2.0], [2.0, 5.0]], np.float32))
    np.testing.assert_allclose(per_example.numpy(), [0.125, 1.0])
    p = np.array([[0.1, 0.7, 0.2], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]], np.float32)
    labels = np.array([1, 0, 0])
    np.testing.assert_allclose(losses.sparse_categorical_crossentropy(labels, p).numpy(),
                               [3.5667488e-01, 1.6118095e+01, 2.3841855e-07], rtol=1e-5)
    assert float(losses.SparseCategoricalCrossentropy()(labels, p)) == \
        pytest.approx(5.49159002, rel=1e-6)
    logits = np.array([[1.0, 2.0, 0.5], [-1.0, 0.0, 3.0]], np.float32)
    expected = np.mean(np.log(np.exp(logits).sum(1)) - logits[[0, 1], [1, 2]])
    assert float(losses.SparseCategoricalCrossentropy(from_logits=True)([1, 2], logits)) == \
        pytest.approx(expected, rel=1e-6) == pytest.approx(0.26512635, rel=1e-6)
    unnormalised = np.array([[0.2, 0.2, 0.2], [0.1, 0.1, 0.4]], np.float32)
    np.testing.assert_allclose(
        losses.sparse_categorical_crossentropy([1, 2], unnormalised).numpy(),
        [1.0986123, 0.4054651], rtol=1e-6)


def test_accuracy_metrics():
    m = keras.metrics.SparseCategoricalAccuracy()
    m.update_state([1, 0], [[0.2, 0.8], [0.9, 0.1]])
    m.update_state([[1]], [[0.7, 0.3]])
    assert float(m.result()) == pytest.approx(2 / 3)
    assert float(keras.metrics.BinaryAccuracy()([[1], [0]], [[0.6], [0.7]])) == 0.5
    assert float(keras.metrics.CategoricalAccuracy()([[0, 1]], [[0.2, 0.8]])) == 1.0


def _fit_output(capsys, verbose, epochs=2):
    x, y = _blobs(80)
    model = _classifier()
    model.compile(loss="sparse_categorical_crossentropy", optimizer="adam",
                  metrics=["accuracy"])
    capsys.readouterr()
    model.fit(x, y, epochs=epochs, batch_size=32, validation_split=0.2, verbose=verbose)
    return capsys.readouterr().out, model, x, y


NUMBER = r"\d+\.\d{4}(e[+-]\d+)?"
STEP_TIME = r"\d+(s|ms|us)/step"
METRICS = (f" - accuracy: {NUMBER} - loss: {NUMBER} - val_accuracy: {NUMBER} - val_loss: "
           f"{NUMBER}")


def test_verbose_2_prints_one_line_per_epoch(capsys):
    out, model, x, y = _fit_output(capsys, 2)
    lines = out.splitlines()
    assert lines[0] == "Epoch 1/2" and lines[2] == "Epoch 2/2" and len(lines) == 4
    for line in lines[1::2]:
        assert re.fullmatch(rf"2/2 - \d+s - {STEP_TIME}{METRICS}", line), line
    model.evaluate(x, y, verbose=2)
    assert re.fullmatch(rf"3/3 - \d+s - {STEP_TIME} - accuracy: {NUMBER} - loss: {NUMBER}\n",
                        capsys.readouterr().out)
    model.predict(x, verbose=2)
    assert re.fullmatch(rf"3/3 - \d+s - {STEP_TIME}\n", capsys.readouterr().out)


def test_verbose_1_redraws_a_bar_with_keras_ansi_format(capsys):
    out, *_ = _fit_output(capsys, "auto", epochs=1)
    assert "Epoch" not in out  # one epoch: no epoch line, as Keras
    final = out.split("\r")[-1]
    bar = "\x1b\\[32m" + "━" * 20 + "\x1b\\[0m\x1b\\[37m\x1b\\[0m"
    assert re.fullmatch(rf"\x1b\[1m2/2\x1b\[0m {bar} \x1b\[1m\d+s\x1b\[0m {STEP_TIME}"
                        rf"{METRICS} *\n", final), repr(final)
    first = out.split("\r")[1]
    half = "\x1b\\[32m" + "━" * 10 + "\x1b\\[0m\x1b\\[37m" + "━" * 10 + "\x1b\\[0m"
    assert re.match(rf"\x1b\[1m1/2\x1b\[0m {half} \x1b\[1m\d+s\x1b\[0m {STEP_TIME}", first)


def test_verbose_0_prints_nothing(capsys):
    out, *_ = _fit_output(capsys, 0)
    assert out == ""


def test_summary_lists_layers_and_parameters(capsys):
    _classifier().summary()
    out = capsys.readouterr().out
    assert re.search(r"│ dense\S* \(Dense\) +│ \(None, 16\) +│ +48 │", out)
    assert " Total params: 99 (396.00 B)\n" in out


@pytest.mark.parametrize("make,error,message", [
    (lambda m: m.fit(np.zeros((4, 2)), np.zeros(4), verbose=0), ValueError,
     "You must call `compile()` before using the model."),
    (lambda m: m.evaluate(np.zeros((4, 2)), np.zeros(4), verbose=0), ValueError,
     "You must call `compile()` before using the model."),
    (lambda m: m.compile(loss="nope", optimizer="sgd"), ValueError,
     "Could not interpret loss identifier: nope"),
    (lambda m: m.compile(loss="mse", optimizer="nope"), ValueError,
     "Could not interpret optimizer identifier: nope"),
    (lambda m: m.compile(loss="mse", optimizer="sgd", metrics=["nope"]), ValueError,
     "Could not interpret metric identifier: nope"),
    (lambda m: m.predict(np.zeros((4, 3)), verbose=0), ValueError,
     "Input 0 of layer 'functional.*' is incompatible with the layer: expected "
     "shape=(None, 2), found shape=(4, 3)"),
    (lambda m: m.set_weights([np.zeros((2, 16))]), ValueError,
     "with a weight list of length 1, but the layer was expecting 4 weights."),
])
def test_model_misuse_raises_kerass_messages(make, error, message):
    with pytest.raises(error, match=re.escape(message).replace(r"\.\*", ".*")):
        make(_classifier())


@pytest.mark.parametrize("make,message", [
    (lambda: keras.layers.Dense(1, activation="nope"),
     "Could not interpret activation function identifier: nope"),
    (lambda: keras.layers.Dense(1, kernel_initializer="nope"),
     "Could not interpret initializer identifier: nope"),
    (lambda: keras.layers.Dense(0),
     "Received an invalid value for `units`, expected a positive integer. Received: units=0"),
    (lambda: keras.layers.Input(), "You must pass a `shape` argument."),
    (lambda: keras.models.Model(inputs=3, outputs=4),
     "All `inputs` values must be KerasTensors. Received: inputs=3 including invalid value 3"),
    (lambda: keras.Sequential([3]),
     "Only instances of `keras.Layer` can be added to a Sequential model. Received: 3"),
    (lambda: keras.layers.Dense(2)(np.zeros((3,), np.float32)),
     "expected min_ndim=2, found ndim=1. Full shape received: (3,)"),
    (lambda: keras.Sequential([keras.layers.Input(shape=(2,)), keras.layers.Dense(1)])(
        np.zeros((4, 3), np.float32)),
     "is incompatible with the layer: expected axis -1 of input shape to have value 2, but "
     "received input with shape (4, 3)"),
    (lambda: keras.models.Model(inputs=keras.Input(shape=(1,)),
                                outputs=keras.layers.Dense(1)(keras.Input(shape=(1,)))),
     "Graph disconnected"),
])
def test_definition_misuse_raises_kerass_messages(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_fit_data_errors():
    model = _classifier()
    model.compile(loss="sparse_categorical_crossentropy", optimizer="sgd")
    with pytest.raises(ValueError, match="Data cardinality is ambiguous.*'x' sizes: 4\n'y' "
                                         "sizes: 3"):
        model.fit(np.zeros((4, 2)), np.zeros(3), verbose=0)
    with pytest.raises(ValueError, match=r"not sufficient to split.*validation_split=1.0"):
        model.fit(np.zeros((4, 2)), np.zeros(4), validation_split=1.0, verbose=0)
    dataset = mt.data.Dataset.from_tensor_slices((np.zeros((4, 2)), np.zeros(4))).batch(2)
    with pytest.raises(ValueError, match="`y` should not be passed"):
        model.fit(dataset, np.zeros(4), verbose=0)


# --- The distribution hook (training_step.py), with a fake strategy -------------------

class FakePerReplica:
    def __init__(self, values):
        self.values = tuple(values)


class FakeStrategy:
    """Runs each replica in turn on the CPU. Inside run, apply_gradients only collects;
    after the replicas it applies the SUM of their gradients once, as the all-reduce
    MirroredStrategy does inside a replica."""

    current = None

    def __init__(self, replicas):
        self.num_replicas_in_sync = replicas
        self.extended = types.SimpleNamespace(worker_devices=("/CPU:0",) * replicas)
        self.runs = 0
        self.scopes_entered = 0

    @contextlib.contextmanager
    def scope(self):
        previous, FakeStrategy.current = FakeStrategy.current, self
        self.scopes_entered += 1
        try:
            yield self
        finally:
            FakeStrategy.current = previous

    def run(self, fn, args=()):
        self.runs += 1
        collected, apply = [], keras.optimizers.Optimizer.apply_gradients
        keras.optimizers.Optimizer.apply_gradients = \
            lambda opt, pairs: collected.append((opt, list(pairs)))
        try:
            results = [fn(*[a.values[i] if isinstance(a, FakePerReplica) else a for a in args])
                       for i in range(self.num_replicas_in_sync)]
        finally:
            keras.optimizers.Optimizer.apply_gradients = apply
        optimizer, first = collected[0]
        sums = [mt.add_n([pairs[j][0] for _, pairs in collected]) for j in range(len(first))]
        apply(optimizer, zip(sums, [v for _, v in first]))
        return tuple(FakePerReplica(parts) for parts in zip(*results))

    def reduce(self, op, value, axis=None):
        assert op == "SUM" and axis is None
        return mt.add_n(list(value.values))


@pytest.fixture
def fake_distribute(monkeypatch):
    d = mt.distribute
    monkeypatch.setattr(d, "has_strategy", lambda: FakeStrategy.current is not None,
                        raising=False)
    monkeypatch.setattr(d, "get_strategy", lambda: FakeStrategy.current, raising=False)
    monkeypatch.setattr(d, "PerReplica", FakePerReplica, raising=False)
    monkeypatch.setattr(d, "ReduceOp", types.SimpleNamespace(SUM="SUM", MEAN="MEAN"),
                        raising=False)
    yield
    FakeStrategy.current = None


@pytest.mark.parametrize("replicas,batch_size", [(2, 8), (3, 10)])
def test_replicas_summing_gradients_train_as_one_device(fake_distribute, replicas,
                                                        batch_size):
    x, y = _blobs(50)
    strategy = FakeStrategy(replicas)
    with strategy.scope():
        mirrored = _classifier()
        mirrored.compile(loss="sparse_categorical_crossentropy",
                         optimizer=keras.optimizers.SGD(learning_rate=0.2), metrics=["acc"])
    single = _classifier()
    single.compile(loss="sparse_categorical_crossentropy",
                   optimizer=keras.optimizers.SGD(learning_rate=0.2), metrics=["acc"])
    assert mirrored._distribute_strategy is strategy and single._distribute_strategy is None
    runs = [m.fit(x, y, epochs=2, batch_size=batch_size, shuffle=False, verbose=0)
            for m in (mirrored, single)]
    assert strategy.runs == 2 * -(-50 // batch_size)
    for a, b in zip(mirrored.get_weights(), single.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for name in ("loss", "acc"):
        np.testing.assert_allclose(runs[0].history[name], runs[1].history[name], rtol=1e-5)


def _regularized_classifier():
    keras.utils.set_random_seed(4)
    model = keras.Sequential([keras.layers.Input(shape=(2,)), keras.layers.Dense(
        3, activation="softmax", kernel_regularizer=keras.regularizers.L2(0.05))])
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=keras.optimizers.SGD(learning_rate=0.2))
    return model


def test_replicas_count_the_regularization_penalty_once(fake_distribute):
    x, y = _blobs(40)
    strategy = FakeStrategy(3)
    with strategy.scope():
        mirrored = _regularized_classifier()
    single = _regularized_classifier()
    runs = [m.fit(x, y, epochs=2, batch_size=10, shuffle=False, verbose=0)
            for m in (mirrored, single)]
    for a, b in zip(mirrored.get_weights(), single.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(runs[0].history["loss"], runs[1].history["loss"], rtol=1e-5)


def test_a_lazy_model_builds_its_variables_in_its_strategys_scope(fake_distribute):
    strategy = FakeStrategy(2)
    with strategy.scope():
        model = keras.Sequential([keras.layers.Dense(2)])
        model.compile(loss="mse", optimizer="sgd")
    entered = strategy.scopes_entered
    model.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), verbose=0)
    assert strategy.scopes_entered == entered + 1 and len(model.weights) == 2
    assert strategy.runs == 1
