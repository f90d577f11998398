"""Keras 3's files both ways: .weights.h5 and .keras written here load here; files written
by TensorFlow (committed fixtures, fixtures/keras/write_with_tensorflow.py) load and
predict the same; and, where TensorFlow is at hand (importable, or a Python named by
MT_TF_PYTHON), files written here load in TensorFlow and predict the same. Also the
callbacks that save during fit."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt

pytest.importorskip("h5py")
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "keras")
with open(os.path.join(FIXTURES, "expected.json")) as _f:
    EXPECTED = json.load(_f)
X = np.asarray(EXPECTED["x"], np.float32)


def _sequential(seed=0):
    mt.keras.utils.set_random_seed(seed)
    return mt.keras.Sequential([mt.keras.layers.Input(shape=(3,)),
                                mt.keras.layers.Dense(4, activation="relu"),
                                mt.keras.layers.Dense(2)])


def _functional(seed=0):
    mt.keras.utils.set_random_seed(seed)
    inputs = mt.keras.layers.Input(shape=(3,))
    hidden = mt.keras.layers.Dense(5, activation="tanh")(inputs)
    return mt.keras.Model(inputs, mt.keras.layers.Dense(2, activation="sigmoid")(hidden))


@pytest.mark.parametrize("name", ["sequential", "functional"])
def test_tensorflow_files_load_and_predict_the_same(name):
    model = mt.keras.models.load_model(os.path.join(FIXTURES, f"tf_{name}.keras"))
    np.testing.assert_allclose(model.predict(X, verbose=0), EXPECTED[name], rtol=1e-5,
                               atol=1e-6)
    fresh = (_sequential if name == "sequential" else _functional)(seed=5)
    fresh.load_weights(os.path.join(FIXTURES, f"tf_{name}.weights.h5"))
    np.testing.assert_allclose(fresh.predict(X, verbose=0), EXPECTED[name], rtol=1e-5,
                               atol=1e-6)


def test_files_written_here_load_here(tmp_path):
    model = _sequential()
    model.compile(optimizer="adam", loss="mse")
    model.fit(X, X[:, :2], epochs=2, verbose=0)
    model.save_weights(str(tmp_path / "m.weights.h5"))
    model.save(str(tmp_path / "m.keras"))
    other = _sequential(seed=9)
    other.compile(optimizer="adam", loss="mse")
    other.fit(X, X[:, :2], epochs=1, verbose=0)  # builds its optimizer's slots
    other.load_weights(str(tmp_path / "m.weights.h5"))
    np.testing.assert_array_equal(other.predict(X, verbose=0), model.predict(X, verbose=0))
    assert int(other.optimizer.iterations) == int(model.optimizer.iterations)
    loaded = mt.keras.models.load_model(str(tmp_path / "m.keras"))
    np.testing.assert_array_equal(loaded.predict(X, verbose=0), model.predict(X, verbose=0))


def test_mismatches_and_bad_names_are_clear_errors(tmp_path):
    model = _sequential()
    with pytest.raises(ValueError, match=r"The filename must end in `.weights.h5`"):
        model.save_weights(str(tmp_path / "m.h5"))
    with pytest.raises(ValueError, match=r"Invalid filepath extension for saving"):
        model.save(str(tmp_path / "m.zip"))
    wider = mt.keras.Sequential([mt.keras.layers.Input(shape=(3,)),
                                 mt.keras.layers.Dense(6), mt.keras.layers.Dense(2)])
    before = [w.numpy() for w in wider.weights]
    with pytest.raises(ValueError, match=r"variable.shape=\(3, 6\), Received: "
                                         r"value.shape=\(3, 4\)"):
        wider.load_weights(os.path.join(FIXTURES, "tf_sequential.weights.h5"))
    for w, b in zip(wider.weights, before):  # nothing half-assigned
        np.testing.assert_array_equal(w.numpy(), b)
    unbuilt = mt.keras.Sequential([mt.keras.layers.Dense(2)])
    with pytest.raises(ValueError, match="is not built"):
        unbuilt.load_weights(os.path.join(FIXTURES, "tf_sequential.weights.h5"))


def test_missing_h5py_is_named(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"needs the h5py package: pip install h5py"):
        _sequential().save_weights(str(tmp_path / "m.weights.h5"))


def test_model_checkpoint_writes_the_best_epochs(tmp_path):
    model = _sequential()
    model.compile(optimizer="sgd", loss="mse")
    path = str(tmp_path / "e{epoch:02d}.weights.h5")
    cb = mt.keras.callbacks.ModelCheckpoint(path, monitor="loss", save_weights_only=True)
    model.fit(X, X[:, :2], epochs=3, verbose=0, callbacks=[cb])
    assert sorted(os.listdir(tmp_path)) == ["e01.weights.h5", "e02.weights.h5",
                                            "e03.weights.h5"]
    with pytest.raises(ValueError, match="must end in `.keras`"):
        mt.keras.callbacks.ModelCheckpoint(str(tmp_path / "x.h5"))


_CRASHING_FIT = r"""
import sys, numpy as np, minitensor as mt
mt.keras.utils.set_random_seed(0)
x = np.linspace(-1, 1, 30, dtype=np.float32).reshape(10, 3)
model = mt.keras.Sequential([mt.keras.layers.Dense(4), mt.keras.layers.Dense(1)])
model.compile(optimizer=mt.keras.optimizers.Adam(0.01), loss="mse")
crash_at = int(sys.argv[2])
class Crash(mt.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        print("epoch", epoch, flush=True)
        if epoch == crash_at:
            import os; os._exit(3)
model.fit(x, x[:, :1], epochs=5, batch_size=5, shuffle=False, verbose=0,
          callbacks=[mt.keras.callbacks.BackupAndRestore(sys.argv[1]), Crash()])
np.save(sys.argv[3], model.predict(x, verbose=0))
"""


def test_backup_and_restore_resumes_fit_at_the_epoch_reached(tmp_path):
    def run(crash_at, out):
        return subprocess.run([sys.executable, "-c", _CRASHING_FIT, str(tmp_path / "backup"),
                               str(crash_at), str(out)], capture_output=True, text=True)
    crashed = run(3, tmp_path / "none.npy")
    assert crashed.returncode == 3, crashed.stderr
    resumed = run(-1, tmp_path / "resumed.npy")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == ["epoch", "3", "epoch", "4"]
    assert not os.path.exists(tmp_path / "backup")  # deleted at a normal end
    whole = run(-1, tmp_path / "whole.npy")
    np.testing.assert_allclose(np.load(tmp_path / "resumed.npy"), np.load(tmp_path / "whole.npy"),
                               rtol=1e-6)


def _tensorflow_python():
    try:
        import tensorflow  # noqa: F401
        return sys.executable
    except ImportError:
        return os.environ.get("MT_TF_PYTHON")


_TF_CHECK = r"""
import sys, numpy as np, keras
x = np.load(sys.argv[1])
for path in sys.argv[2:]:
    kind, file = path.split("=")
    if file.endswith(".keras"):
        model = keras.models.load_model(file)
    else:
        model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4, activation="relu"),
                                  keras.layers.Dense(2)])
        model.load_weights(file)
    np.save(file + ".npy", model.predict(x, verbose=0))
