"""mt.function beside PyTorch's ways of cutting Python and launch overhead, in one run:
eager, a hand-captured torch.cuda.CUDAGraph, and torch.compile(mode="reduce-overhead").

    python3 bench/peer/function_peer.py [--device GPU|CPU] [--quick] [--calls N]
        [--steps N] [--repeats N]

(1) A chain of 100 one-element float32 adds, x = x + y (the same Python function for
    every variant), time per add: mt eager, mt.function replay (one CUDA graph launch;
    its first call, trace and capture, separately), torch eager, torch.cuda.CUDAGraph
    replay of the same 100 adds (captured as PyTorch's docs show), and torch.compile
    reduce-overhead (Inductor may fuse the adds; its compile time, the first calls until
    a call's time settles, separately).
(2) A training step of an MLP 784-256-10, batch 32, float32: h = relu(x @ w0 + b0),
    logits = h @ w1 + b1, mean sparse softmax cross entropy on integer labels, Adam(1e-3,
    epsilon 1e-7 as Keras), time per step: mt eager, mt.function replay (and its first
    call), torch eager (addmm, its best eager form; parameters are nn.Parameter so
    torch.compile treats them as static), torch.compile of the whole step function
    (forward, backward, Adam step) in reduce-overhead mode, or default mode where that
    fails (the label says which), and its compile time. Target: mt.function >= 3x
    torch eager's steps per second.
Timing: warm-up calls, then `--repeats` times: `--calls` calls (`--steps` for the MLP),
then one synchronisation (torch.cuda.synchronize; for minitensor, reading the last
result or a weight with .numpy(), which waits for the queued work); the median repeat is
shown. Output: a markdown table (figure | minitensor | baseline | ratio, ratio =
baseline / minitensor, so > 1 means minitensor is faster), then one JSON line per figure:
  {"name": "add_chain/mt_function", "value_us": 1.23, "unit": "us/op"}
Without a GPU (and --device GPU) it says so and exits 0; without torch it prints the
minitensor figures alone. --device CPU smoke-tests the script (no CUDAGraph or compile
figures there). --quick skips torch.compile (about 10 s of compiling per case).

Run (on the GPU machine, after scripts/gpu-run.sh step `python` installed the package):
  PYTHONPATH=/tmp/mt-python python3 bench/peer/function_peer.py
Written for the GPU machine's PyTorch 2.11; its torch figures checked there on an H200
(the whole step compiles in reduce-overhead mode, with graph breaks at backward).
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import minitensor as mt

try:
    import torch
except ImportError:  # the minitensor figures alone
    torch = None

kChainLength = 100
kSizes = (784, 256, 10)
kBatch = 32


def chain(x, y):
    """The 100-add chain; the same code runs on minitensor and torch tensors."""
    for _ in range(kChainLength):
        x = x + y
    return x


def timed(call, sync, n, repeats, warmup=3):
    """Returns the median over `repeats` of the seconds per call of `n` calls and one sync."""
    out = None
    for _ in range(warmup):
        out = call()
    sync(out)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(n):
            out = call()
        sync(out)
        times.append((time.perf_counter() - start) / n)
    return statistics.median(times)


def first_calls(call, sync, count):
    """Returns the seconds of each of the first `count` calls, each synchronised."""
    times = []
    for _ in range(count):
        start = time.perf_counter()
        sync(call())
        times.append(time.perf_counter() - start)
    return times


def warm_until_stable(call, sync, max_calls=30):
    """Calls until two calls in a row take under 3x the fastest seen (at least 3 calls);
    returns the seconds all those calls took: torch.compile's compile and record time."""
    times = []
    while len(times) < max_calls:
        times += first_calls(call, sync, 1)
        if len(times) >= 3 and max(times[-2:]) < 3 * min(times):
            break
    return sum(times)


def mt_sync(out):
    out.numpy()


def torch_sync(_=None):
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def mt_chain(fig, args, scope):
    with mt.device(scope):
        x, y = mt.constant([1.0]), mt.constant([1e-3])
        n = args.calls
        fig("add_chain/mt_eager", timed(lambda: chain(x, y), mt_sync, n, args.repeats)
            / kChainLength, "us/op")
        f = mt.function(chain)
        first, second = first_calls(lambda: f(x, y), mt_sync, 2)
        fig("add_chain/mt_function_first_call", first, "us")
        fig("add_chain/mt_function_second_call", second, "us")
        fig("add_chain/mt_function", timed(lambda: f(x, y), mt_sync, n, args.repeats)
            / kChainLength, "us/op")
        want, got = chain(x, y).numpy(), f(x, y).numpy()
    return (f"mt.function add chain: replay_kind={f.replay_kind} "
            f"tracing_count={f.experimental_get_tracing_count()} "
            f"replay equals eager: {np.array_equal(want, got)}")


