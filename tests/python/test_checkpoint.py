"""mt.train.Checkpoint and CheckpointManager with TensorFlow's names and semantics: round
trips of variables, optimizers and Keras models, the status object, deferred restoration,
damaged files, and checkpoints whose tensors open with the safetensors package."""

import json
import os

import numpy as np
import pytest

import minitensor as mt


def _model(seed=0, built=True):
    """Two Dense layers, built at once from an Input, or on their first call."""
    mt.keras.utils.set_random_seed(seed)
    layers = [mt.keras.layers.Dense(4, activation="relu"), mt.keras.layers.Dense(1)]
    return mt.keras.Sequential(([mt.keras.layers.Input(shape=(3,))] if built else []) + layers)


def _train_step(model, opt, x, y):
    with mt.GradientTape() as tape:
        loss = mt.reduce_mean(mt.square(model(x) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply_gradients(zip(grads, model.trainable_variables))


X = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
Y = np.ones((4, 1), np.float32)


def test_variables_round_trip_and_status_asserts(tmp_path):
    v = mt.Variable([1.0, 2.0])
    w = mt.Variable(np.arange(6, dtype=np.int64).reshape(2, 3))
    ckpt = mt.train.Checkpoint(v=v, w=w)
    path = ckpt.save(str(tmp_path / "ckpt"))
    assert path == str(tmp_path / "ckpt-1")
    assert mt.train.latest_checkpoint(str(tmp_path)) == path
    v.assign([5.0, 5.0])
    w.assign(np.zeros((2, 3), np.int64))
    status = ckpt.restore(path)
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(w.numpy(), np.arange(6).reshape(2, 3))
    assert int(ckpt.save_counter.numpy()) == 1
    assert ckpt.save(str(tmp_path / "ckpt")) == str(tmp_path / "ckpt-2")


def test_optimizer_state_resumes_training_exactly(tmp_path):
    model, opt = _model(), mt.keras.optimizers.Adam(0.05)
    for _ in range(3):
        _train_step(model, opt, X, Y)
    path = mt.train.Checkpoint(model=model, optimizer=opt).write(str(tmp_path / "w"))
    model2, opt2 = _model(seed=1), mt.keras.optimizers.Adam(0.05)
    mt.train.Checkpoint(model=model2, optimizer=opt2).read(path).assert_consumed()
    assert int(opt2.iterations) == 3
    _train_step(model, opt, X, Y)
    _train_step(model2, opt2, X, Y)
    for a, b in zip(model.weights, model2.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_gpu_model_is_read_straight_into_gpu_memory(tmp_path, needs_gpu):
    model, opt = _model(), mt.keras.optimizers.Adam(0.05)
    big = mt.Variable(np.random.default_rng(0).standard_normal(4 << 20).astype(np.float32))
    for _ in range(2):
        _train_step(model, opt, X, Y)
    path = mt.train.Checkpoint(model=model, optimizer=opt, big=big).write(str(tmp_path / "g"))
    model2, opt2 = _model(seed=1), mt.keras.optimizers.Adam(0.05)
    big2 = mt.Variable(np.zeros(4 << 20, np.float32))
    _train_step(model2, opt2, X, Y)  # the slots exist before the restore
    mt.config.experimental.reset_memory_stats("CPU:0")
    before = mt.config.experimental.get_memory_info("CPU:0")["current"]
    mt.train.Checkpoint(model=model2, optimizer=opt2, big=big2).read(path).assert_consumed()
    # 16 MiB went to the GPU through small host buffers, never whole into CPU:0.
    assert mt.config.experimental.get_memory_info("CPU:0")["peak"] - before < 8 << 20
    assert "GPU:0" in big2.device and all("GPU:0" in w.device for w in model2.weights)
    np.testing.assert_array_equal(big2.numpy(), big.numpy())
    _train_step(model, opt, X, Y)
    _train_step(model2, opt2, X, Y)
    for a, b in zip(model.weights, model2.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_deferred_restoration_of_a_model_built_later(tmp_path):
    model, opt = _model(), mt.keras.optimizers.Adam(0.05)
    _train_step(model, opt, X, Y)
    path = mt.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "c"))
    later, opt2 = _model(seed=3, built=False), mt.keras.optimizers.Adam(0.05)
    status = mt.train.Checkpoint(model=later, optimizer=opt2).restore(path)
    with pytest.raises(AssertionError, match="were not assigned to any object"):
        status.assert_consumed()
    np.testing.assert_allclose(later(X).numpy(), model(X).numpy())  # built, then restored
    _train_step(model, opt, X, Y)
    _train_step(later, opt2, X, Y)
    for a, b in zip(model.weights, later.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    status.assert_consumed()


def test_partial_restore_and_unmatched_objects(tmp_path):
    v, extra = mt.Variable([1.0]), mt.Variable([2.0])
    path = mt.train.Checkpoint(v=v, u=mt.Variable([3.0])).write(str(tmp_path / "p"))
    status = mt.train.Checkpoint(v=v, extra=extra).read(path)
    with pytest.raises(AssertionError, match=r"Some objects had no value in checkpoint .*"
                                             r"\['extra'\]"):
        status.assert_existing_objects_matched()
    status.expect_partial()
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        mt.train.Checkpoint(v=v).restore(None).assert_consumed()


def test_errors_name_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="expecting x to be a trackable object"):
        mt.train.Checkpoint(x=3)
    v = mt.Variable([1.0, 2.0])
    path = mt.train.Checkpoint(v=v).write(str(tmp_path / "e"))
    wrong = mt.Variable([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"Received incompatible tensor with shape \(2,\) and "
                                         r"dtype float32 when attempting to restore variable "
                                         r"with shape \(3,\)"):
        mt.train.Checkpoint(v=wrong).read(path)
    np.testing.assert_array_equal(wrong.numpy(), [1.0, 2.0, 3.0])
    with pytest.raises(mt.errors.NotFoundError, match="no checkpoint at"):
        mt.train.Checkpoint(v=v).read(str(tmp_path / "none"))
    data = path + ".safetensors"
    raw = bytearray(open(data, "rb").read())
    raw[-2] ^= 0x40
    open(data, "wb").write(bytes(raw))
    v.assign([7.0, 7.0])
    with pytest.raises(mt.errors.DataLossError, match=r"e.safetensors: tensor 'v': checksum "
                                                      r"mismatch"):
        mt.train.Checkpoint(v=v).read(path)
    np.testing.assert_array_equal(v.numpy(), [7.0, 7.0])


def test_manager_keeps_the_newest_and_latest_checkpoint(tmp_path):
    v = mt.Variable([0.0])
    ckpt = mt.train.Checkpoint(v=v)
    manager = mt.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2,
                                         checkpoint_name="model")
    assert manager.latest_checkpoint is None
    assert mt.train.latest_checkpoint(str(tmp_path)) is None
    for i in range(4):
        v.assign([float(i)])
        manager.save()
    assert manager.checkpoints == [str(tmp_path / "model-3"), str(tmp_path / "model-4")]
    assert mt.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model-4")
    assert not os.path.exists(tmp_path / "model-1.manifest")
    assert manager.save(checkpoint_number=100) == str(tmp_path / "model-100")
    again = mt.train.CheckpointManager(mt.train.Checkpoint(v=v), str(tmp_path), max_to_keep=2,
                                       checkpoint_name="model")
    assert again.checkpoints == [str(tmp_path / "model-4"), str(tmp_path / "model-100")]
    v.assign([-1.0])
    assert again.restore_or_initialize() == str(tmp_path / "model-100")
    np.testing.assert_array_equal(v.numpy(), [3.0])
    with pytest.raises(ValueError, match="Expected a positive integer or `None` for "
                                         "`max_to_keep`, got 0."):
        mt.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_keep_checkpoint_every_n_hours_preserves_old_ones(tmp_path):
    v = mt.Variable([0.0])
    manager = mt.train.CheckpointManager(mt.train.Checkpoint(v=v), str(tmp_path), max_to_keep=1,
                                         keep_checkpoint_every_n_hours=0.0)
    manager.save()
    manager.save()
    assert manager.checkpoints == [str(tmp_path / "ckpt-2")]
    assert os.path.exists(tmp_path / "ckpt-1.manifest")  # preserved, no longer listed


def test_tensors_open_with_the_safetensors_package(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    model, opt = _model(), mt.keras.optimizers.Adam(0.05)
    _train_step(model, opt, X, Y)
    path = mt.train.Checkpoint(model=model, optimizer=opt).write(str(tmp_path / "s"))
    tensors = safetensors_numpy.load_file(path + ".safetensors")
    np.testing.assert_array_equal(tensors["model/layer-0/kernel"], model.layers[0].kernel.numpy())
    assert tensors["optimizer/iterations"] == 1
    assert tensors["optimizer/slots/model/layer-0/kernel/0"].shape == (3, 4)


def test_every_dtype_round_trips_with_safetensors_names(tmp_path):
    safetensors = pytest.importorskip("safetensors")
    values = {"f32": np.array([1.5, -2.0], np.float32), "f64": np.array([[0.25]], np.float64),
              "f16": np.array([0.5, 65504.0], np.float16), "i32": np.array([-7], np.int32),
              "i64": np.array([2**40], np.int64), "b": np.array([True, False])}
    bf16 = [1.5, -2.0, 3.0]  # exact in bfloat16
    variables = {k: mt.Variable(v) for k, v in values.items()}
    variables["bf16"] = mt.Variable(mt.cast(mt.constant(bf16), mt.bfloat16))
    path = mt.train.Checkpoint(**variables).write(str(tmp_path / "d")) + ".safetensors"
    names = {"f32": "F32", "f64": "F64", "f16": "F16", "i32": "I32", "i64": "I64",
             "b": "BOOL", "bf16": "BF16"}
    with safetensors.safe_open(path, framework="np") as f:
        for k, dtype in names.items():
            assert f.get_slice(k).get_dtype() == dtype
        for k, v in values.items():
            np.testing.assert_array_equal(f.get_tensor(k), v)
    with open(path, "rb") as f:  # BF16 is the upper half of float32, as safetensors has it
        header_bytes = int.from_bytes(f.read(8), "little")
        begin, end = json.loads(f.read(header_bytes))["bf16"]["data_offsets"]
        f.seek(8 + header_bytes + begin)
        halves = np.frombuffer(f.read(end - begin), np.uint16).astype(np.uint32) << 16
    np.testing.assert_array_equal(halves.view(np.float32), bf16)
    fresh = {k: mt.Variable(np.zeros_like(v)) for k, v in values.items()}
    fresh["bf16"] = mt.Variable(mt.cast(mt.zeros([3]), mt.bfloat16))
    mt.train.Checkpoint(**fresh).read(path[:-len(".safetensors")]).assert_consumed()
    for k, v in values.items():
        np.testing.assert_array_equal(fresh[k].numpy(), v)
    np.testing.assert_array_equal(mt.cast(fresh["bf16"], mt.float32).numpy(), bf16)


def test_async_saves_take_the_values_of_their_call(tmp_path):
    v = mt.Variable([1.0, 2.0])
    ckpt = mt.train.Checkpoint(v=v)
    manager = mt.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
    options = mt.train.CheckpointOptions(experimental_enable_async_checkpoint=True)
    manager.save(options=options)
    v.assign([9.0, 9.0])  # while the first save may still be writing
    manager.save(options=options)  # waits for the first
    v.assign([0.0, 0.0])
    ckpt.sync()
    assert mt.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ckpt-2")
    assert not os.path.exists(tmp_path / "ckpt-1.manifest")
    ckpt.restore(str(tmp_path / "ckpt-2")).assert_consumed()
    np.testing.assert_array_equal(v.numpy(), [9.0, 9.0])
    def fail(path):
        raise OSError(f"callback failed after {os.path.basename(path)}")
    failing = mt.train.CheckpointOptions(experimental_enable_async_checkpoint=True,
                                         experimental_write_callbacks=[fail])
    ckpt.write(str(tmp_path / "c"), options=failing)
    with pytest.raises(OSError, match="callback failed after c"):
        ckpt.sync()
    ckpt.sync()  # reported once


def test_manager_interval_and_init_fn(tmp_path):
    step = mt.Variable(0, dtype=mt.int64)
    ckpt = mt.train.Checkpoint(step=step)
    with pytest.raises(ValueError, match="`step_counter` should be passed"):
        mt.train.CheckpointManager(ckpt, str(tmp_path), 3, checkpoint_interval=2)
    called = []
    manager = mt.train.CheckpointManager(ckpt, str(tmp_path), 3, step_counter=step,
                                         checkpoint_interval=2,
                                         init_fn=lambda: called.append(1))
    assert manager.restore_or_initialize() is None and called == [1]
    saved = []
    for i in range(5):
        step.assign(i)
        saved.append(manager.save() is not None)
    assert saved == [True, False, True, False, True]
