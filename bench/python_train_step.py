"""A training step (forward, backward, Adam update) from Python, minitensor beside PyTorch
eager on the same model and data in the same run (issue 20's benchmark):

    python3 bench/python_train_step.py [--device GPU|CPU] [--seconds S]

(a) a small MLP, batch 32, 784-256-10, float32: dispatch dominates; target >= 1.5x
    PyTorch eager's steps per second;
(b) a wide MLP, batch 4096, 4096-4096-4096, float32 and bfloat16: GEMMs dominate; target
    >= 0.95x PyTorch, and the peak pool bytes of a step <= 1.1x PyTorch's
    max_memory_allocated (GPU only).
Both sides initialise the same weights and take the same batch each step; each figure is
the best of several timed rounds, synchronised at the end of each round.
"""

import argparse
import time

import numpy as np

import minitensor as mt

try:
    import torch
except ImportError:  # the minitensor figures alone
    torch = None


def best_step_ms(step, sync, seconds, warmup=5):
    for _ in range(warmup):
        step()
    sync()
    best, deadline = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        for _ in range(10):
            step()
        sync()
        best = min(best, (time.perf_counter() - start) / 10 * 1e3)
    return best


def weights(sizes, seed):
    rng = np.random.default_rng(seed)
    return [((rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32),
             np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]


def mt_step(device, sizes, batch, dtype):
    rng = np.random.default_rng(1)
    with mt.device(f"/{device}:0"):
        x = mt.cast(mt.constant(rng.standard_normal((batch, sizes[0])).astype(np.float32)), dtype)
        y = mt.constant(rng.integers(0, sizes[-1], batch).astype(np.int32))
        params = []
        for w, b in weights(sizes, 0):
            params += [mt.Variable(mt.cast(mt.constant(w), dtype)),
                       mt.Variable(mt.cast(mt.constant(b), dtype))]
        adam = mt.keras.optimizers.Adam(1e-3)

    def step():
        with mt.device(f"/{device}:0"):
            with mt.GradientTape() as tape:
                h = x
                for i in range(0, len(params), 2):
                    h = mt.nn.bias_add(mt.matmul(h, params[i]), params[i + 1])
                    if i + 2 < len(params):
                        h = mt.nn.relu(h)
                loss = mt.reduce_mean(mt.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=h))
            adam.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss

    def sync():
        float(mt.reduce_sum(mt.cast(params[0], mt.float32)))
    return step, sync


def torch_step(device, sizes, batch, dtype):
    dev = "cuda" if device == "GPU" else "cpu"
    rng = np.random.default_rng(1)
    x = torch.tensor(rng.standard_normal((batch, sizes[0])).astype(np.float32), device=dev).to(dtype)
    y = torch.tensor(rng.integers(0, sizes[-1], batch), device=dev)
    params = []
    for w, b in weights(sizes, 0):
        params += [torch.tensor(w, device=dev).to(dtype).requires_grad_(),
                   torch.tensor(b, device=dev).to(dtype).requires_grad_()]
    adam = torch.optim.Adam(params, lr=1e-3, eps=1e-7)

    def step():
        h = x
        for i in range(0, len(params), 2):
            h = torch.addmm(params[i + 1], h, params[i])
            if i + 2 < len(params):
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        adam.zero_grad(set_to_none=True)
        loss.backward()
        adam.step()
        return loss

    def sync():
        if dev == "cuda":
            torch.cuda.synchronize()
    return step, sync


def peak_bytes(device, step, sync, framework):
    if framework == "mt":
        mt.config.experimental.reset_memory_stats(f"{device}:0")
        step()
        sync()
        return mt.config.experimental.get_memory_info(f"{device}:0")["peak"]
    torch.cuda.reset_peak_memory_stats()
    step()
    sync()
    return torch.cuda.max_memory_allocated()


def main():
    # Both frameworks share the card: minitensor's pool grows as needed instead of reserving
    # the whole GPU at start (TensorFlow's default, and minitensor's). Set before the runtime
    # initialises (listing physical devices does not initialise it).
    gpus = mt.config.list_physical_devices("GPU")
    for gpu in gpus:
        mt.config.experimental.set_memory_growth(gpu, True)
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="GPU" if gpus else "CPU")
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    cases = [("(a) MLP 784-256-10, batch 32", [784, 256, 10], 32, "float32"),
             ("(b) MLP 4096-4096-4096, batch 4096", [4096, 4096, 4096, 4096], 4096, "float32"),
             ("(b) MLP 4096-4096-4096, batch 4096", [4096, 4096, 4096, 4096], 4096, "bfloat16")]
    print(f"training step on {args.device}: ms per step (best of rounds)")
    for name, sizes, batch, dtype in cases:
        if args.device == "CPU" and batch > 32:
            continue  # the wide model is a GPU figure
        step, sync = mt_step(args.device, sizes, batch, getattr(mt, dtype))
        ours = best_step_ms(step, sync, args.seconds)
        line = f"{name} {dtype:9s} minitensor {ours:8.3f} ms"
        if torch is not None and (args.device == "CPU" or torch.cuda.is_available()):
            tstep, tsync = torch_step(args.device, sizes, batch, getattr(torch, dtype))
            theirs = best_step_ms(tstep, tsync, args.seconds)
            line += f"  torch {theirs:8.3f} ms  speedup {theirs / ours:5.2f}x"
            if args.device == "GPU":
                ours_peak = peak_bytes(args.device, step, sync, "mt")
                theirs_peak = peak_bytes(args.device, tstep, tsync, "torch")
                line += (f"  peak {ours_peak / 2**20:8.1f} MiB vs torch {theirs_peak / 2**20:8.1f}"
                         f" MiB ({ours_peak / theirs_peak:4.2f}x)")
        print(line, flush=True)


if __name__ == "__main__":
    main()
