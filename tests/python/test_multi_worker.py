"""mt.distribute.MultiWorkerMirroredStrategy (docs/distribute.md, "Several workers"):
two and four CPU worker processes on loopback, named by TF_CONFIG, train a small model
with a custom loop and with Keras fit and end with the weights of one process trained on
the global batch, and each reads its shard of distribute_datasets_from_function's input; the cluster's token; a worker killed mid-training fails every survivor
with UnavailableError naming it within the timeout; a worker that never starts fails the
others' start-up within it; and the options' errors, as TensorFlow's."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import minitensor as mt

pytestmark = pytest.mark.skipif(
    not mt.distribute.is_available(),
    reason="the package was built without the distributed layer (no gRPC)")

# One worker: a custom loop over a distributed dataset, then Keras fit, under one strategy.
# Prints "ready", each step's number while it trains, and the weights as JSON at the end;
# an error is printed as "error <class>: <message>".
WORKER = """
import json, sys
import numpy as np
import minitensor as mt
steps, token = int(sys.argv[1]), sys.argv[2] or None
options = mt.distribute.experimental.CommunicationOptions(timeout_seconds=3)
try:
    strategy = mt.distribute.MultiWorkerMirroredStrategy(communication_options=options,
                                                         auth_token=token)
    print("ready", strategy.num_replicas_in_sync, flush=True)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16 * steps, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.25)[:, None]
    with strategy.scope():
        w = mt.Variable(np.zeros((4, 1), np.float32))
        b = mt.Variable(np.zeros((1,), np.float32))
        opt = mt.keras.optimizers.SGD(0.1)

    def step(xb, yb):
        with mt.GradientTape() as tape:
            loss = mt.reduce_sum(mt.square(mt.matmul(xb, w) + b - yb)) / 16.0
        opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return loss

    dataset = mt.data.Dataset.from_tensor_slices((x, y)).batch(16)
    for i, (xb, yb) in enumerate(strategy.experimental_distribute_dataset(dataset)):
        strategy.run(step, args=(xb, yb))
        if i < 3:
            print("step", i, flush=True)
    mt.keras.utils.set_random_seed(3)
    with strategy.scope():
        model = mt.keras.Sequential([mt.keras.Input((4,)), mt.keras.layers.Dense(3),
                                     mt.keras.layers.Dense(1)])
        model.compile(loss="mse", optimizer=mt.keras.optimizers.SGD(0.05))
    history = model.fit(x[:64], y[:64], batch_size=16, epochs=2, shuffle=False, verbose=0)
    contexts = []

    def dataset_fn(context):  # each worker's pipeline: its shard of 8 rows
        contexts.append([context.num_input_pipelines, context.input_pipeline_id,
                         context.num_replicas_in_sync])
        return mt.data.Dataset.range(8).shard(context.num_input_pipelines,
                                              context.input_pipeline_id).batch(8)

    total = 0
    for batch in strategy.distribute_datasets_from_function(dataset_fn):
        total += int(strategy.reduce("SUM", strategy.run(mt.reduce_sum, args=(batch,)), axis=None))
    print(json.dumps({"w": w.numpy().tolist(), "b": b.numpy().tolist(),
                      "fit": [a.tolist() for a in model.get_weights()],
                      "loss": history.history["loss"], "pipeline": contexts[0],
                      "total": total}), flush=True)
except mt.errors.OpError as e:
    print("error", type(e).__name__ + ":", str(e).replace(chr(10), " "), flush=True)
    sys.exit(3)
"""


def reference(steps):
    """The same training in this process, on one device with every global batch whole."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16 * steps, 4)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], np.float32) + 0.25)[:, None]
    w, b = mt.Variable(np.zeros((4, 1), np.float32)), mt.Variable(np.zeros((1,), np.float32))
    opt = mt.keras.optimizers.SGD(0.1)
    for i in range(steps):
        xb, yb = mt.constant(x[16 * i:16 * i + 16]), mt.constant(y[16 * i:16 * i + 16])
        with mt.GradientTape() as tape:
            loss = mt.reduce_sum(mt.square(mt.matmul(xb, w) + b - yb)) / 16.0
        opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    mt.keras.utils.set_random_seed(3)
    model = mt.keras.Sequential([mt.keras.Input((4,)), mt.keras.layers.Dense(3),
                                 mt.keras.layers.Dense(1)])
    model.compile(loss="mse", optimizer=mt.keras.optimizers.SGD(0.05))
    history = model.fit(x[:64], y[:64], batch_size=16, epochs=2, shuffle=False, verbose=0)
    return w.numpy(), b.numpy(), model.get_weights(), history.history["loss"]