"""


def test_files_written_here_load_in_tensorflow(tmp_path):
    python = _tensorflow_python()
    if python is None:
        pytest.skip("TensorFlow is not importable and MT_TF_PYTHON is not set")
    seq, fun = _sequential(seed=2), _functional(seed=3)
    seq.save(str(tmp_path / "s.keras"))
    seq.save_weights(str(tmp_path / "s.weights.h5"))
    fun.save(str(tmp_path / "f.keras"))
    np.save(tmp_path / "x.npy", X)
    files = {"s": tmp_path / "s.keras", "w": tmp_path / "s.weights.h5", "f": tmp_path / "f.keras"}
    done = subprocess.run([python, "-c", _TF_CHECK, str(tmp_path / "x.npy")] +
                          [f"{k}={v}" for k, v in files.items()], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    for key, model in (("s", seq), ("w", seq), ("f", fun)):
        np.testing.assert_allclose(np.load(str(files[key]) + ".npy"), model.predict(X, verbose=0),
                                   rtol=1e-5, atol=1e-6)


def test_other_error_paths_name_what_is_wrong(tmp_path):
    three = mt.keras.Sequential([mt.keras.layers.Input(shape=(3,)), mt.keras.layers.Dense(4),
                                 mt.keras.layers.Dense(2, use_bias=False)])
    with pytest.raises(ValueError, match=r"Layer 'dense_\d+' expected 1 variables, but received "
                                         r"2 variables during loading. Expected: \['kernel'\]"):
        three.load_weights(os.path.join(FIXTURES, "tf_sequential.weights.h5"))
    three.load_weights(os.path.join(FIXTURES, "tf_sequential.weights.h5"), skip_mismatch=True)
    np.testing.assert_array_equal(three.layers[0].kernel.numpy(),
                                  mt.keras.models.load_model(
                                      os.path.join(FIXTURES, "tf_sequential.keras")
                                  ).layers[0].kernel.numpy())
    with pytest.raises(ValueError, match="File format not supported"):
        three.load_weights(str(tmp_path / "x.h5"))

    class Sub(mt.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = mt.keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)
    sub = Sub()
    sub(X)
    with pytest.raises(NotImplementedError, match="subclassed model to a .keras file"):
        sub.save(str(tmp_path / "sub.keras"))
    sub.save_weights(str(tmp_path / "sub.weights.h5"))  # weights files work
    other = Sub()
    other(X)
    other.load_weights(str(tmp_path / "sub.weights.h5"))
    np.testing.assert_array_equal(other.predict(X, verbose=0), sub.predict(X, verbose=0))
    from minitensor.keras.keras_archive import model_from_config
    with pytest.raises(ValueError, match="Unknown layer: 'Conv2D'"):
        model_from_config({"class_name": "Sequential", "config": {"name": "s", "layers": [
            {"class_name": "Conv2D", "config": {"name": "c"}}]}})
    with pytest.raises(ValueError, match="Unknown model class: 'Graph'"):
        model_from_config({"class_name": "Graph", "config": {}})


def test_callback_arguments_are_checked():
    with pytest.raises(ValueError, match="must end in `.weights.h5`"):
        mt.keras.callbacks.ModelCheckpoint("x.keras", save_weights_only=True)
    with pytest.raises(ValueError, match="saves at epoch ends only"):
        mt.keras.callbacks.ModelCheckpoint("x.keras", save_freq=10)
    with pytest.raises(ValueError, match="ModelCheckpoint mode 'up' is unknown"):
        mt.keras.callbacks.ModelCheckpoint("x.keras", mode="up")
    with pytest.raises(ValueError, match="Empty `backup_dir` argument passed"):
        mt.keras.callbacks.BackupAndRestore("")
    with pytest.raises(ValueError, match="backs up at epoch ends only"):
        mt.keras.callbacks.BackupAndRestore("b", save_freq=3)


def test_model_checkpoint_save_best_only_keeps_improvements(tmp_path):
    model = _sequential()
    model.compile(optimizer=mt.keras.optimizers.SGD(0.0), loss="mse")  # the loss stays
    cb = mt.keras.callbacks.ModelCheckpoint(str(tmp_path / "m{epoch}.keras"), monitor="loss",
                                            save_best_only=True)
    model.fit(X, X[:, :2], epochs=3, verbose=0, callbacks=[cb])
    assert os.listdir(tmp_path) == ["m1.keras"]  # later epochs did not improve


_TF_STEP = r"""
import sys, numpy as np, keras
x = np.load(sys.argv[1])
m = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(4, activation="relu"),
                      keras.layers.Dense(2)])
