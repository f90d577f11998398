"""The GPU guide's first example on another process, as examples/distributed/
remote_guide_example.cc: two worker tasks on loopback, and this process as the client. The
matmul runs on /job:worker/task:1; its result stays there until printed.
Usage: remote_guide_example.py [DEVICE] (default "/job:worker/task:1").

The workers are this script run again with --worker, as mt-server would run them:
    mt-server --cluster worker=127.0.0.1:P0,127.0.0.1:P1 --job worker --task 1
"""
import subprocess
import sys

import minitensor as mt


def serve(addresses, task):
    """Runs task `task` of the worker job until killed."""
    cluster = mt.train.ClusterSpec({"worker": addresses.split(",")})
    mt.distribute.Server(cluster, job_name="worker", task_index=task).join()


def main(device):
    addresses = [f"127.0.0.1:{mt.distribute.pick_unused_loopback_port()}" for _ in range(2)]
    workers = [subprocess.Popen([sys.executable, __file__, "--worker", ",".join(addresses),
                                 str(task)]) for task in range(2)]
    status = 0
    try:
        # Waits for the workers to come up (connect_timeout_ms, 30 s by default).
        mt.config.experimental_connect_to_cluster(mt.train.ClusterSpec({"worker": addresses}))
        for d in mt.config.list_logical_devices():
            print(d.name)
        mt.debugging.set_log_sink(print)
        mt.debugging.set_log_device_placement(True)
        with mt.device(device):
            a = mt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
            b = mt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
            c = mt.matmul(a, b)
        print(c)
    except mt.errors.OpError as e:
        print("error:", e)
        status = 1
    for worker in workers:
        worker.kill()
        worker.wait()
    return status


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "/job:worker/task:1"))
