"""Milliseconds per ConvNet training step (forward, backward, SGD with momentum), with
minitensor eagerly and as one mt.function, beside PyTorch eager of the same model in the
same run, on the same device.

    python bench/convnet_train_step.py                      # CIFAR-sized, batch 128, GPU:0
    python bench/convnet_train_step.py --model small        # the digits ConvNet, batch 32
    python bench/convnet_train_step.py --device CPU:0 --threads 16

Models: "cifar" is 32x32x3 images through three blocks of two 3x3 convolutions (32, 64 and
128 channels, SAME, ReLU) and a 2x2 max-pool, then a dense layer to 10 classes; "small" is
examples/python/train_cnn.py's model on 8x8x1 images (Conv2D 32 SAME, pool, Conv2D 64
VALID, pool, Dense 64, Dense 10). minitensor computes in NHWC (TensorFlow's layout), PyTorch
in NCHW (its own). float32 by default, with TensorFloat-32 for the convolutions on both
(PyTorch's cuDNN default; minitensor's mt.config.enable_tensor_float_32_execution, which --no-tf32
leaves off, beside PyTorch with torch.backends.cudnn.allow_tf32 = False); --dtype bfloat16
keeps float32 weights and computes in bfloat16 on both (a cast per weight;
torch.autocast).
"""

import argparse
import time

import numpy as np

import minitensor as mt

MODELS = {
    # image size, channels, [(filters, padding) per conv, "pool" between], dense widths
    "cifar": (32, 3, [(32, "SAME"), (32, "SAME"), "pool", (64, "SAME"), (64, "SAME"), "pool",
                      (128, "SAME"), (128, "SAME"), "pool"], [10]),
    "small": (8, 1, [(32, "SAME"), "pool", (64, "VALID"), "pool"], [64, 10]),
}


def layer_shapes(model):
    """The (kind, shape) of every weight, in order, and the flattened width."""
    size, channels, convs, dense = MODELS[model]
    shapes, c = [], channels
    for layer in convs:
        if layer == "pool":
            size //= 2
            continue
        filters, padding = layer
        shapes += [("conv", (3, 3, c, filters)), ("bias", (filters,))]
        c = filters
        if padding == "VALID":
            size -= 2
    width = size * size * c
    for units in dense:
        shapes += [("dense", (width, units)), ("bias", (units,))]
        width = units
    return shapes


def initial_weights(model, seed=0):
    rng = np.random.default_rng(seed)
    weights = []
    for kind, shape in layer_shapes(model):
        if kind == "bias":
            weights.append(np.zeros(shape, np.float32))
        else:
            fan_in = int(np.prod(shape[:-1]))
            weights.append((rng.normal(size=shape) * np.sqrt(2 / fan_in)).astype(np.float32))
    return weights


def time_steps(step, batches, warmup, sync):
    for x, y in batches[:warmup]:
        loss = step(x, y)
    sync(loss)
    start = time.perf_counter()
    for x, y in batches[warmup:]:
        loss = step(x, y)
    sync(loss)
    value = loss.item() if hasattr(loss, "item") else np.asarray(loss)  # a torch CUDA tensor
    return (time.perf_counter() - start) / (len(batches) - warmup), float(value)


def minitensor_figures(args, batches):
    convs, dense = MODELS[args.model][2], MODELS[args.model][3]
    compute = mt.bfloat16 if args.dtype == "bfloat16" else mt.float32
    for mode in ("eager", "function"):
        with mt.device(args.device):
            weights = [mt.Variable(w) for w in initial_weights(args.model)]
            optimizer = mt.keras.optimizers.SGD(0.01, momentum=0.9)
            data = [(mt.constant(x), mt.constant(y)) for x, y in batches]

        def forward(x):
            w = [mt.cast(v, compute) for v in weights] if compute != mt.float32 else weights
            h, k = mt.cast(x, compute), 0
            for layer in convs:
                if layer == "pool":
                    h = mt.nn.max_pool2d(h, 2, 2, "VALID")
                    continue
                h = mt.nn.relu(mt.nn.bias_add(mt.nn.conv2d(h, w[k], 1, layer[1]), w[k + 1]))
                k += 2
            h = mt.reshape(h, [h.shape[0], -1])
            for i in range(len(dense)):
                h = mt.matmul(h, w[k]) + w[k + 1]
                k += 2
                if i + 1 < len(dense):
                    h = mt.nn.relu(h)
            return mt.cast(h, mt.float32)

        def step(x, y):
            with mt.GradientTape() as tape:
                loss = mt.reduce_mean(mt.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=y, logits=forward(x)))
            optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
            return loss

        run = mt.function(step) if mode == "function" else step
        with mt.device(args.device):
            seconds, loss = time_steps(run, data, args.warmup, lambda loss: loss.numpy())
        yield mode, seconds, loss


