"""The CPU all-reduce between worker processes on loopback: MultiWorkerMirroredStrategy's
ring (ReplicaContext.all_reduce of one float32 tensor) beside the same ring over raw TCP
sockets in NumPy (the floor: the bytes the ring moves, with nothing but the kernel's
copies and the additions) and PyTorch's gloo all_reduce when torch imports.

    python bench/distributed/ring_all_reduce_benchmark.py [--workers 2 4] [--mib 4 64]
                                                          [--repeats 5]

Prints, per worker count and size, each side's median time and bus bandwidth
(2 (n - 1) / n * bytes / time, as nccl-tests count it) and the ratio to the floor.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import numpy as np


def ports(n):
    import minitensor as mt
    return [mt.distribute.pick_unused_loopback_port() for _ in range(n)]


def timed(fn, repeats):
    fn()  # warm-up: connections, buffers
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def minitensor_ring(rank, n, elements, repeats):
    import minitensor as mt
    options = mt.distribute.experimental.CommunicationOptions(timeout_seconds=120)
    strategy = mt.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    value = mt.constant(np.full(elements, rank + 1, np.float32))

    def once():
        out = strategy.run(lambda: mt.distribute.get_replica_context().all_reduce("SUM", value))
        assert float(out[0]) == n * (n + 1) / 2
    return timed(once, repeats)


def tcp_ring(rank, n, elements, repeats, addresses):
    """The ring of Note [Ring all-reduce] over plain sockets: the floor."""
    server = socket.create_server(("127.0.0.1", addresses[rank]))
    server.settimeout(60)
    deadline = time.monotonic() + 60
    while True:  # the next worker may not listen yet
        try:
            nxt = socket.create_connection(("127.0.0.1", addresses[(rank + 1) % n]))
            break
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)
    prev, _ = server.accept()
    data = np.full(elements, rank + 1, np.float32)
    bounds = [elements * i // n for i in range(n + 1)]
    scratch = np.empty(bounds[1] - bounds[0] + 1, np.float32)

    def step(out, into, add):
        o0, o1, i0, i1 = bounds[out], bounds[out + 1], bounds[into], bounds[into + 1]
        sender = threading.Thread(target=nxt.sendall, args=(memoryview(data[o0:o1]).cast("B"),))
        sender.start()
        view, got = memoryview(scratch[:i1 - i0]).cast("B"), 0
        while got < len(view):
            got += prev.recv_into(view[got:])
        sender.join()
        if add:
            data[i0:i1] += scratch[:i1 - i0]
        else:
            data[i0:i1] = scratch[:i1 - i0]

    def once():
        for s in range(n - 1):
            step((rank - s) % n, (rank - s - 1) % n, True)
        for s in range(n - 1):
            step((rank + 1 - s) % n, (rank - s) % n, False)
    return timed(once, repeats)


def gloo(rank, n, elements, repeats, port):
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        return None
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=n)
    value = torch.full((elements,), float(rank + 1))
    seconds = timed(lambda: dist.all_reduce(value.clone()), repeats)
    dist.destroy_process_group()
    return seconds


def worker(args):
    rank, n = args.rank, args.n
    elements = args.mib * (1 << 20) // 4
    result = {"minitensor": minitensor_ring(rank, n, elements, args.repeats),
              "tcp": tcp_ring(rank, n, elements, args.repeats, args.tcp_ports),
              "gloo": gloo(rank, n, elements, args.repeats, args.gloo_port)}
    if rank == 0:
        print(json.dumps(result), flush=True)


def run(n, mib, repeats):
    addresses = [f"127.0.0.1:{p}" for p in ports(n)]
    tcp_ports, gloo_port = ports(n), ports(1)[0]
    procs = []
    for rank in range(n):
        tf_config = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": rank}}
        env = dict(os.environ, TF_CONFIG=json.dumps(tf_config), CUDA_VISIBLE_DEVICES="")
        command = [sys.executable, __file__, "--rank", str(rank), "--n", str(n), "--mib",
                   str(mib), "--repeats", str(repeats), "--gloo-port", str(gloo_port),
                   "--tcp-ports", *map(str, tcp_ports)]
        procs.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, text=True))
    out = procs[0].communicate(timeout=600)[0]
    for p in procs[1:]:
        p.wait(timeout=60)
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--mib", type=int, nargs="+", default=[4, 64])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rank", type=int)
    parser.add_argument("--n", type=int)
    parser.add_argument("--tcp-ports", type=int, nargs="+")
    parser.add_argument("--gloo-port", type=int)
    args = parser.parse_args()
    if args.rank is not None:
        args.mib = args.mib[0]
        return worker(args)
    print(f"{'workers':>7} {'MiB':>4} | {'minitensor':>18} | {'raw TCP ring':>18} | "
          f"{'gloo':>18} | mt vs TCP")
    for n in args.workers:
        for mib in args.mib:
            r = run(n, mib, args.repeats)
            bus = 2 * (n - 1) / n * mib * (1 << 20) / 1e9

            def cell(seconds):
                return f"{'-':>18}" if seconds is None else \
                    f"{seconds * 1e3:7.1f} ms {bus / seconds:5.2f} GB/s"
            print(f"{n:>7} {mib:>4} | {cell(r['minitensor'])} | {cell(r['tcp'])} | "
                  f"{cell(r['gloo'])} | {r['tcp'] / r['minitensor']:.2f}x")


if __name__ == "__main__":
    main()
