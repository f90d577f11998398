"""Checkpoints under mt.distribute.MultiWorkerMirroredStrategy (docs/checkpoints.md, "Several
workers"): two CPU worker processes on loopback are killed after epoch 2 and started again.
Keras fit with BackupAndRestore (and ModelCheckpoint) resumes at epoch 2 on both workers;
so does a custom loop that saves with a CheckpointManager as TensorFlow's tutorial has it
(the chief in the shared folder, another worker in a folder of its own that it removes).
Both end with the weights of an uninterrupted run; only the chief's folder holds checkpoint
files, and no temporary folder is left; a worker's save returns the path it wrote."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.skipif(
    not mt.distribute.is_available(),
    reason="the package was built without the distributed layer (no gRPC)")

try:
    import h5py  # noqa: F401  (ModelCheckpoint's .weights.h5)
    HAVE_H5PY = True
except ImportError:
    HAVE_H5PY = False

# Common to both workers' scripts: argv is the run's folder, the epoch to die at (-1: none)
# and whether ModelCheckpoint runs too; prints each epoch begun, each checkpoint this
# worker writes ("wrote <path in the run's folder>"), and the weights at the end.
PROLOGUE = """
import json, os, sys
import numpy as np
import minitensor as mt
root, crash_at, with_h5 = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
write = mt.train.Checkpoint._write

def logged_write(self, prefix, *args, **kwargs):
    print("wrote", os.path.relpath(prefix, root), flush=True)
    return write(self, prefix, *args, **kwargs)

mt.train.Checkpoint._write = logged_write
options = mt.distribute.experimental.CommunicationOptions(timeout_seconds=20)
strategy = mt.distribute.MultiWorkerMirroredStrategy(communication_options=options)
x = np.linspace(-1, 1, 96, dtype=np.float32).reshape(32, 3)
y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25

def begin(epoch):
    print("epoch", epoch, flush=True)
    if epoch == crash_at:
        os._exit(3)  # killed: nothing after the last save runs
"""

FIT = PROLOGUE + """
mt.keras.utils.set_random_seed(0)
with strategy.scope():
    model = mt.keras.Sequential([mt.keras.Input((3,)), mt.keras.layers.Dense(4),
                                 mt.keras.layers.Dense(1)])
    model.compile(optimizer=mt.keras.optimizers.Adam(0.01), loss="mse")
save_weights = model.save_weights

def logged_save_weights(path, *args, **kwargs):
    print("wrote", os.path.relpath(path, root), flush=True)
    return save_weights(path, *args, **kwargs)

model.save_weights = logged_save_weights

class Crash(mt.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        begin(epoch)

callbacks = [mt.keras.callbacks.BackupAndRestore(os.path.join(root, "backup")), Crash()]
if with_h5:
    callbacks.append(mt.keras.callbacks.ModelCheckpoint(
        os.path.join(root, "saved", "e{epoch}.weights.h5"), save_weights_only=True))
model.fit(x, y, epochs=4, batch_size=8, shuffle=False, verbose=0, callbacks=callbacks)
print(json.dumps([w.tolist() for w in model.get_weights()]), flush=True)
"""

# TensorFlow's tutorial pattern: the chief's manager writes the shared folder, another
# worker's writes a folder of its own, which it removes after each save; every worker
# restores the latest checkpoint of the shared folder.
LOOP = PROLOGUE + """
with strategy.scope():
    w = mt.Variable(np.zeros((3, 1), np.float32))
    b = mt.Variable(np.zeros((1,), np.float32))
    opt = mt.keras.optimizers.Adam(0.05)
epoch = mt.Variable(0, dtype=mt.int64)
checkpoint = mt.train.Checkpoint(w=w, b=b, optimizer=opt, epoch=epoch)
checkpoint_dir = os.path.join(root, "ckpt")
if strategy.extended.should_checkpoint:
    write_dir = checkpoint_dir
else:
    temp_dir = os.path.join(root, f"workertemp_{strategy.cluster_resolver.task_id}")
    write_dir = os.path.join(temp_dir, "ckpt")
manager = mt.train.CheckpointManager(checkpoint, write_dir, max_to_keep=1)
latest = mt.train.latest_checkpoint(checkpoint_dir)
if latest:
    checkpoint.restore(latest)

def step(xb, yb):
    with mt.GradientTape() as tape:
        loss = mt.reduce_sum(mt.square(mt.matmul(xb, w) + b - yb)) / 8.0
    opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))

dataset = mt.data.Dataset.from_tensor_slices((x, y)).batch(8)
while int(epoch.numpy()) < 4:
    begin(int(epoch.numpy()))
    for xb, yb in strategy.experimental_distribute_dataset(dataset):
        strategy.run(step, args=(xb, yb))
    epoch.assign_add(1)
    print("saved", manager.save(), flush=True)
    if not strategy.extended.should_checkpoint:
        mt.io.gfile.rmtree(temp_dir)
