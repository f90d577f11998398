"""Tokens per second of a GPT-2 training step (forward, backward, AdamW, clipping), with
minitensor eagerly and as one mt.function, beside PyTorch eager and torch.compile of the
same model in the same run, on the same device; peak memory beside PyTorch's
max_memory_allocated; model FLOPs utilisation against the card's peak that the run names.

    python bench/gpt2_train_step.py                       # GPT-2 124M, batch 8 x 1024, GPU:0
    python bench/gpt2_train_step.py --config small --device CPU:0 --batch 8 --seq 128

minitensor's model is examples/python/train_gpt.py's; PyTorch's is the same GPT-2 written
with torch.nn (F.scaled_dot_product_attention, causal; AdamW fused on the GPU). float32
on both (PyTorch's default matmul precision, no TF32), random tokens; with --dtype
bfloat16 both keep float32 weights and compute in bfloat16 (train_gpt.py's --dtype,
torch.autocast), and the MFU is against the card's dense bfloat16 peak.
"""

import argparse
import importlib.util
import math
import pathlib
import time

import numpy as np

import minitensor as mt

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("train_gpt",
                                               ROOT / "examples" / "python" / "train_gpt.py")
gpt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpt)

# Dense peaks as NVIDIA's data sheets state them: float32 without tensor cores; bfloat16
# on tensor cores, without sparsity.
BF16_PEAK_TFLOPS = {"H100 80GB HBM3": 989.4, "H100": 989.4, "H200": 989.4}
# Dense float32 peaks (no tensor cores), as NVIDIA's data sheets state them.
FP32_PEAK_TFLOPS = {"H100 80GB HBM3": 67.0, "H100": 67.0, "H200": 67.0}


def flops_per_token(params, layers, width, seq):
    """6 N per token for the weights' matmuls, forward and backward, plus attention's
    12 L d T (the estimate of PaLM's appendix B)."""
    return 6 * params + 12 * layers * width * seq


def time_steps(step, batches, warmup, sync):
    """Seconds per step after `warmup` steps; `sync(loss)` waits for the device."""
    for tokens, targets in batches[:warmup]:
        loss = step(tokens, targets)
    sync(loss)
    start = time.perf_counter()
    for tokens, targets in batches[warmup:]:
        loss = step(tokens, targets)
    sync(loss)
    return (time.perf_counter() - start) / (len(batches) - warmup), loss


def minitensor_figures(args, config, device, token_batches):
    layers, heads, width, context, vocab = config
    for mode in ("eager", "function"):
        mt.config.experimental.reset_memory_stats(device)
        with mt.device(f"/{device}"):
            model = gpt.GPT(layers, heads, width, context, vocab, np.random.default_rng(0),
                            compute=args.dtype)
            optimizer = mt.keras.optimizers.AdamW(learning_rate=3e-4, weight_decay=0.1)
            step = gpt.make_step(model, optimizer, clip=1.0)
            if mode == "eager":
                step = step.python_function
            batches = [(mt.constant(x), mt.constant(y)) for x, y in token_batches]
            try:
                seconds, loss = time_steps(step, batches, args.warmup, float)  # a read waits
            except mt.errors.ResourceExhaustedError as e:
                # Out of memory: said on the mode's line, and the peers still run.
                yield mode, str(e).splitlines()[0]
                seconds = None
        if seconds is not None:
            loss = float(loss)
            info = mt.config.experimental.get_memory_info(device)
            yield mode, (seconds, loss, info.get("peak", 0), model.count())
        del model, optimizer, step, batches
        loss = None
        mt.config.experimental.release_unused_memory(device)


