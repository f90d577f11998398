"""TensorFlow's remote eager runtime, measured as bench/distributed/remote_benchmark.cc.

Needs tensorflow-cpu from PyPI in a virtual environment of its own (not a dependency of
minitensor):  python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu
              /tmp/tfvenv/bin/python bench/distributed/tf_remote_benchmark.py
One worker task on a loopback port in a child process; this process is the client.
"""
import multiprocessing
import socket
import statistics
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(address):
    import tensorflow as tf
    spec = tf.train.ClusterSpec({"worker": [address]})
    tf.distribute.Server(spec, job_name="worker", task_index=0, protocol="grpc").join()


def timed(fn, seconds):
    fn()  # warm up
    times = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), len(times)


def main():
    address = f"127.0.0.1:{free_port()}"
    worker = multiprocessing.get_context("spawn").Process(target=serve, args=(address,))
    worker.start()
    import numpy as np
    import tensorflow as tf
    tf.config.experimental_connect_to_cluster(tf.train.ClusterSpec({"worker": [address]}))
    task = "/job:worker/task:0"
    with tf.device(task):
        x = tf.constant([1.0])
    def add_with_device():
        with tf.device(task):
            return tf.add(x, x)

    def add_and_read():
        with tf.device(task):
            return tf.add(x, x).numpy()

    local = tf.zeros([16 << 20])

    def round_trip():
        with tf.device(task):
            remote = tf.identity(local)
        return remote.numpy()

    # A new local tensor each time: TensorFlow keeps the task's copy of a local tensor
    # beside it ("mirroring"), so round_trip sends `local` once and then only reads back.
    fill_value = [0.0]

    def round_trip_new():
        fill_value[0] += 1
        fresh = tf.fill([16 << 20], fill_value[0])
        with tf.device(task):
            remote = tf.identity(fresh)
        return remote.numpy()

    with tf.device(task):
        on_task = tf.zeros([16 << 20])

    def read():
        return on_task.numpy()

    per_call_mib = {"RoundTrip64MiB": 128, "RoundTripNew64MiB": 128, "Read64MiB": 64}
    for name, fn, secs in [("RemoteAdd", add_with_device, 3), ("RemoteAddAndRead", add_and_read, 3),
                           ("RoundTrip64MiB", round_trip, 6), ("RoundTripNew64MiB", round_trip_new, 6),
                           ("Read64MiB", read, 4)]:
        median, n = timed(fn, secs)
        mib = per_call_mib.get(name)
        extra = f"  {mib / median / 1024:.2f} GiB/s" if mib else ""
        print(f"TF {name:18s} median {median * 1e6:10.1f} us over {n} runs{extra}", flush=True)
    assert np.all(round_trip() == 0)
    worker.kill()


if __name__ == "__main__":
    main()
