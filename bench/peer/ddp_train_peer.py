"""PyTorch DistributedDataParallel on the "wide MLP" training step of
bench/train_step_benchmark.cc: the peer that minitensor's MirroredStrategy over NCCL is set
beside. Not a dependency of minitensor: torch comes from the machine that runs it.

What one step is (the same as bench/peer/torch_train_peer.cc, the libtorch peer):
  MLP 4096-4096-4096-4096: three layers h = addmm(b, h, W) with W stored (in, out), ReLU
  after the first two; loss = mean sparse softmax cross entropy (F.cross_entropy) over
  integer labels in [0, 4096); zero_grad, backward, Adam(lr=1e-3, eps=1e-7, PyTorch's
  defaults otherwise: foreach on CUDA). He-normal weights (normal * sqrt(2 / fan_in)), zero
  biases, normal inputs, all drawn from seed 1 on the device and then cast, so float32 and
  bfloat16 runs hold the parameters, gradients and Adam slots in that dtype (no autocast).
  The global batch (4096) is split evenly over the ranks: rank r takes rows
  [r * B/N, (r + 1) * B/N) of the same global batch, and DDP averages the gradients, so
  every rank applies the gradient of the global batch's mean loss.
What is compared:
  plain: the model without DDP (one process; only when N = 1);
  ddp:   DistributedDataParallel with its defaults (bucket_cap_mb=25, gradients reduced
         in buckets during backward), NCCL on GPUs (gloo on the CPU).
  TF32 is left at PyTorch's default, off for matmuls, as torch_train_peer.cc leaves it;
  the script prints the setting it ran with.
Timing: `--warmup` steps, then `--repeats` times: all ranks meet (an all-reduce and a
device sync), `--steps` steps, a device sync; a repeat's time is the slowest rank's wall
clock, and rank 0 prints the median over repeats (ms per step; examples/s = global batch /
time per step). One machine-readable line per configuration, then a human one:
  ddp wide float32 gpus=2 ms_per_step=12.34 examples_per_s=331929 width=4096 batch=4096 ...
  # ddp wide MLP 4096x3 float32, 2 GPUs (NCCL), batch 4096 (2048 per rank): ...
(`procs=N` instead of `gpus=N` on the CPU.)

Run (on the GPU machine, from the repository root; scripts/gpu-run.sh step `ddpbench`):
  torchrun --standalone --nproc_per_node=1 bench/peer/ddp_train_peer.py --dtype float32
  torchrun --standalone --nproc_per_node=2 bench/peer/ddp_train_peer.py \
      --dtype float32 bfloat16 --steps 20 --warmup 5
Smoke test without a GPU (CPU torch in a throwaway virtual environment):
  torchrun --standalone --nproc_per_node=2 bench/peer/ddp_train_peer.py \
      --device cpu --backend gloo --width 64 --batch 64 --steps 3 --check
`--check` also trains a plain model on the whole global batch in every rank and reports
how far DDP's parameters are from it after the timed steps. They agree to rounding: on 2 CPU
ranks, width 64, 14 steps, float32 6e-8 and bfloat16 0.014 (a few bfloat16 steps of the
largest parameters, about 0.7: each half batch's gradient is rounded before the average).
Without torchrun the script runs as one rank. Written for the GPU machine's PyTorch 2.11;
smoke-tested with PyTorch 2.15's wheel on 2 CPU ranks.
"""

import argparse
import gc
import math
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel


class Mlp(nn.Module):
    """Layers h = addmm(b, h, W), ReLU between them; parameters w0, b0, w1, b1, ..."""

    def __init__(self, params):
        super().__init__()
        self.params = nn.ParameterList(params)

    def forward(self, x):
        h = x
        for i in range(0, len(self.params), 2):
            h = torch.addmm(self.params[i + 1], h, self.params[i])
            if i + 2 < len(self.params):
                h = torch.relu(h)
        return h


def make_data(sizes, batch, dtype, device):
    """Returns the global batch and fresh parameters, drawn as torch_train_peer.cc draws them."""
    torch.manual_seed(1)
    x = torch.randn(batch, sizes[0], device=device).to(dtype)
    y = torch.randint(0, sizes[-1], (batch,), device=device, dtype=torch.int64)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        w = torch.randn(fan_in, fan_out, device=device) * math.sqrt(2.0 / fan_in)
        params += [nn.Parameter(w.to(dtype)), nn.Parameter(torch.zeros(fan_out, device=device,
                                                                        dtype=dtype))]
    return x, y, params


def make_step(model, x, y):
    adam = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)

    def step():
        loss = F.cross_entropy(model(x), y)
        adam.zero_grad()
        loss.backward()
        adam.step()
        return loss
    return step


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def meet(device):
    """All ranks wait here for one another and for their devices."""
    if dist.is_initialized():
        t = torch.zeros(1, device=device)
        dist.all_reduce(t)
    sync(device)