def torch_figures(args, config, device, token_batches):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    layers, heads, width, context, vocab = config
    dev = torch.device("cuda" if device.startswith("GPU") else "cpu")

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.attn(self.ln1(x)).split(c, dim=2)
            q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(context, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.lnf = nn.LayerNorm(width)
            # GPT-2's initialisation, as train_gpt.py's (torch's own N(0, 1) embeddings,
            # tied to the classifier, start the loss near 99 instead of ln(vocab)).
            for module in self.modules():
                if isinstance(module, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(module.weight, std=0.02)
                if isinstance(module, nn.Linear):
                    nn.init.zeros_(module.bias)
            for block in self.blocks:  # the residual projections, scaled by depth
                for module in (block.proj, block.out):
                    nn.init.normal_(module.weight, std=0.02 / math.sqrt(2 * layers))

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
            for block in self.blocks:
                x = block(x)
            logits = self.lnf(x) @ self.wte.weight.T
            return F.cross_entropy(logits.view(-1, vocab), targets.view(-1))

    for mode in ("eager", "compile"):
        torch.manual_seed(0)
        model = GPT().to(dev)
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1,
                                      fused=dev.type == "cuda")
        forward = torch.compile(model) if mode == "compile" else model

        def step(x, y):
            with torch.autocast(dev.type, dtype=torch.bfloat16,
                                enabled=args.dtype == "bfloat16"):
                loss = forward(x, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            return loss

        batches = [(torch.as_tensor(x, dtype=torch.long, device=dev),
                    torch.as_tensor(y, dtype=torch.long, device=dev)) for x, y in token_batches]
        sync = (lambda _: torch.cuda.synchronize()) if dev.type == "cuda" else (lambda _: None)
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats()
        seconds, loss = time_steps(step, batches, args.warmup, sync)
        peak = torch.cuda.max_memory_allocated() if dev.type == "cuda" else 0
        yield mode, (seconds, float(loss), peak, sum(p.numel() for p in model.parameters()))
        del model, optimizer, forward, batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", choices=sorted(gpt.CONFIGS), default="124m")
    parser.add_argument("--device", default=None, help="default GPU:0 when there is one")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=6, help="timed steps")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                        help="the compute dtype (weights stay float32)")
    args = parser.parse_args()
    config = gpt.CONFIGS[args.config]
    layers, heads, width, context, vocab = config
    # PyTorch shares the card: minitensor's pools grow as needed instead of reserving the
    # whole GPU at the first allocation (TensorFlow's default, and minitensor's).
    for gpu in mt.config.list_physical_devices("GPU"):
        mt.config.experimental.set_memory_growth(gpu, True)
    seq = min(args.seq, context)
    device = args.device or ("GPU:0" if mt.config.list_physical_devices("GPU") else "CPU:0")
    rng = np.random.default_rng(1)
    token_batches = []
    for _ in range(args.warmup + args.steps):
        chunk = rng.integers(0, min(vocab, 50257), (args.batch, seq + 1)).astype(np.int32)
        token_batches.append((chunk[:, :-1], chunk[:, 1:]))
    tokens = args.batch * seq
    peak = None
    if device.startswith("GPU"):
        try:
            import torch
            name = torch.cuda.get_device_name(0)
            peaks = BF16_PEAK_TFLOPS if args.dtype == "bfloat16" else FP32_PEAK_TFLOPS
            peak = next((v for k, v in peaks.items() if k in name), None)
            print(f"device {device}: {name}" + (f"; MFU against its dense {args.dtype} peak, "
                                                f"{peak} TFLOPS" if peak else ""))
        except ImportError:
            pass
    print(f"GPT-2 {args.config}, batch {args.batch} x {seq} tokens, {args.steps} timed steps "
          f"after {args.warmup}; a first step's loss is about ln({vocab}) = "
          f"{math.log(vocab):.3f}")
    print(f"{'':22}{'ms/step':>10}{'tokens/s':>12}{'loss':>9}{'peak MiB':>10}{'MFU':>7}",
          flush=True)
    rows = {}

    def report(name, figures):
        if isinstance(figures, str):
            print(f"{name:22}failed: {figures}", flush=True)
            return
        seconds, loss, peak_bytes, params = figures
        rows[name] = figures
        mfu = (flops_per_token(params, layers, width, seq) * tokens / seconds / 1e12 / peak
               if peak else float("nan"))
        print(f"{name:22}{seconds * 1e3:10.1f}{tokens / seconds:12,.0f}{loss:9.4f}"
              f"{peak_bytes / 2**20:10.0f}{mfu:7.1%}  ({params:,} parameters)", flush=True)
    for mode, figures in minitensor_figures(args, config, device, token_batches):
        report(f"minitensor {mode}", figures)
    if not args.no_torch:
        try:
            for mode, figures in torch_figures(args, config, device, token_batches):
                report(f"torch {mode}", figures)
        except ImportError:
            print("PyTorch is not installed: no peer figures")
    for mine, theirs in (("minitensor eager", "torch eager"),
                         ("minitensor function", "torch compile")):
        if mine in rows and theirs in rows:
            print(f"{mine} / {theirs}: {rows[theirs][0] / rows[mine][0]:.2f}x tokens/s, "
                  f"peak memory {rows[mine][2] / max(rows[theirs][2], 1):.2f}x")


if __name__ == "__main__":
    main()
