"""A GPT-2 model trained with minitensor: byte-level, on the project's own docs (no
download), printing `step N loss X`, then sampling text.

    python examples/python/train_gpt.py --tiny                  # about a minute, 2 CPU cores
    python examples/python/train_gpt.py --steps 500 --device GPU:0
    python examples/python/train_gpt.py --config 124m --batch 8 --seq 1024 --steps 10
                                                                 # GPT-2 small, random tokens

The model is GPT-2's (as nanoGPT writes it): token and position embeddings, pre-norm blocks
of causal self-attention and a 4x GELU MLP with residual connections, a final layer norm,
and the output projection tied to the token embedding. Plain variables and ops, one
training step as an mt.function (forward, backward, AdamW, clipping by global norm).
With --dtype bfloat16 the variables stay float32 and the matmuls, activations and residual
stream run in bfloat16; layer norms, the attention's softmax (inside the fused
mt.nn.dot_product_attention) and the loss run in float32 (as Keras's "mixed_bfloat16"
policy keeps them).
"""

import argparse
import glob
import math
import os
import time

import numpy as np

import minitensor as mt

CONFIGS = {
    # name: (layers, heads, width, context, vocabulary)
    "tiny": (2, 4, 64, 64, 256),
    "small": (4, 4, 128, 128, 256),
    "124m": (12, 12, 768, 1024, 50304),  # GPT-2's 50,257 tokens padded to a multiple of 64
}


def corpus_bytes():
    """The project's docs and examples as bytes: a corpus every checkout has."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    paths = sorted(glob.glob(os.path.join(root, "docs", "*.md")) +
                   glob.glob(os.path.join(root, "README.md")))
    data = b"".join(open(p, "rb").read() for p in paths)
    if len(data) < 10000:
        raise SystemExit("train_gpt.py: the docs/ folder is missing; run it from a checkout")
    return np.frombuffer(data, np.uint8).astype(np.int32)


class GPT:
    """GPT-2's parameters as variables, initialised as GPT-2 (normal, std 0.02; the
    residual projections scaled by 1/sqrt(2 * layers))."""

    def __init__(self, layers, heads, width, context, vocab, rng, compute="float32"):
        self.layers, self.heads, self.width, self.context = layers, heads, width, context
        self.compute = mt.as_dtype(compute)  # the dtype the forward pass computes in

        def normal(*shape, std=0.02):
            return mt.Variable(rng.normal(0, std, shape).astype(np.float32))

        def const(value, *shape):
            return mt.Variable(np.full(shape, value, np.float32))
        proj_std = 0.02 / math.sqrt(2 * layers)
        self.wte, self.wpe = normal(vocab, width), normal(context, width)
        self.blocks = []
        for _ in range(layers):
            self.blocks.append({
                "ln1_g": const(1, width), "ln1_b": const(0, width),
                "attn_w": normal(width, 3 * width), "attn_b": const(0, 3 * width),
                "proj_w": normal(width, width, std=proj_std), "proj_b": const(0, width),
                "ln2_g": const(1, width), "ln2_b": const(0, width),
                "fc_w": normal(width, 4 * width), "fc_b": const(0, 4 * width),
                "out_w": normal(4 * width, width, std=proj_std), "out_b": const(0, width)})
        self.lnf_g, self.lnf_b = const(1, width), const(0, width)

    @property
    def variables(self):
        found = [self.wte, self.wpe]
        for block in self.blocks:
            found += list(block.values())
        return found + [self.lnf_g, self.lnf_b]

    def count(self):
        return sum(int(np.prod(v.shape)) for v in self.variables)


def in_compute(model, value):
    """A float32 variable or tensor in the model's compute dtype."""
    return value if model.compute == mt.float32 else mt.cast(value, model.compute)


def layer_norm(x, gamma, beta, eps=1e-5):
    """Normalises over the last axis in float32 whatever x's dtype (the fused LayerNorm op:
    float32 gamma, beta and arithmetic), and returns x's dtype."""
    return mt.nn.layer_norm(x, gamma, beta, epsilon=eps)[0]


def add_layer_norm(x, residual, gamma, beta, eps=1e-5):
    """Returns (x + residual, its layer_norm) in one op, in x's dtype."""
    y, total, _, _ = mt.nn.add_layer_norm(x, residual, gamma, beta, epsilon=eps)
    return total, y


