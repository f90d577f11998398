"""mt.data against tf.data on the same data in one run: a pass over 60,000 MNIST-sized rows
batched by 128, plain, with a map after the batch (scale and cast, as an input pipeline
does), with the map before it, and shuffled through a buffer of 10,000 first, iterated to
the end; the median of a few passes.

    python3 bench/data_pipeline.py [--tf-python /tmp/tfvenv/bin/python] [--passes 7]
                                   [--threads N]

With --tf-python the same script runs again under that interpreter (which has TensorFlow)
for tf.data's figures; TensorFlow is never imported into this process. --threads sets both
frameworks' intra-op threads (tf.config.threading): on a machine that other work keeps
busy, OpenMP's threads wait for a core and a 400 KB copy can take milliseconds, so
--threads 1 gives the figures that depend on the pipeline rather than on the neighbours.
"""

import argparse
import json
import statistics
import subprocess
import time

import numpy as np

ROWS, FEATURES, BATCH = 60000, 784, 128


def data():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(ROWS, FEATURES)).astype(np.float32)
    y = rng.integers(0, 10, size=ROWS).astype(np.int32)
    return x, y


def pipelines(lib):
    """Returns {name: dataset} for the framework module ``lib`` (mt or tf)."""
    x, y = data()
    base = lib.data.Dataset.from_tensor_slices((x, y))
    return {
        "batch": base.batch(BATCH),
        "batch+map": base.batch(BATCH).map(lambda xb, yb: (xb / 255.0, lib.cast(yb, lib.int64))),
        "map+batch": base.map(lambda xr, yr: (xr / 255.0, yr)).batch(BATCH),
        "shuf+batch+map": base.shuffle(10000, seed=1).batch(BATCH).map(
            lambda xb, yb: (xb / 255.0, lib.cast(yb, lib.int64))),
    }


def time_passes(dataset, passes):
    """Returns the median seconds of a full pass over ``dataset``."""
    times = []
    for _ in range(passes):
        start = time.perf_counter()
        for _ in dataset:
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(framework, passes, threads):
    if framework == "tf":
        import tensorflow as lib
    else:
        import minitensor as lib
    if threads:
        lib.config.threading.set_intra_op_parallelism_threads(threads)
    return {name: time_passes(ds, passes) for name, ds in pipelines(lib).items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=["mt", "tf"], default="mt")
    parser.add_argument("--tf-python", help="an interpreter with TensorFlow")
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: default)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures = {args.framework: measure(args.framework, args.passes, args.threads)}
    if args.json:
        print(json.dumps(figures))
        return
    if args.tf_python:
        run = subprocess.run([args.tf_python, __file__, "--framework", "tf", "--json",
                              "--passes", str(args.passes), "--threads", str(args.threads)],
                             capture_output=True, text=True, check=True)
        figures.update(json.loads(run.stdout.strip().splitlines()[-1]))
    print(f"{'pipeline':<15} " + " ".join(f"{f + ' ms':>10}" for f in figures) +
          ("  mt/tf" if "tf" in figures else ""))
    for name in figures["mt"]:
        row = " ".join(f"{figures[f][name] * 1e3:10.1f}" for f in figures)
        ratio = f"  {figures['mt'][name] / figures['tf'][name]:.2f}x" if "tf" in figures else ""
        print(f"{name:<15} {row}{ratio}")


if __name__ == "__main__":
    main()