m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
m.optimizer.build(m.trainable_variables)
m.load_weights(sys.argv[2])
assert int(m.optimizer.iterations) == 3, int(m.optimizer.iterations)
m.fit(x, x[:, :2], epochs=1, verbose=0)
np.save(sys.argv[3], m.predict(x, verbose=0))
"""


def test_optimizer_state_crosses_to_tensorflow(tmp_path):
    """Adam's step count and moments written here continue in TensorFlow: one more step
    there equals one more step here."""
    python = _tensorflow_python()
    if python is None:
        pytest.skip("TensorFlow is not importable and MT_TF_PYTHON is not set")
    model = _sequential(seed=4)
    model.compile(optimizer=mt.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(X, X[:, :2], epochs=3, verbose=0)
    model.save_weights(str(tmp_path / "t.weights.h5"))
    np.save(tmp_path / "x.npy", X)
    done = subprocess.run([python, "-c", _TF_STEP, str(tmp_path / "x.npy"),
                           str(tmp_path / "t.weights.h5"), str(tmp_path / "tf.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    model.fit(X, X[:, :2], epochs=1, verbose=0)
    np.testing.assert_allclose(np.load(tmp_path / "tf.npy"), model.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_optimizer_state_of_a_tensorflow_file_loads():
    model = _sequential(seed=6)
    model.compile(optimizer=mt.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(X, X[:, :2], epochs=1, verbose=0)  # makes Adam's slots
    model.load_weights(os.path.join(FIXTURES, "tf_sequential.weights.h5"))
    assert int(model.optimizer.iterations) == 3  # TensorFlow's 3 epochs of one batch
    import h5py
    with h5py.File(os.path.join(FIXTURES, "tf_sequential.weights.h5")) as f:
        momentum = f["optimizer/vars/2"][()]
    np.testing.assert_array_equal(
        mt._minitensor._optimizer_slots(model.optimizer._impl,
                                        model.layers[0].kernel)[0].read_value().numpy(),
        momentum)


# A ConvNet's weights (Conv2D, MaxPooling2D, AveragePooling2D) both ways.

with open(os.path.join(FIXTURES, "cnn_expected.json")) as _f:
    CNN_EXPECTED = json.load(_f)
CNN_X = np.asarray(CNN_EXPECTED["x"], np.float32)
CNN_Y = np.stack([CNN_X.mean((1, 2, 3)), CNN_X[:, :4].max((1, 2, 3)),
                  CNN_X[:, 4:].min((1, 2, 3))], 1)


def _cnn(seed=0):
    """The model of fixtures/keras/write_cnn_with_tensorflow.py (and _TF_CNN below)."""
    mt.keras.utils.set_random_seed(seed)
    layers = mt.keras.layers
    return mt.keras.Sequential([layers.Input(shape=(9, 9, 2)),
                                layers.Conv2D(4, (3, 2), padding="same", activation="relu"),
                                layers.MaxPooling2D(),
                                layers.Conv2D(5, 2, dilation_rate=2, activation="tanh"),
                                layers.AveragePooling2D(2, padding="same"),
                                layers.Flatten(),
                                layers.Dense(3)])


def test_a_tensorflow_cnn_weights_file_loads_and_predicts_the_same():
    model = _cnn(seed=5)
    model.load_weights(os.path.join(FIXTURES, "tf_cnn.weights.h5"))
    np.testing.assert_allclose(model.predict(CNN_X, verbose=0), CNN_EXPECTED["cnn"],
                               rtol=1e-5, atol=1e-6)


_TF_CNN = r"""
import sys, numpy as np, keras
x, y = np.load(sys.argv[1]), np.load(sys.argv[2])
L = keras.layers
m = keras.Sequential([L.Input(shape=(9, 9, 2)),
                      L.Conv2D(4, (3, 2), padding="same", activation="relu"),
                      L.MaxPooling2D(), L.Conv2D(5, 2, dilation_rate=2, activation="tanh"),
                      L.AveragePooling2D(2, padding="same"), L.Flatten(), L.Dense(3)])