def torch_chain(fig, args, dev):
    x = torch.tensor([1.0], device=dev)
    y = torch.tensor([1e-3], device=dev)
    n = args.calls
    fig("add_chain/torch_eager", timed(lambda: chain(x, y), torch_sync, n, args.repeats)
        / kChainLength, "us/op")
    if dev != "cuda":
        return
    side = torch.cuda.Stream()  # warm up on a side stream, then capture (PyTorch's docs)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            chain(x, y)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        chain(x, y)
    fig("add_chain/torch_cudagraph", timed(graph.replay, torch_sync, n, args.repeats)
        / kChainLength, "us/op")
    if args.quick:
        return
    compiled = torch.compile(chain, mode="reduce-overhead")
    fig("add_chain/torch_compile_warmup",
        warm_until_stable(lambda: compiled(x, y), torch_sync), "us")
    fig("add_chain/torch_compile", timed(lambda: compiled(x, y), torch_sync, n, args.repeats)
        / kChainLength, "us/op")


def mlp_data():
    """The batch and the initial weights, as numpy arrays, the same for both frameworks."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((kBatch, kSizes[0])).astype(np.float32)
    labels = rng.integers(0, kSizes[-1], kBatch)
    params = []
    for a, b in zip(kSizes[:-1], kSizes[1:]):
        params += [(rng.standard_normal((a, b)) * np.sqrt(2 / a)).astype(np.float32),
                   np.zeros(b, np.float32)]
    return x, labels, params


def mt_mlp(scope):
    """Returns a fresh model's training step, its inputs, and a sync that reads a weight."""
    x, labels, init = mlp_data()
    with mt.device(scope):
        x, labels = mt.constant(x), mt.constant(labels.astype(np.int32))
        w0, b0, w1, b1 = params = [mt.Variable(p) for p in init]
        adam = mt.keras.optimizers.Adam(1e-3)

    def step(x, labels):
        with mt.GradientTape() as tape:
            h = mt.nn.relu(mt.matmul(x, w0) + b0)
            logits = mt.matmul(h, w1) + b1
            loss = mt.reduce_mean(mt.nn.sparse_softmax_cross_entropy_with_logits(
                labels=labels, logits=logits))
        adam.apply_gradients(zip(tape.gradient(loss, params), params))
        return loss

    return step, (x, labels), lambda _: b1.numpy()  # b1: among the last weights written


def mt_mlp_figures(fig, args, scope):
    step, inputs, sync = mt_mlp(scope)
    with mt.device(scope):
        fig("mlp_step/mt_eager", timed(lambda: step(*inputs), sync, args.steps, args.repeats),
            "us/step")
    step, inputs, sync = mt_mlp(scope)
    f = mt.function(step)
    with mt.device(scope):
        first, second = first_calls(lambda: f(*inputs), sync, 2)
        fig("mlp_step/mt_function_first_call", first, "us")
        fig("mlp_step/mt_function_second_call", second, "us")
        fig("mlp_step/mt_function", timed(lambda: f(*inputs), sync, args.steps, args.repeats),
            "us/step")
        loss = float(f(*inputs).numpy())
    return (f"mt.function MLP step: replay_kind={f.replay_kind} "
            f"tracing_count={f.experimental_get_tracing_count()} last loss {loss:.4f}")


def torch_mlp(dev):
    """Returns a fresh model's training step (the same model, data and optimizer)."""
    x, labels, init = mlp_data()
    x, labels = torch.tensor(x, device=dev), torch.tensor(labels, device=dev)
    w0, b0, w1, b1 = params = [torch.nn.Parameter(torch.tensor(p, device=dev)) for p in init]
    adam = torch.optim.Adam(params, lr=1e-3, eps=1e-7)

    def step():
        h = torch.relu(torch.addmm(b0, x, w0))
        loss = torch.nn.functional.cross_entropy(torch.addmm(b1, h, w1), labels)
        adam.zero_grad(set_to_none=True)
        loss.backward()
        adam.step()
        return loss
    return step


def compiled_mlp(dev):
    """Returns (mode, compiled step, compile seconds, note), trying reduce-overhead first."""
    from torch._dynamo.utils import counters
    errors = []
    for mode in ("reduce-overhead", "default"):
        torch._dynamo.reset()
        counters.clear()
        step = torch.compile(torch_mlp(dev), mode=mode)
        try:
            seconds = warm_until_stable(step, torch_sync)
        except Exception as e:  # noqa: BLE001: any failure moves on to the next mode
            errors.append(f"{mode}: {type(e).__name__}: {str(e).splitlines()[0][:120]}")
            continue
        breaks = sum(counters["graph_break"].values())
        skips = counters["inductor"]["cudagraph_skips"]  # a Counter: 0 when absent
        note = f"torch.compile MLP step mode={mode}: {breaks} graph breaks, " \
               f"{skips} cudagraph skips" + (f"; failed first: {errors}" if errors else "")
        return mode, step, seconds, note
    return None, None, None, f"torch.compile MLP step failed: {errors}"


