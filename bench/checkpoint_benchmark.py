"""Checkpoint speed beside the disk's own and beside peers, in one run: a model of --gib GiB
of float32 variables (64 MiB each) on --device (a GPU when one exists, else the CPU) is
saved and restored with mt.train.Checkpoint, and the same bytes are written and read raw
(64 MiB writes then fsync; reads into one reused 64 MiB buffer). An asynchronous save's
blocking time is shown beside the time to copy every variable to the host. Peers, when
importable: torch.save / torch.load of the same weights as torch tensors on the same
device, and TensorFlow's CheckpointManager. Each figure is the best of --repeats, as GB/s
and as a ratio of its baseline; the process's first restore (into fresh host memory) is
shown on its own line. Needs only numpy and minitensor (torch and TensorFlow are optional;
one that is absent is skipped with a line saying so).

    PYTHONPATH=python python bench/checkpoint_benchmark.py --device GPU:0
    python bench/checkpoint_benchmark.py --dir /mnt/nvme/bench --gib 1 --repeats 3

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


def file_system(path):
    """Returns the file system type and device of the mount holding `path` (Linux)."""
    best_mount, found = "", ("unknown", "unknown")
    try:
        with open("/proc/mounts") as f:
            for line in f:
                device, mount, kind = line.split()[:3]
                real = os.path.realpath(path)
                inside = real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best_mount):
                    best_mount, found = mount, (kind, device)
    except OSError:
        pass
    return found


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


def is_gpu(device):
    return device.upper().startswith("GPU")


def make_variables(nbytes, device):
    if is_gpu(device) and not mt.config.list_physical_devices("GPU"):
        raise SystemExit(f"--device {device}: minitensor sees no GPU "
                         "(mt.config.list_physical_devices('GPU') is empty); "
                         "use --device CPU:0, or a build of minitensor with CUDA")
    with mt.device(device):
        variables = {f"w{i}": mt.Variable(np.full(PER_VAR, i, np.float32))
                     for i in range(nbytes // CHUNK)}
    placed = variables["w0"].device
    if is_gpu(device) != ("GPU" in placed.upper()):
        raise SystemExit(f"--device {device}: the variables were placed on {placed}")
    return variables


def wait_for(variables, device):
    """Returns once every variable's value is in place: on a GPU, a reduction of each
    (ordered after its restore's copy) brought back to the host."""
    if is_gpu(device):
        with mt.device(device):
            for v in variables.values():
                mt.reduce_sum(v).numpy()


def bench_minitensor(root, r, ckpt, variables, device):
    prefix = os.path.join(root, f"ckpt-{r}")
    save = timed(lambda: ckpt.write(prefix))[0]
    drop_cache(prefix + ".safetensors")

    def restore():
        ckpt.read(prefix).assert_consumed()
        wait_for(variables, device)

    t_restore = timed(restore)[0]
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
    return {"save": save, "restore": t_restore, "d2h": d2h, "async_blocked": blocked,
            "async_on_disk": on_disk}


class Skipped(Exception):
    """A peer that cannot run here: its line says why."""


def bench_torch(root, r, variables, device):
    try:
        import torch  # noqa: PLC0415 (optional peer)
    except ImportError as e:
        raise Skipped(f"not installed ({e})") from e
    where = "cuda:" + device.split(":")[-1] if is_gpu(device) else "cpu"
    if is_gpu(device) and not torch.cuda.is_available():
        raise Skipped("torch sees no CUDA device (torch.cuda.is_available() is False)")
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
        loaded = torch.load(path, map_location=where, weights_only=True)
        if where != "cpu":
            torch.cuda.synchronize()
        return loaded

    t_load = timed(load)[0]
    os.remove(path)
    return {"save": t_save, "restore": t_load}


def bench_tensorflow(root, r, variables, device):
    try:
        import tensorflow as tf  # noqa: PLC0415 (optional peer)
    except ImportError as e:
        raise Skipped(f"not installed ({e})") from e
    if is_gpu(device) and not tf.config.list_physical_devices("GPU"):
        raise Skipped("TensorFlow sees no GPU")
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


PEERS = (("torch", "torch.save/load", bench_torch),
         ("tensorflow", "tf CheckpointManager", bench_tensorflow))


def peers(root, r, variables, device):
    out = {}
    for name, _, fn in PEERS:
        try:
            out[name] = fn(root, r, variables, device)
        except Skipped as e:
            out[name] = ("skipped", str(e))
        except Exception as e:  # noqa: BLE001 (a peer's failure is reported, not fatal)
            out[name] = ("failed", f"{type(e).__name__}: {e}")
    return out


def best(rows, key):
    return min(row[key] for row in rows)


def line(label, gb, seconds, base_seconds, base_name):
    print(f"  {label:<30} {gb / seconds:6.2f} GB/s  {base_seconds / seconds:5.2f}x {base_name}")


def report(root, gb, variables, device, raw_rows, mt_rows, peer_rows, repeats):
    gpu = is_gpu(device)
    print(f"{gb:.2f} GB in {len(variables)} float32 variables on {variables['w0'].device} "
          f"(--device {device}); best of {repeats}")
    kind, disk = file_system(root)
    note = "  (memory, not a disk: pass --dir on a disk)" if kind in ("tmpfs", "ramfs") else ""
    print(f"files in {root} on {kind} ({disk}){note}")
    print("page cache: files fsynced when written; pages dropped with posix_fadvise("
          "DONTNEED) before every timed read (cold); the warm raw read is from the cache")
    w_raw, r_raw = best(raw_rows, "write"), best(raw_rows, "read")
    print(f"  {'raw write + fsync':<30} {gb / w_raw:6.2f} GB/s")
    print(f"  {'raw read (cold)':<30} {gb / r_raw:6.2f} GB/s   (warm, cached: "
          f"{gb / best(raw_rows, 'warm'):.2f} GB/s)")
    where = " from the GPU" if gpu else ""
    line(f"minitensor save{where}", gb, best(mt_rows, "save"), w_raw, "raw write")
    to = " to the GPU" if gpu else ""
    line(f"minitensor restore{to}", gb, best(mt_rows, "restore"), r_raw, "raw read")
    line("  the process's first restore", gb, mt_rows[0]["restore"], r_raw, "raw read")
    blocked, on_disk = best(mt_rows, "async_blocked"), best(mt_rows, "async_on_disk")
    copy = best(mt_rows, "d2h")
    what = "device-to-host copy of every variable (.numpy())" if gpu else \
        "copy of every variable to NumPy (no device copy on the CPU)"
    print(f"  {'async save blocks the caller':<30} {blocked * 1e3:8.1f} ms  "
          f"{blocked / copy:5.3f}x the {what}: {copy * 1e3:.1f} ms; "
          f"on the disk after {on_disk:.2f} s")
    for name, label, _ in PEERS:
        results = [row[name] for row in peer_rows]
        bad = next((x for x in results if isinstance(x, tuple)), None)
        if bad is not None:
            print(f"  {name:<30} {bad[0]}: {bad[1]}")
            continue
        line(f"{label} save (+ fsync)", gb, min(x["save"] for x in results), w_raw, "raw write")
        line(f"{label} restore", gb, min(x["restore"] for x in results), r_raw, "raw read")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None,
                        help="folder on the disk to measure (default: the temporary folder)")
    parser.add_argument("--gib", type=float, default=1.0, help="model size in GiB (1)")
    parser.add_argument("--repeats", type=int, default=3, help="repetitions (3)")
    parser.add_argument("--device", default=None,
                        help="where the variables live, CPU:0 or GPU:0 "
                             "(default: GPU:0 when minitensor sees a GPU, else CPU:0)")
    parser.add_argument("--no-peers", action="store_true", help="skip torch and TensorFlow")
    parser.add_argument("--budget-s", type=float, default=60.0,
                        help="start no further repetition once the run has taken this long (60)")
    args = parser.parse_args()
    if args.repeats < 1 or args.gib <= 0:
        parser.error("--repeats must be at least 1 and --gib positive")
    started = time.perf_counter()
    device = args.device or ("GPU:0" if mt.config.list_physical_devices("GPU") else "CPU:0")
    if not args.no_peers:
        # The peers share the process: minitensor's GPU pools grow as needed instead of
        # reserving the whole card at the first allocation (TensorFlow's default).
        for gpu in mt.config.list_physical_devices("GPU"):
            mt.config.experimental.set_memory_growth(gpu, True)
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
            mt_rows.append(bench_minitensor(root, r, ckpt, variables, device))
            if not args.no_peers:
                peer_rows.append(peers(root, r, variables, device))
            if r + 1 < args.repeats and time.perf_counter() - started > args.budget_s:
                print(f"stopped after {r + 1} of {args.repeats} repetitions: the run passed "
                      f"--budget-s {args.budget_s:.0f} s")
                break
    finally:
        shutil.rmtree(root)
    if args.no_peers:
        peer_rows = [{name: ("skipped", "--no-peers") for name, _, _ in PEERS}]
    report(root, nbytes / 1e9, variables, device, raw_rows, mt_rows, peer_rows, len(mt_rows))
    print(f"(the run took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
