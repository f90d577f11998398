"""Checkpoint speed beside the disk's own and beside peers, in one run: a model of --gib GiB
of float32 variables (64 MiB each) on --device (a GPU when one exists, else the CPU) is
saved and restored with mt.train.Checkpoint, and the same bytes are written and read raw
(64 MiB writes then fsync; reads into one reused 64 MiB buffer). Peers, when importable:
torch.save / torch.load of the same weights as torch tensors on the same device, and
TensorFlow's CheckpointManager. Each figure is the best of --repeats, as GB/s and as a
ratio of raw. Needs only numpy and minitensor (torch and TensorFlow are optional).

    python bench/checkpoint_benchmark.py --dir /mnt/nvme/bench --gib 1 --device GPU:0

Page cache: every file is fsynced when written, then its pages are dropped with
posix_fadvise(POSIX_FADV_DONTNEED) right before it is read, so reads come from the disk;
the output says so, and prints a warm (cached) raw read beside the cold one so that a drop
that did not work (a tmpfs, say) shows as cold == warm."""

import argparse
import os
import shutil
import tempfile
import time

import numpy as np

import minitensor as mt

CHUNK = 64 << 20
PER_VAR = CHUNK // 4  # float32 elements of one variable


def drop_cache(path):
    """Drops the pages of a file, or of every file under a folder."""
    paths = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs] \
        if os.path.isdir(path) else [path]
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def raw_write(path, nbytes):
    block = np.random.default_rng(0).integers(0, 255, CHUNK, dtype=np.uint8).tobytes()

    def write():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        for _ in range(nbytes // CHUNK):
            os.write(fd, block)
        os.fsync(fd)
        os.close(fd)

    return timed(write)[0]


def raw_read(path, cold=True):
    if cold:
        drop_cache(path)

    def read():
        with open(path, "rb", buffering=0) as f:
            buf = bytearray(CHUNK)
            while f.readinto(buf):
                pass

    return timed(read)[0]


def make_variables(nbytes, device):
    with mt.device(device):
        return {f"w{i}": mt.Variable(np.full(PER_VAR, i, np.float32))
                for i in range(nbytes // CHUNK)}


def bench_minitensor(root, r, ckpt, variables):
    prefix = os.path.join(root, f"ckpt-{r}")
    save = timed(lambda: ckpt.write(prefix))[0]
    drop_cache(prefix + ".safetensors")
    restore = timed(lambda: ckpt.read(prefix).assert_consumed())[0]
    d2h = timed(lambda: [v.numpy() for v in variables.values()])[0]
    options = mt.train.CheckpointOptions(experimental_enable_async_checkpoint=True)
    start = time.perf_counter()
    ckpt.write(os.path.join(root, f"async-{r}"), options=options)
    blocked = time.perf_counter() - start
    ckpt.sync()
    on_disk = time.perf_counter() - start
    for p in (prefix, os.path.join(root, f"async-{r}")):
        for suffix in (".safetensors", ".manifest"):
            os.remove(p + suffix)
    return {"save": save, "restore": restore, "d2h": d2h, "async_blocked": blocked,
            "async_on_disk": on_disk}


def bench_torch(root, r, variables, device):
    import torch  # noqa: PLC0415 (optional peer)
    where = "cuda:" + device.split(":")[-1] if device.upper().startswith("GPU") else "cpu"
    if not hasattr(bench_torch, "weights"):
        bench_torch.weights = {k: torch.from_numpy(v.numpy()).to(where)
                               for k, v in variables.items()}
    weights = bench_torch.weights
    path = os.path.join(root, f"torch-{r}.pt")

    def save():
        with open(path, "wb") as f:
            torch.save(weights, f)
            f.flush()
            os.fsync(f.fileno())

    t_save = timed(save)[0]
    drop_cache(path)

    def load():
        loaded = torch.load(path, map_location=where)
        if where != "cpu":
            torch.cuda.synchronize()
        return loaded

    t_load = timed(load)[0]
    os.remove(path)
    return {"save": t_save, "restore": t_load}


def bench_tensorflow(root, r, variables, device):
    import tensorflow as tf  # noqa: PLC0415 (optional peer)
    if not hasattr(bench_tensorflow, "ckpt"):
        with tf.device(device):
            tf_vars = {k: tf.Variable(v.numpy()) for k, v in variables.items()}
        bench_tensorflow.ckpt = tf.train.Checkpoint(**tf_vars)
    directory = os.path.join(root, f"tf-{r}")
    manager = tf.train.CheckpointManager(bench_tensorflow.ckpt, directory, max_to_keep=1)

    def save():
        path = manager.save()
        for d, _, fs in os.walk(directory):
            for f in fs:
                fsync_path(os.path.join(d, f))
        return path

    t_save, path = timed(save)
    drop_cache(directory)
    t_load = timed(lambda: bench_tensorflow.ckpt.restore(path).assert_consumed())[0]
    shutil.rmtree(directory)
    return {"save": t_save, "restore": t_load}


def peers(root, r, variables, device):
    out = {}
    for name, fn in (("torch", bench_torch), ("tensorflow", bench_tensorflow)):
        try:
            out[name] = fn(root, r, variables, device)
        except ImportError:
            out[name] = None
        except Exception as e:  # noqa: BLE001 (a peer's failure is reported, not fatal)
            out[name] = f"{type(e).__name__}: {e}"
    return out


def best(rows, key):
    return min(row[key] for row in rows)


def report(gb, variables, device, raw_rows, mt_rows, peer_rows, repeats):
    print(f"{gb:.2f} GB in {len(variables)} float32 variables on {variables['w0'].device} "
          f"(--device {device}); best of {repeats}")
    print("page cache: files fsynced when written; pages dropped with posix_fadvise("
          "DONTNEED) before every timed read")
    w_raw, r_raw = best(raw_rows, "write"), best(raw_rows, "read")
    print(f"  raw write + fsync       {gb / w_raw:6.2f} GB/s")
    print(f"  raw read (cold)         {gb / r_raw:6.2f} GB/s   (warm, cached: "
          f"{gb / best(raw_rows, 'warm'):.2f} GB/s)")
    save, restore = best(mt_rows, "save"), best(mt_rows, "restore")
    print(f"  minitensor save         {gb / save:6.2f} GB/s  {w_raw / save:5.2f}x raw write")
    first = mt_rows[0]["restore"]  # pays for the fresh host memory the pool keeps after
    print(f"  minitensor restore      {gb / restore:6.2f} GB/s  {r_raw / restore:5.2f}x raw read"
          f"   (the run's first: {r_raw / first:.2f}x)")
    copy = "device-to-host copy" if device.upper().startswith("GPU") else \
        "no device copy on the CPU; copy"
    print(f"  async save              blocks the caller {best(mt_rows, 'async_blocked') * 1e3:.1f}"
          f" ms ({copy} of every variable to NumPy: {best(mt_rows, 'd2h') * 1e3:.1f} ms); "
          f"on the disk after {best(mt_rows, 'async_on_disk'):.2f} s")
    for name in ("torch", "tensorflow"):
        results = [row[name] for row in peer_rows]
        if results[0] is None:
            print(f"  {name:<23} not importable")
        elif results[0] == "skipped":
            print(f"  {name:<23} skipped (--no-peers)")
        elif any(isinstance(x, str) for x in results):
            print(f"  {name:<23} failed: {next(x for x in results if isinstance(x, str))}")
        else:
            s, ld = min(x["save"] for x in results), min(x["restore"] for x in results)
            label = "torch.save/load" if name == "torch" else "tf CheckpointManager"
            print(f"  {label + ' save':<23} {gb / s:6.2f} GB/s  {w_raw / s:5.2f}x raw write "
                  f"(+ fsync)")
            print(f"  {label + ' restore':<23} {gb / ld:6.2f} GB/s  {r_raw / ld:5.2f}x raw read")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="folder on the disk to measure")
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--device", default=None,
                        help="where the variables live: GPU:0 when a GPU exists, else CPU:0")
    parser.add_argument("--no-peers", action="store_true", help="skip torch and TensorFlow")
    args = parser.parse_args()
    device = args.device or ("GPU:0" if mt.config.list_physical_devices("GPU") else "CPU:0")
    root = tempfile.mkdtemp(prefix="mt_ckpt_bench_", dir=args.dir)
    nbytes = max(CHUNK, int(args.gib * (1 << 30)) // CHUNK * CHUNK)
    variables = make_variables(nbytes, device)
    ckpt = mt.train.Checkpoint(**variables)
    raw_rows, mt_rows, peer_rows = [], [], []
    try:
        for r in range(args.repeats):
            raw = os.path.join(root, "raw.bin")
            w = raw_write(raw, nbytes)
            cold = raw_read(raw)
            raw_rows.append({"write": w, "read": cold, "warm": raw_read(raw, cold=False)})
            os.remove(raw)
            mt_rows.append(bench_minitensor(root, r, ckpt, variables))
            if not args.no_peers:
                peer_rows.append(peers(root, r, variables, device))
    finally:
        shutil.rmtree(root)
    if args.no_peers:
        peer_rows = [{"torch": "skipped", "tensorflow": "skipped"}]
    report(nbytes / 1e9, variables, device, raw_rows, mt_rows, peer_rows, args.repeats)


if __name__ == "__main__":
    main()