def torch_figures(args, batches):
    import torch
    import torch.nn.functional as F
    dev = torch.device("cuda" if args.device.startswith("GPU") else "cpu")
    torch.backends.cudnn.allow_tf32 = not args.no_tf32
    torch.backends.cudnn.benchmark = False  # heuristics, as minitensor's
    convs, dense = MODELS[args.model][2], MODELS[args.model][3]
    weights = []
    for (kind, _), w in zip(layer_shapes(args.model), initial_weights(args.model)):
        if kind == "conv":
            w = w.transpose(3, 2, 0, 1)  # HWIO -> OIHW
        weights.append(torch.tensor(np.ascontiguousarray(w), device=dev, requires_grad=True))
    optimizer = torch.optim.SGD(weights, lr=0.01, momentum=0.9)

    def forward(x):
        h, k = x, 0
        for layer in convs:
            if layer == "pool":
                h = F.max_pool2d(h, 2)
                continue
            h = F.relu(F.conv2d(h, weights[k], weights[k + 1],
                                padding="same" if layer[1] == "SAME" else 0))
            k += 2
        h = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1)  # flatten as NHWC
        for i in range(len(dense)):
            h = h @ weights[k] + weights[k + 1]
            k += 2
            if i + 1 < len(dense):
                h = F.relu(h)
        return h

    def step(x, y):
        with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=args.dtype == "bfloat16"):
            logits = forward(x)
        loss = F.cross_entropy(logits.float(), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.detach()

    data = [(torch.tensor(x.transpose(0, 3, 1, 2).copy(), device=dev),
             torch.tensor(y, dtype=torch.long, device=dev)) for x, y in batches]
    sync = (lambda _: torch.cuda.synchronize()) if dev.type == "cuda" else (lambda _: None)
    seconds, loss = time_steps(step, data, args.warmup, lambda loss: (sync(loss), loss.cpu()))
    yield "eager", seconds, loss


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="cifar")
    parser.add_argument("--device", default=None, help="default GPU:0 when there is one")
    parser.add_argument("--batch", type=int, default=None, help="128 (cifar) or 32 (small)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32")
    parser.add_argument("--no-tf32", action="store_true", help="IEEE float32 convolutions")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (both)")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    if args.device is None:
        args.device = "GPU:0" if mt.config.list_physical_devices("GPU") else "CPU:0"
    if args.batch is None:
        args.batch = 128 if args.model == "cifar" else 32
    mt.config.enable_tensor_float_32_execution(not args.no_tf32)
    if args.threads:
        mt.config.threading.set_intra_op_parallelism_threads(args.threads)
    size, channels = MODELS[args.model][:2]
    rng = np.random.default_rng(1)
    batches = [(rng.normal(size=(args.batch, size, size, channels)).astype(np.float32),
                rng.integers(0, 10, size=args.batch).astype(np.int32))
               for _ in range(args.warmup + args.steps)]
    print(f"ConvNet '{args.model}' training step, batch {args.batch}, {args.dtype}"
          f"{'' if args.no_tf32 else ' (TF32 convolutions)'}, on {args.device}, "
          f"{args.steps} steps after {args.warmup}")
    figures = {}
    for mode, seconds, loss in minitensor_figures(args, batches):
        figures[f"minitensor {mode}"] = seconds
        print(f"  minitensor {mode:9s} {seconds * 1e3:9.3f} ms/step   loss {loss:.4f}")
    if not args.no_torch:
        try:
            import torch
            if args.threads:
                torch.set_num_threads(args.threads)
        except ImportError:
            print("  PyTorch: not installed")
        else:
            for mode, seconds, loss in torch_figures(args, batches):
                figures[f"torch {mode}"] = seconds
                print(f"  torch {mode:14s} {seconds * 1e3:9.3f} ms/step   loss {loss:.4f}")
    if "torch eager" in figures:
        for mode in ("eager", "function"):
            ratio = figures["torch eager"] / figures[f"minitensor {mode}"]
            print(f"  minitensor {mode} vs PyTorch eager: {ratio:.2f}x")


if __name__ == "__main__":
    main()