def torch_mlp_figures(fig, args, dev):
    fig("mlp_step/torch_eager", timed(torch_mlp(dev), torch_sync, args.steps, args.repeats),
        "us/step")
    if dev != "cuda" or args.quick:
        return None
    mode, step, seconds, note = compiled_mlp(dev)
    if step is not None:
        fig("mlp_step/torch_compile_warmup", seconds, "us")
        fig("mlp_step/torch_compile", timed(step, torch_sync, args.steps, args.repeats),
            "us/step")
        fig.labels["mlp_step/torch_compile"] = f"torch.compile({mode})"
    return note


def table(figures, labels):
    """Prints figure | minitensor | baseline | ratio for the pairs both sides have."""
    rows = [("add, per op: eager", "add_chain/mt_eager", "add_chain/torch_eager"),
            ("add, per op: mt.function vs CUDAGraph replay", "add_chain/mt_function",
             "add_chain/torch_cudagraph"),
            ("add, per op: mt.function vs torch.compile(reduce-overhead)",
             "add_chain/mt_function", "add_chain/torch_compile"),
            ("add chain, first call: trace+capture vs compile", "add_chain/mt_function_first_call",
             "add_chain/torch_compile_warmup"),
            ("MLP step: eager", "mlp_step/mt_eager", "mlp_step/torch_eager"),
            ("MLP step: mt.function vs torch eager (target >= 3x)", "mlp_step/mt_function",
             "mlp_step/torch_eager"),
            ("MLP step: mt.function vs " + labels.get("mlp_step/torch_compile", "torch.compile"),
             "mlp_step/mt_function", "mlp_step/torch_compile"),
            ("MLP step, first call: trace+capture vs compile", "mlp_step/mt_function_first_call",
             "mlp_step/torch_compile_warmup")]
    print("| figure | minitensor | baseline | ratio (baseline / minitensor) |")
    print("|---|---|---|---|")
    shown = set()
    for label, ours, theirs in rows:
        if ours not in figures or (theirs not in figures and ours in shown):
            continue  # without the baseline, each minitensor figure once
        shown.add(ours)
        a = figures[ours]
        b = figures.get(theirs)
        cell_b = show(*b) if b else "n/a"
        ratio = f"{b[0] / a[0]:.2f}x" if b else "n/a"
        print(f"| {label} | {show(*a)} | {cell_b} | {ratio} |")


def show(value_us, unit):
    if value_us >= 1e5:
        return f"{value_us / 1e6:.2f} s"
    return f"{value_us:.3f} {unit}"


class Figures(dict):
    """name -> (microseconds, unit); called with seconds to record one."""

    def __init__(self):
        super().__init__()
        self.labels = {}

    def __call__(self, name, seconds, unit):
        self[name] = (seconds * 1e6, unit)


def main():
    # Both frameworks share the card: minitensor's pool grows as needed instead of reserving
    # the GPU at start. Set before the runtime initialises (listing does not initialise it).
    gpus = mt.config.list_physical_devices("GPU")
    for gpu in gpus:
        mt.config.experimental.set_memory_growth(gpu, True)
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="GPU", choices=["GPU", "CPU"])
    p.add_argument("--quick", action="store_true", help="skip torch.compile")
    p.add_argument("--calls", type=int, default=300, help="timed add-chain calls per repeat")
    p.add_argument("--steps", type=int, default=200, help="timed MLP steps per repeat")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats; the median is shown")
    args = p.parse_args()
    if args.device == "GPU" and not gpus:
        print("function_peer: no GPU visible to minitensor; nothing measured "
              "(--device CPU runs the CPU figures)")
        return 0
    if not hasattr(mt, "function"):
        print("function_peer: this minitensor has no mt.function; nothing measured")
        return 0
    scope = f"/{args.device}:0"
    dev = "cuda" if args.device == "GPU" else "cpu"
    if torch is None:
        print("# torch is not installed: minitensor figures only")
    elif dev == "cuda" and not torch.cuda.is_available():
        print("# torch has no CUDA here: minitensor figures only")
        dev = None
    else:
        print(f"# torch {torch.__version__}, device "
              f"{torch.cuda.get_device_name() if dev == 'cuda' else 'CPU'}")
    fig, notes = Figures(), []
    start = time.perf_counter()
    notes.append(mt_chain(fig, args, scope))
    if torch is not None and dev:
        torch_chain(fig, args, dev)
    notes.append(mt_mlp_figures(fig, args, scope))
    if torch is not None and dev:
        notes.append(torch_mlp_figures(fig, args, dev))
    for note in filter(None, notes):
        print(f"# {note}")
    print(f"# {args.device}; medians of {args.repeats} repeats of {args.calls} chain calls "
          f"({kChainLength} adds each) and {args.steps} MLP steps; "
          f"whole run {time.perf_counter() - start:.1f} s")
    table(fig, fig.labels)
    if "mlp_step/torch_eager" in fig:
        speedup = fig["mlp_step/torch_eager"][0] / fig["mlp_step/mt_function"][0]
        print(f"# target MLP step mt.function >= 3x torch eager: {speedup:.2f}x "
              f"{'yes' if speedup >= 3 else 'NO'}")
    for name, (value_us, unit) in fig.items():
        print(json.dumps({"name": name, "value_us": round(value_us, 4), "unit": unit}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
