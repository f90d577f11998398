"""Checkpoint speed beside the disk's own: saves and restores a model of --gib GiB of
float32 variables with mt.train.Checkpoint, and in the same run writes and reads the same
number of bytes raw (dd-like: 64 MiB writes then fsync; reads after dropping the file's
pages from the cache with posix_fadvise), and prints each as GB/s and as a ratio of raw.

    python bench/checkpoint_benchmark.py --dir /mnt/nvme/bench --gib 1

Run on the machine whose figures count (the GPU host for issue 39's targets); variables
live on the default device (a GPU there)."""

import argparse
import os
import shutil
import tempfile
import time

import numpy as np

import minitensor as mt

CHUNK = 64 << 20


def drop_cache(path):
    with open(path, "rb") as f:
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def raw_write(path, nbytes):
    block = np.random.default_rng(0).integers(0, 255, CHUNK, dtype=np.uint8).tobytes()
    start = time.perf_counter()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for _ in range(nbytes // CHUNK):
        os.write(fd, block)
    os.fsync(fd)
    os.close(fd)
    return time.perf_counter() - start


def raw_read(path):
    drop_cache(path)
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(CHUNK)
        while f.readinto(buf):
            pass
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default=None, help="folder on the disk to measure")
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="mt_ckpt_bench_", dir=args.dir)
    nbytes = int(args.gib * (1 << 30)) // CHUNK * CHUNK
    per_var = 1 << 24  # 64 MiB of float32 a variable
    variables = {f"w{i}": mt.Variable(np.full(per_var, i, np.float32))
                 for i in range(nbytes // (per_var * 4))}
    ckpt = mt.train.Checkpoint(**variables)
    gb = nbytes / 1e9
    rows = []
    try:
        for r in range(args.repeats):
            raw = os.path.join(root, "raw.bin")
            w_raw = raw_write(raw, nbytes)
            r_raw = raw_read(raw)
            os.remove(raw)
            start = time.perf_counter()
            prefix = ckpt.write(os.path.join(root, f"ckpt-{r}"))
            w_ckpt = time.perf_counter() - start
            drop_cache(prefix + ".safetensors")
            start = time.perf_counter()
            ckpt.read(prefix).assert_consumed()
            r_ckpt = time.perf_counter() - start
            options = mt.train.CheckpointOptions(experimental_enable_async_checkpoint=True)
            start = time.perf_counter()
            ckpt.write(os.path.join(root, f"async-{r}"), options=options)
            blocked = time.perf_counter() - start
            ckpt.sync()
            w_async = time.perf_counter() - start
            for suffix in (".safetensors", ".manifest"):
                os.remove(os.path.join(root, f"async-{r}") + suffix)
            rows.append((w_raw, w_ckpt, r_raw, r_ckpt, blocked, w_async))
            os.remove(prefix + ".safetensors")
            os.remove(prefix + ".manifest")
    finally:
        shutil.rmtree(root)
    print(f"{gb:.2f} GB in {len(variables)} float32 variables on "
          f"{variables['w0'].device}; best of {args.repeats}")
    w_raw, w_ckpt, r_raw, r_ckpt, blocked, w_async = (min(col) for col in zip(*rows))
    print(f"  raw write + fsync   {gb / w_raw:6.2f} GB/s")
    print(f"  checkpoint save     {gb / w_ckpt:6.2f} GB/s  ({w_raw / w_ckpt:.2f}x raw)")
    print(f"  async save          blocks the caller {blocked * 1e3:.1f} ms, on the disk after "
          f"{w_async:.2f} s ({gb / w_async:.2f} GB/s)")
    print(f"  raw read (cold)     {gb / r_raw:6.2f} GB/s")
    print(f"  checkpoint restore  {gb / r_ckpt:6.2f} GB/s  ({r_raw / r_ckpt:.2f}x raw)")


if __name__ == "__main__":
    main()