class Cluster:
    """`n` worker processes running WORKER, task i with TF_CONFIG naming it."""

    def __init__(self, n, steps=3, token="", start=None):
        self.addresses = [f"127.0.0.1:{mt.distribute.pick_unused_loopback_port()}"
                          for _ in range(n)]
        self.processes = {}
        for i in (range(n) if start is None else start):
            tf_config = {"cluster": {"worker": self.addresses},
                         "task": {"type": "worker", "index": i}}
            env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TF_CONFIG=json.dumps(tf_config))
            self.processes[i] = subprocess.Popen(
                [sys.executable, "-c", WORKER, str(steps), token], env=env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_for(self, i, text):
        """Reads worker i's lines until one starts with `text` (or its output ends)."""
        for line in self.processes[i].stdout:
            if line.startswith(text):
                return line
        return None

    def finish(self, timeout=60):
        """Returns each worker's (return code, last stdout line, stderr)."""
        out = {}
        for i, p in self.processes.items():
            stdout, stderr = p.communicate(timeout=timeout)
            lines = stdout.strip().splitlines()
            out[i] = (p.returncode, lines[-1] if lines else "", stderr)
        return out

    def kill(self):
        for p in self.processes.values():
            if p.poll() is None:
                p.kill()
            p.communicate()


def check_trained_as_one_process(results, steps):
    w, b, fit, loss = reference(steps)
    for i, (code, last, stderr) in results.items():
        assert code == 0, f"worker {i}: {last}\n{stderr}"
        got = json.loads(last)
        np.testing.assert_allclose(got["w"], w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["b"], b, rtol=1e-5, atol=1e-6)
        for a, e in zip(got["fit"], fit):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got["loss"], loss, rtol=1e-5)
    n = len(results)
    outputs = {i: json.loads(r[1]) for i, r in results.items()}
    for i, out in outputs.items():  # InputContext: a pipeline per worker; every row counted once
        assert out.pop("pipeline") == [n, i, n]
        assert out.pop("total") == sum(range(8))
    assert all(out == outputs[0] for out in outputs.values()), "workers differ"


def test_two_workers_with_a_token_train_as_one_process():
    cluster = Cluster(2, token="s3cret")
    try:
        check_trained_as_one_process(cluster.finish(), 3)
    finally:
        cluster.kill()


def test_four_workers_train_as_one_process():
    cluster = Cluster(4)
    try:
        check_trained_as_one_process(cluster.finish(), 3)
    finally:
        cluster.kill()


def test_a_worker_killed_mid_training_fails_every_survivor_naming_it():
    cluster = Cluster(3, steps=10_000)
    try:
        assert cluster.wait_for(1, "step 2") is not None
        cluster.processes[1].kill()
        killed = time.monotonic()
        lost = f"worker /job:worker/replica:0/task:1 at {cluster.addresses[1]}"
        errors = {}
        for i in (0, 2):
            errors[i] = cluster.wait_for(i, "error")
            assert time.monotonic() - killed < 3 + 1, "beyond the 3 s timeout"
        results = cluster.finish()
        for i in (0, 2):
            assert results[i][0] == 3, f"worker {i}: {errors[i]}\n{results[i][2]}"
            assert errors[i].startswith("error UnavailableError:"), errors[i]
            assert lost in errors[i], errors[i]
    finally:
        cluster.kill()


def test_a_worker_that_never_starts_fails_start_up_within_the_timeout():
    cluster = Cluster(2, start=[0])
    try:
        started = time.monotonic()
        code, last, stderr = cluster.finish()[0]
        assert code == 3, f"{last}\n{stderr}"
        assert last.startswith("error UnavailableError:"), last
        assert (f"worker /job:worker/replica:0/task:1 at {cluster.addresses[1]} did not answer "
                "within 3000 ms of this worker's start: is it started?") in last
        # The interpreter's start counts too; collective_group_test.cc times the wait itself.
        assert time.monotonic() - started < 3 + 10, "start-up took beyond the timeout"
    finally:
        cluster.kill()


def test_one_worker_without_a_cluster_runs_in_this_process(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    strategy = mt.distribute.MultiWorkerMirroredStrategy()
    assert strategy.num_replicas_in_sync == 1
    assert strategy.cross_device_ops == "CollectiveAllReduce"
    assert strategy.extended.should_checkpoint
    per_replica = strategy.run(lambda: mt.distribute.get_replica_context().all_reduce(
        "SUM", mt.constant([1.0, 2.0])))
    assert per_replica.numpy().tolist() == [1.0, 2.0]
    assert float(strategy.reduce("MEAN", mt.constant([1.0, 3.0]), axis=0)) == 2.0
    contexts = []

    def dataset_fn(context):
        contexts.append((context.num_input_pipelines, context.input_pipeline_id,
                         context.num_replicas_in_sync))
        return mt.data.Dataset.range(4).batch(2)

    assert len(list(strategy.distribute_datasets_from_function(dataset_fn))) == 2
    assert contexts == [(1, 0, 1)]


def test_options_are_checked_as_tensorflows():
    experimental = mt.distribute.experimental
    with pytest.raises(ValueError, match="bytes_per_pack must be non-negative"):
        experimental.CommunicationOptions(bytes_per_pack=-1)
    with pytest.raises(ValueError, match="timeout_seconds must be positive"):
        experimental.CommunicationOptions(timeout_seconds=0)
    with pytest.raises(ValueError, match="implementation must be a CommunicationImplementation"):
        experimental.CommunicationOptions(implementation="gloo")
    assert experimental.CommunicationOptions(implementation="ring").implementation is \
        experimental.CommunicationImplementation.RING
    options = experimental.CommunicationOptions(
        implementation=experimental.CommunicationImplementation.NCCL)
    with pytest.raises(mt.errors.UnimplementedError, match="NCCL between worker processes"):
        mt.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    resolver = mt.distribute.cluster_resolver.SimpleClusterResolver(
        mt.train.ClusterSpec({"worker": ["127.0.0.1:1", "127.0.0.1:2"]}))
    with pytest.raises(ValueError, match="needs this worker's task type and id"):
        mt.distribute.MultiWorkerMirroredStrategy(resolver)
    resolver = mt.distribute.cluster_resolver.SimpleClusterResolver(
        mt.train.ClusterSpec({"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}), task_type="ps",
        task_id=0)
    with pytest.raises(mt.errors.InvalidArgumentError, match="takes no part in the collectives"):
        mt.distribute.MultiWorkerMirroredStrategy(resolver)
