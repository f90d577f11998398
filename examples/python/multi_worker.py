"""Training across processes and hosts with MultiWorkerMirroredStrategy
(docs/distribute.md, "Several workers"). The same script runs once per worker; TF_CONFIG
names the cluster and this worker's task:

    # on host 1, then the same on host 2 with "index": 1
    TF_CONFIG='{"cluster": {"worker": ["host1:2222", "host2:2222"]},
                "task": {"type": "worker", "index": 0}}' \
        python multi_worker.py --backup-dir /shared/multi_worker_backup

    python multi_worker.py --local 2      # two workers on loopback ports of this machine

Each worker trains on its share of every global batch of 64; the gradients are summed over
the workers at each step, so every worker ends with the same weights. The chief (worker 0)
prints. BackupAndRestore backs the training up at each epoch's end into --backup-dir (a
folder all workers share; by default multi_worker_backup in the temporary folder; only
the chief writes there): killed and started again, every worker resumes at the epoch
reached. A normal end deletes the backup.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import minitensor as mt


def train(backup_dir):
    options = mt.distribute.experimental.CommunicationOptions(timeout_seconds=30)
    strategy = mt.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    # Every worker draws the same weights, data and shuffles.
    mt.keras.utils.set_random_seed(1)
    x = np.random.rand(512, 8).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) > 4).astype(np.float32)
    with strategy.scope():
        model = mt.keras.Sequential([mt.keras.Input((8,)),
                                     mt.keras.layers.Dense(16, activation="relu"),
                                     mt.keras.layers.Dense(1, activation="sigmoid")])
        model.compile(loss="binary_crossentropy", optimizer=mt.keras.optimizers.SGD(0.5),
                      metrics=["accuracy"])
    backup = mt.keras.callbacks.BackupAndRestore(backup_dir)
    history = model.fit(x, y, batch_size=64, epochs=5, verbose=0, callbacks=[backup])
    if strategy.extended.should_checkpoint:  # the chief
        workers = strategy.cluster_resolver.cluster_spec().num_tasks("worker")
        print(f"{workers} workers, {strategy.num_replicas_in_sync} replicas in sync")
        for epoch, loss, accuracy in zip(history.epoch, history.history["loss"],
                                         history.history["accuracy"]):
            print(f"epoch {epoch + 1}: loss {loss:.3f}, accuracy {accuracy:.3f}")


def launch(n):
    """Starts this script as workers 0..n-1 on loopback ports, with a backup folder of
    their own; returns their worst exit."""
    addresses = [f"127.0.0.1:{mt.distribute.pick_unused_loopback_port()}" for _ in range(n)]
    folder = tempfile.mkdtemp()
    workers = []
    for i in range(n):
        tf_config = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": i}}
        env = dict(os.environ, TF_CONFIG=json.dumps(tf_config))
        workers.append(subprocess.Popen(
            [sys.executable, __file__, "--backup-dir", os.path.join(folder, "backup")], env=env))
    code = max(worker.wait() for worker in workers)
    shutil.rmtree(folder)
    return code


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--local":
        sys.exit(launch(int(sys.argv[2])))
    train(sys.argv[2] if len(sys.argv) == 3 and sys.argv[1] == "--backup-dir"
          else os.path.join(tempfile.gettempdir(), "multi_worker_backup"))