def attention(model, x, block):
    b, t, c = x.shape
    heads = model.heads
    w = {name: in_compute(model, block[name]) for name in ("attn_w", "attn_b", "proj_w",
                                                            "proj_b")}
    qkv = mt.matmul(mt.reshape(x, [b * t, c]), w["attn_w"]) + w["attn_b"]
    q, k, v = (mt.reshape(part, [b, t, heads, c // heads]) for part in mt.split(qkv, 3, axis=1))
    # Causal self-attention in one fused op (the softmax in float32 whatever the dtype): the
    # (b, t, heads, d) layout is the projection's, so no transpose and no (t, t) scores.
    y = mt.nn.dot_product_attention(q, k, v, is_causal=True)  # (b, t, heads, d)
    y = mt.reshape(y, [b * t, c])
    return mt.reshape(mt.matmul(y, w["proj_w"]) + w["proj_b"], [b, t, c])


def mlp(model, x, block):
    b, t, c = x.shape
    w = {name: in_compute(model, block[name]) for name in ("fc_w", "fc_b", "out_w", "out_b")}
    h = mt.nn.gelu(mt.matmul(mt.reshape(x, [b * t, c]), w["fc_w"]) + w["fc_b"],
                   approximate=True)  # GPT-2's tanh GELU
    return mt.reshape(mt.matmul(h, w["out_w"]) + w["out_b"], [b, t, c])


def logits_of(model, tokens):
    b, t = tokens.shape
    x = in_compute(model, mt.nn.embedding_lookup(model.wte, tokens) + model.wpe[:t])
    blocks = model.blocks
    h = layer_norm(x, blocks[0]["ln1_g"], blocks[0]["ln1_b"])
    for i, block in enumerate(blocks):
        # x = x + attention(ln1(x)); x = x + mlp(ln2(x)): each residual add and the layer
        # norm after it (the next block's ln1, or lnf) are one op, mt.nn.add_layer_norm.
        x, h = add_layer_norm(x, attention(model, h, block), block["ln2_g"], block["ln2_b"])
        after = blocks[i + 1] if i + 1 < len(blocks) else None
        gamma, beta = (after["ln1_g"], after["ln1_b"]) if after else (model.lnf_g, model.lnf_b)
        x, h = add_layer_norm(x, mlp(model, h, block), gamma, beta)
    return mt.matmul(mt.reshape(h, [b * t, model.width]), in_compute(model, model.wte),
                     transpose_b=True)


def loss_of(model, tokens, targets):
    """The mean cross-entropy of predicting each next token."""
    logits = logits_of(model, tokens)
    if logits.dtype != mt.float32:
        logits = mt.cast(logits, mt.float32)  # the loss in float32
    return mt.reduce_mean(mt.nn.sparse_softmax_cross_entropy_with_logits(
        labels=mt.reshape(targets, [-1]), logits=logits))


def make_step(model, optimizer, clip):
    variables = model.variables

    @mt.function
    def step(tokens, targets):
        with mt.GradientTape() as tape:
            loss = loss_of(model, tokens, targets)
        grads = tape.gradient(loss, variables)
        grads, _ = mt.clip_by_global_norm(grads, clip)
        optimizer.apply_gradients(zip(grads, variables))
        return loss
    return step


def sample(model, prompt, length, rng, temperature=0.8):
    """Continues `prompt` (bytes) by `length` bytes, drawing from the softmax on the host."""
    tokens = list(prompt)
    for _ in range(length):
        window = np.asarray(tokens[-model.context:], np.int32)[None]
        logits = mt.cast(logits_of(model, mt.constant(window)), mt.float32).numpy()[-1]
        logits = logits / temperature
        p = np.exp(logits - logits.max())
        tokens.append(int(rng.choice(len(p), p=p / p.sum())))
    return bytes(tokens[len(prompt):]).decode("utf-8", errors="replace")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tiny", action="store_true", help="the tiny model, 60 steps")
    parser.add_argument("--config", choices=sorted(CONFIGS), default=None)
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=None, help="tokens per sequence")
    parser.add_argument("--device", default=None, help="e.g. CPU:0 or GPU:0 (default: best)")
    parser.add_argument("--dtype", choices=["float32", "bfloat16"], default="float32",
                        help="the compute dtype (variables stay float32)")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=200, help="bytes to sample at the end")
    args = parser.parse_args()
    config = args.config or ("tiny" if args.tiny or args.steps is None else "small")
    layers, heads, width, context, vocab = CONFIGS[config]
    steps = args.steps if args.steps is not None else 60
    seq = min(args.seq or context, context)
    rng = np.random.default_rng(args.seed)
    text = corpus_bytes() if vocab == 256 else None

    def batch():
        if text is None:  # a benchmark on random tokens
            chunk = rng.integers(0, 50257, (args.batch, seq + 1), dtype=np.int32)
        else:
            starts = rng.integers(0, len(text) - seq - 1, args.batch)
            chunk = np.stack([text[s:s + seq + 1] for s in starts])
        return mt.constant(chunk[:, :-1]), mt.constant(chunk[:, 1:])

    scope = mt.device(f"/{args.device}") if args.device else None
    if scope is not None:
        scope.__enter__()
    model = GPT(layers, heads, width, context, vocab, rng, compute=args.dtype)
    optimizer = mt.keras.optimizers.AdamW(learning_rate=args.lr, weight_decay=0.1,
                                          beta_1=0.9, beta_2=0.95)
    step = make_step(model, optimizer, clip=1.0)
    print(f"model {config}: {model.count():,} parameters, {layers} layers, {heads} heads, "
          f"width {width}, batch {args.batch} x {seq} tokens")
    start = time.perf_counter()
    for i in range(1, steps + 1):
        tokens, targets = batch()
        loss = float(step(tokens, targets))
        if i == 1 or i % 10 == 0 or i == steps:
            print(f"step {i} loss {loss:.4f}", flush=True)
    elapsed = time.perf_counter() - start
    print(f"{steps} steps in {elapsed:.1f} s "
          f"({steps * args.batch * seq / elapsed:,.0f} tokens/s)")
    if text is not None and args.sample > 0:
        print("sample:", repr(sample(model, b"The ", args.sample, rng)))
    if scope is not None:
        scope.__exit__(None, None, None)


if __name__ == "__main__":
    main()
