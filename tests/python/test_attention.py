"""mt.nn.dot_product_attention (the DotProductAttention row; Keras 3's ops.dot_product_attention)
and mt.nn.dot_product_attention_grad: values against a float64 NumPy reference (causal or
not, fewer or more queries than keys, grouped kv heads, the 2-byte floats), the mask and bias
path against the same reference, gradients through a GradientTape (first and second order)
against the composite's, the errors, the GPU against the CPU, an mt.function's replay, and
Keras's MultiHeadAttention on the fused op."""

import json

import numpy as np
import pytest

import minitensor as mt

RNG = np.random.default_rng(41)


def _reference(q, k, v, scale=None, causal=False, mask=None, bias=None):
    """Keras's formula in float64: (B, T, N, H) inputs, K kv heads repeated to N."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k, v = np.repeat(k, group, axis=2), np.repeat(v, group, axis=2)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep = keep & np.asarray(mask, bool)
    if causal:
        keep = keep & np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
    logits = logits - logits.max(-1, keepdims=True)
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    return np.einsum("bnts,bsnh->btnh", p, v)


def _inputs(b, t, s, n, k, h, hv=None, dtype=np.float32):
    q = RNG.normal(size=(b, t, n, h)).astype(dtype)
    key = RNG.normal(size=(b, s, k, h)).astype(dtype)
    v = RNG.normal(size=(b, s, k, hv or h)).astype(dtype)
    return q, key, v


SHAPES = [(2, 5, 5, 2, 2, 8, None), (1, 3, 9, 4, 2, 4, 6), (1, 9, 3, 2, 1, 4, 4),
          (1, 70, 130, 2, 2, 16, 16)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_values_match_the_float64_reference(shape, causal):
    q, k, v = _inputs(*shape)
    y = mt.nn.dot_product_attention(q, k, v, is_causal=causal)
    assert y.dtype == mt.float32 and y.shape == q.shape[:3] + v.shape[3:]
    np.testing.assert_allclose(y.numpy(), _reference(q, k, v, causal=causal), rtol=1e-5,
                               atol=1e-5)


def test_float64_and_an_explicit_scale_match_to_rounding():
    q, k, v = _inputs(2, 6, 7, 2, 1, 5, dtype=np.float64)
    y = mt.nn.dot_product_attention(q, k, v, scale=0.3, is_causal=True)
    np.testing.assert_allclose(y.numpy(), _reference(q, k, v, 0.3, True), rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("dtype,rtol", [(mt.bfloat16, 1.6e-2), (mt.float16, 2e-3)])
def test_half_types_compute_in_float32_and_round_once(dtype, rtol):
    q, k, v = (mt.cast(mt.constant(a), dtype) for a in _inputs(1, 8, 8, 2, 2, 16))
    y = mt.nn.dot_product_attention(q, k, v, is_causal=True)
    assert y.dtype == dtype
    want = _reference(*(mt.cast(t, mt.float32).numpy() for t in (q, k, v)), causal=True)
    np.testing.assert_allclose(mt.cast(y, mt.float32).numpy(), want, rtol=rtol, atol=rtol)


def test_mask_and_bias_take_kerass_formula():
    q, k, v = _inputs(2, 4, 6, 2, 2, 8)
    mask = RNG.uniform(size=(2, 1, 4, 6)) > 0.3
    mask[0, 0, 1] = False  # a row with every key masked: an even average, as Keras's
    bias = RNG.normal(size=(1, 2, 4, 6)).astype(np.float32)
    y = mt.nn.dot_product_attention(q, k, v, mask=mask, bias=bias, is_causal=True)
    np.testing.assert_allclose(y.numpy(), _reference(q, k, v, None, True, mask, bias),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Flash attention does not take"):
        mt.nn.dot_product_attention(q, k, v, mask=mask, flash_attention=True)


def test_no_keys_give_zeros_and_zero_gradients():
    q = mt.constant(RNG.normal(size=(1, 3, 2, 4)).astype(np.float32))
    k, v = mt.zeros([1, 0, 2, 4]), mt.zeros([1, 0, 2, 5])
    with mt.GradientTape() as tape:
        tape.watch(q)
        y = mt.nn.dot_product_attention(q, k, v, is_causal=True)
        loss = mt.reduce_sum(y)
    np.testing.assert_array_equal(y.numpy(), np.zeros((1, 3, 2, 5), np.float32))
    np.testing.assert_array_equal(tape.gradient(loss, q).numpy(),
                                  np.zeros((1, 3, 2, 4), np.float32))
    _, lse = mt._minitensor.dot_product_attention(q, k, v)
    assert np.all(lse.numpy() == -np.inf)


def _grads(fn, *args):
    tensors = [mt.constant(a) for a in args]
    with mt.GradientTape() as tape:
        tape.watch(tensors)
        loss = fn(*tensors)
    return [g.numpy() for g in tape.gradient(loss, tensors)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_gradients_equal_the_composites(shape, causal):
    q, k, v = _inputs(*shape)
    w = RNG.normal(size=q.shape[:3] + v.shape[3:]).astype(np.float32)
    fused = _grads(lambda q, k, v: mt.reduce_sum(
        mt.nn.dot_product_attention(q, k, v, is_causal=causal) * w), q, k, v)
    # A mask of all True takes the composite path with the same result.
    everything = np.ones((1, 1, q.shape[1], k.shape[1]), bool)
    composite = _grads(lambda q, k, v: mt.reduce_sum(
        mt.nn.dot_product_attention(q, k, v, mask=everything, is_causal=causal) * w), q, k, v)
    for got, want in zip(fused, composite):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_second_order_gradient_equals_the_composites():
    q, k, v = _inputs(1, 5, 4, 2, 1, 3, dtype=np.float64)
    everything = np.ones((1, 1, 5, 4), bool)

    def second(mask):
        qt, kt, vt = (mt.constant(a) for a in (q, k, v))
        with mt.GradientTape() as outer:
            outer.watch([qt, kt])
            with mt.GradientTape() as inner:
                inner.watch([qt, kt])
                y = mt.nn.dot_product_attention(qt, kt, vt, mask=mask, is_causal=True)
                loss = mt.reduce_sum(y * y)
            dq, dk = inner.gradient(loss, [qt, kt])
            norm = mt.reduce_sum(dq * dq) + mt.reduce_sum(dk)
        return [g.numpy() for g in outer.gradient(norm, [qt, kt])]

    for got, want in zip(second(None), second(everything)):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_dot_product_attention_grad_is_the_gradient_op():
    q, k, v = _inputs(1, 6, 5, 2, 2, 4)
    do = RNG.normal(size=(1, 6, 2, 4)).astype(np.float32)
    o, lse = mt._minitensor.dot_product_attention(mt.constant(q), mt.constant(k), mt.constant(v),
                                                  None, True)
    got = mt.nn.dot_product_attention_grad(do, q, k, v, o, lse, is_causal=True)
    want = _grads(lambda q, k, v: mt.reduce_sum(
        mt.nn.dot_product_attention(q, k, v, is_causal=True) * do), q, k, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-6, atol=1e-6)


def test_bad_input_raises_the_ops_errors():
    q, k, v = _inputs(1, 3, 5, 4, 2, 8)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[DotProductAttention\] q \(batch, queries, heads, depth\) must "
                             r"have rank 4, got shape \(3, 4, 8\)"):
        mt.nn.dot_product_attention(q[0], k, v)
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[DotProductAttention\] the heads of k and v must divide those "
                             r"of q, got 3 and 4"):
        mt.nn.dot_product_attention(q, np.ones((1, 5, 3, 8), np.float32),
                                    np.ones((1, 5, 3, 8), np.float32))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[DotProductAttention\] dtype int32 is not supported"):
        mt.nn.dot_product_attention(np.ones((1, 2, 1, 2), np.int32),
                                    np.ones((1, 2, 1, 2), np.int32),
                                    np.ones((1, 2, 1, 2), np.int32))
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"\[DotProductAttention\] scale must be a finite number, got inf"):
        mt.nn.dot_product_attention(q, k, v, scale=float("inf"))


def _ops_run(fn):
    mt.trace.start()
    try:
        fn()
    finally:
        mt.trace.stop()
    events = json.loads(mt.trace.to_json())["traceEvents"]
    return {e["name"] for e in events if e.get("cat") == "op"}


def test_keras_multi_head_attention_runs_the_fused_op_without_dropout_scores_or_masks():
    x = RNG.normal(size=(2, 5, 8)).astype(np.float32)
    mha = mt.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    fused = _ops_run(lambda: mha(x, x, use_causal_mask=True))
    assert "DotProductAttention" in fused and "Softmax" not in fused
    scored = _ops_run(lambda: mha(x, x, use_causal_mask=True, return_attention_scores=True))
    assert "DotProductAttention" not in scored and "Softmax" in scored
    y = mha(x, x, use_causal_mask=True)
    y_scored, _ = mha(x, x, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_allclose(y.numpy(), y_scored.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [mt.float32, mt.float64, mt.bfloat16, mt.float16])
def test_gpu_matches_the_cpu(needs_gpu, dtype):
    q, k, v = _inputs(2, 100, 90, 4, 2, 64)
    w = RNG.normal(size=(2, 100, 4, 64)).astype(np.float32)
    results = []
    for device in ("/CPU:0", "/GPU:0"):
        with mt.device(device):
            qt, kt, vt = (mt.cast(mt.constant(a), dtype) for a in (q, k, v))
            with mt.GradientTape() as tape:
                tape.watch([qt, kt, vt])
                y = mt.nn.dot_product_attention(qt, kt, vt, is_causal=True)
                loss = mt.reduce_sum(mt.cast(y, mt.float32) * w)
            grads = tape.gradient(loss, [qt, kt, vt])
            assert device[1:4] in y.device
            results.append([mt.cast(t, mt.float64).numpy() for t in [y, *grads]])
    tol = {mt.float64: 1e-12, mt.float32: 1e-4}.get(dtype, 2e-2)
    for cpu, gpu in zip(*results):
        np.testing.assert_allclose(gpu, cpu, rtol=tol, atol=tol * np.abs(cpu).max())


@pytest.mark.parametrize("device", ["/CPU:0", "/GPU:0"])
def test_a_function_replays_the_fused_forward_and_gradient(device, num_gpus):
    if device == "/GPU:0" and num_gpus == 0:
        pytest.skip("needs a GPU")
    q, k, v = _inputs(2, 16, 16, 2, 2, 8)
    with mt.device(device):
        def step(q, k, v):
            with mt.GradientTape() as tape:
                tape.watch([q, k, v])
                loss = mt.reduce_sum(mt.nn.dot_product_attention(q, k, v, is_causal=True) ** 2)
            return [loss] + tape.gradient(loss, [q, k, v])

        args = [mt.constant(a) for a in (q, k, v)]
        eager = [t.numpy() for t in step(*args)]
        f = mt.function(step)
        for _ in range(3):  # the trace, then replays
            for g, e in zip((t.numpy() for t in f(*args)), eager):
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)