print(json.dumps([w.numpy().tolist(), b.numpy().tolist()]), flush=True)
"""


def run_workers(script, root, crash_at, n=2, timeout=60):
    """Runs `script` as workers 0..n-1 on loopback; returns each one's (exit code, stdout
    lines, stderr)."""
    addresses = [f"127.0.0.1:{mt.distribute.pick_unused_loopback_port()}" for _ in range(n)]
    processes = []
    for i in range(n):
        tf_config = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": i}}
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CONFIG=json.dumps(tf_config))
        processes.append(subprocess.Popen(
            [sys.executable, "-c", script, str(root), str(crash_at), "1" if HAVE_H5PY else "0"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    try:
        for p in processes:
            stdout, stderr = p.communicate(timeout=timeout)
            results.append((p.returncode, stdout.split("\n")[:-1], stderr))
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.communicate()
    return results


def files(folder):
    """Every file and folder under `folder`, relative to it, sorted."""
    out = []
    for parent, dirs, names in os.walk(folder):
        out += [os.path.relpath(os.path.join(parent, n), folder) for n in dirs + names]
    return sorted(out)


def fit_reference():
    """The same fit in this process, uninterrupted, without a strategy."""
    x = np.linspace(-1, 1, 96, dtype=np.float32).reshape(32, 3)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25
    mt.keras.utils.set_random_seed(0)
    model = mt.keras.Sequential([mt.keras.Input((3,)), mt.keras.layers.Dense(4),
                                 mt.keras.layers.Dense(1)])
    model.compile(optimizer=mt.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(x, y, epochs=4, batch_size=8, shuffle=False, verbose=0)
    return model.get_weights()


def loop_reference():
    """The custom loop in this process, uninterrupted, on whole batches of 8."""
    x = np.linspace(-1, 1, 96, dtype=np.float32).reshape(32, 3)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.25
    w, b = mt.Variable(np.zeros((3, 1), np.float32)), mt.Variable(np.zeros((1,), np.float32))
    opt = mt.keras.optimizers.Adam(0.05)
    for _ in range(4):
        for i in range(0, 32, 8):
            with mt.GradientTape() as tape:
                loss = mt.reduce_sum(mt.square(mt.matmul(x[i:i + 8], w) + b - y[i:i + 8])) / 8.0
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    return [w.numpy(), b.numpy()]


def printed(result, word):
    """The worker's lines that start with `word`, without it."""
    return [line.split(" ", 1)[1] for line in result[1] if line.startswith(word + " ")]


def check_crashed(results, epochs):
    for i, (code, lines, stderr) in enumerate(results):
        assert code == 3, f"worker {i}: {lines}\n{stderr}"
        assert printed(results[i], "epoch") == epochs, lines


def check_resumed(results, epochs, expected):
    weights = []
    for i, (code, lines, stderr) in enumerate(results):
        assert code == 0, f"worker {i}: {lines}\n{stderr}"
        assert printed(results[i], "epoch") == epochs, lines
        weights.append(json.loads(lines[-1]))
        for got, want in zip(weights[-1], expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert weights[0] == weights[1], "the workers' weights differ"


def fit_writes(first, last, temp):
    """The files a worker writes in epochs first..last (from 1): a backup then, with h5py,
    ModelCheckpoint's file, into its temporary folders `temp` ("" on the chief)."""
    out = []
    for e in range(first, last + 1):
        out.append(f"backup/{temp}ckpt-{e}")
        out += [f"saved/{temp}e{e}.weights.h5"] if HAVE_H5PY else []
    return out


def test_fit_with_backup_and_restore_resumes_on_both_workers(tmp_path):
    crashed = run_workers(FIT, tmp_path, crash_at=2)
    check_crashed(crashed, ["0", "1", "2"])
    # Every worker saves; only the chief writes the files asked for.
    assert printed(crashed[0], "wrote") == fit_writes(1, 2, "")
    assert printed(crashed[1], "wrote") == fit_writes(1, 2, "workertemp_1/")
    saved = ["saved", "saved/e1.weights.h5", "saved/e2.weights.h5"] if HAVE_H5PY else []
    # The chief's backup alone; no worker's temporary folder.
    assert files(tmp_path) == ["backup", "backup/checkpoint", "backup/ckpt-2.manifest",
                               "backup/ckpt-2.safetensors"] + saved

    resumed = run_workers(FIT, tmp_path, crash_at=-1)
    check_resumed(resumed, ["2", "3"], fit_reference())
    assert printed(resumed[0], "wrote") == fit_writes(3, 4, "")
    assert printed(resumed[1], "wrote") == fit_writes(3, 4, "workertemp_1/")
    # The backup is gone at the normal end, after both workers' last backups.
    assert files(tmp_path) == (["saved"] + [f"saved/e{e}.weights.h5" for e in range(1, 5)]
                               if HAVE_H5PY else [])


def test_custom_loop_with_checkpoint_manager_resumes_on_both_workers(tmp_path):
    crashed = run_workers(LOOP, tmp_path, crash_at=2)
    check_crashed(crashed, ["0", "1", "2"])
    assert files(tmp_path) == ["ckpt", "ckpt/checkpoint", "ckpt/ckpt-2.manifest",
                               "ckpt/ckpt-2.safetensors"]
    # A worker's save returns the checkpoint it wrote: the chief's in the shared folder,
    # worker 1's in its own (as TensorFlow's CheckpointManager.save).
    assert printed(crashed[0], "saved") == [f"{tmp_path}/ckpt/ckpt-{n}" for n in (1, 2)]
    assert printed(crashed[1], "saved") == [f"{tmp_path}/workertemp_1/ckpt/ckpt-{n}"
                                            for n in (1, 2)]

    resumed = run_workers(LOOP, tmp_path, crash_at=-1)
    check_resumed(resumed, ["2", "3"], loop_reference())
    assert printed(resumed[0], "saved") == [f"{tmp_path}/ckpt/ckpt-{n}" for n in (3, 4)]
    assert printed(resumed[1], "saved") == [f"{tmp_path}/workertemp_1/ckpt/ckpt-{n}"
                                            for n in (3, 4)]
    assert files(tmp_path) == ["ckpt", "ckpt/checkpoint", "ckpt/ckpt-4.manifest",
                               "ckpt/ckpt-4.safetensors"]