def slowest(seconds, device):
    """Returns the largest of the ranks' `seconds`."""
    if not dist.is_initialized():
        return seconds
    t = torch.tensor([seconds], dtype=torch.float64, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def measure(step, args, device):
    """Returns the seconds per step of each repeat and the last loss."""
    for _ in range(args.warmup):
        step()
    times = []
    for _ in range(args.repeats):
        meet(device)
        start = time.perf_counter()
        for _ in range(args.steps):
            loss = step()
        sync(device)
        times.append(slowest((time.perf_counter() - start) / args.steps, device))
    return times, loss.item()


def run(mode, dtype_name, args, device, rank, world):
    dtype = getattr(torch, dtype_name)
    sizes = [args.width] * 4
    x, y, params = make_data(sizes, args.batch, dtype, device)
    local = args.batch // world
    x, y = x[rank * local:(rank + 1) * local].contiguous(), y[rank * local:(rank + 1) * local]
    model = Mlp(params)
    if mode == "ddp":
        ids = [device.index] if device.type == "cuda" else None
        model = DistributedDataParallel(model, device_ids=ids)
    times, loss = measure(make_step(model, x, y), args, device)
    if args.check and mode == "ddp":
        check(model.module, args, device, dtype)
    if rank != 0:
        return
    ms = statistics.median(times) * 1e3
    cuda = device.type == "cuda"
    ddp = mode == "ddp"
    bucket = f"{model.bucket_bytes_cap / 2**20:g}" if ddp else "none"
    print(f"{mode} wide {dtype_name} {'gpus' if cuda else 'procs'}={world} ms_per_step={ms:.3f} "
          f"examples_per_s={args.batch / ms * 1e3:.0f} width={args.width} batch={args.batch} "
          f"steps={args.steps} repeats={args.repeats} backend={args.backend if ddp else 'none'} "
          f"bucket_cap_mb={bucket} tf32={torch.backends.cuda.matmul.allow_tf32}", flush=True)
    ranks = f"{world} {'GPU' if cuda else 'process'}{('s' if cuda else 'es') if world > 1 else ''}"
    how = f"DDP over {args.backend}, bucket_cap_mb={bucket}" if ddp else "no DDP"
    print(f"# {mode} wide MLP {args.width}x3 {dtype_name}, {ranks} ({how}), "
          f"batch {args.batch} ({local} per rank): {ms:.2f} ms/step, median of {args.repeats} "
          f"x {args.steps} steps (all: {', '.join(f'{t * 1e3:.2f}' for t in times)}), "
          f"{args.batch / ms * 1e3:,.0f} examples/s; rank-0 loss {loss:.4f}", flush=True)


def check(ddp_module, args, device, dtype):
    """Trains a plain model on the whole global batch from the same start and compares."""
    x, y, params = make_data([args.width] * 4, args.batch, dtype, device)
    plain = Mlp(params)
    step = make_step(plain, x, y)
    for _ in range(args.warmup + args.repeats * args.steps):
        step()
    diff = max((a.float() - b.float()).abs().max().item()
               for a, b in zip(ddp_module.parameters(), plain.parameters()))
    scale = max(b.float().abs().max().item() for b in plain.parameters())
    if dist.get_rank() == 0:
        print(f"check: DDP vs plain on the global batch after "
              f"{args.warmup + args.repeats * args.steps} steps: max |diff| {diff:.3g} "
              f"(largest |param| {scale:.3g})", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtype", nargs="+", default=["float32"], choices=["float32", "bfloat16"])
    p.add_argument("--steps", type=int, default=20, help="timed steps per repeat")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    p.add_argument("--repeats", type=int, default=3, help="timed repeats; the median is shown")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--backend", default=None, choices=["nccl", "gloo"],
                   help="default: nccl on cuda, gloo on cpu")
    p.add_argument("--width", type=int, default=4096, help="every layer's width")
    p.add_argument("--batch", type=int, default=4096, help="global batch, split over ranks")
    p.add_argument("--mode", default="auto", choices=["auto", "plain", "ddp"],
                   help="auto: plain and ddp on one rank, ddp on more")
    p.add_argument("--check", action="store_true", help="compare DDP with plain training")
    args = p.parse_args()
    args.backend = args.backend or ("nccl" if args.device == "cuda" else "gloo")

    for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"),
                 ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29511")):
        os.environ.setdefault(k, v)  # one rank when not started by torchrun
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if args.steps < 1 or args.repeats < 1 or args.warmup < 0:
        raise SystemExit("[ddp_train_peer] --steps and --repeats need >= 1, --warmup >= 0")
    if args.batch % world:
        raise SystemExit(f"[ddp_train_peer] batch {args.batch} does not split over {world} ranks")
    if args.device == "cuda":
        device = torch.device("cuda", int(os.environ["LOCAL_RANK"]))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    dist.init_process_group(args.backend)
    if rank == 0:
        nccl = ".".join(map(str, torch.cuda.nccl.version())) if args.backend == "nccl" else "-"
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
        print(f"# torch {torch.__version__}, NCCL {nccl}, {world} x {name}, "
              f"torch.backends.cuda.matmul.allow_tf32={torch.backends.cuda.matmul.allow_tf32} "
              f"(PyTorch's default, as in torch_train_peer.cc), "
              f"float32_matmul_precision={torch.get_float32_matmul_precision()}", flush=True)
    modes = {"auto": ["plain", "ddp"] if world == 1 else ["ddp"]}.get(args.mode, [args.mode])
    if "plain" in modes and world > 1:
        raise SystemExit("[ddp_train_peer] --mode plain runs on one rank only")
    for dtype_name in args.dtype:
        for mode in modes:
            run(mode, dtype_name, args, device, rank, world)
    meet(device)  # no rank tears down while another still reads its last collective
    # DDP modules sit in reference cycles: freed after the process group, one aborted at
    # exit ("terminate called without an active exception", gloo, 5 runs in 40).
    gc.collect()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