m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
m.optimizer.build(m.trainable_variables)
m.load_weights(sys.argv[3])
np.save(sys.argv[4], m.predict(x, verbose=0))
m.fit(x, y, epochs=1, verbose=0)
np.save(sys.argv[5], m.predict(x, verbose=0))
"""


def test_a_cnn_trained_here_loads_and_trains_on_in_tensorflow(tmp_path):
    """The weights and Adam's state of a ConvNet written here predict the same in
    TensorFlow, and one more step there (its gradients of Conv2D and the pools) equals one
    more step here."""
    python = _tensorflow_python()
    if python is None:
        pytest.skip("TensorFlow is not importable and MT_TF_PYTHON is not set")
    model = _cnn(seed=8)
    model.compile(optimizer=mt.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(CNN_X, CNN_Y, epochs=3, verbose=0)
    model.save_weights(str(tmp_path / "cnn.weights.h5"))
    np.save(tmp_path / "x.npy", CNN_X)
    np.save(tmp_path / "y.npy", CNN_Y)
    done = subprocess.run([python, "-c", _TF_CNN, str(tmp_path / "x.npy"),
                           str(tmp_path / "y.npy"), str(tmp_path / "cnn.weights.h5"),
                           str(tmp_path / "before.npy"), str(tmp_path / "after.npy")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    np.testing.assert_allclose(np.load(tmp_path / "before.npy"),
                               model.predict(CNN_X, verbose=0), rtol=1e-5, atol=1e-6)
    model.fit(CNN_X, CNN_Y, epochs=1, verbose=0)
    np.testing.assert_allclose(np.load(tmp_path / "after.npy"), model.predict(CNN_X, verbose=0),
                               rtol=1e-4, atol=1e-5)
