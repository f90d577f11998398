"""examples/python/train_gpt.py: its GPT-2 model's loss and gradients equal TensorFlow's on
fixed weights (fixtures/gpt/write_gpt_with_tensorflow.py), the first loss of a fresh model
is ln(vocabulary), the training step (an mt.function) traces once and learns, and the
script runs end to end."""

import importlib.util
import json
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np

import minitensor as mt

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "train_gpt.py"
FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "gpt", "gpt_expected.json")
_spec = importlib.util.spec_from_file_location("train_gpt", EXAMPLE)
gpt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpt)


def _fixture_model():
    with open(FIXTURE) as f:
        expected = json.load(f)
    model = gpt.GPT(*expected["config"], np.random.default_rng(0))
    block = model.blocks[0]
    by_name = {"wte": model.wte, "wpe": model.wpe, "lnf_g": model.lnf_g,
               "lnf_b": model.lnf_b, **block}
    for name in expected["names"]:
        by_name[name].assign(np.asarray(expected["weights"][name], np.float32))
    return model, [by_name[n] for n in expected["names"]], expected


def test_the_loss_and_gradients_are_tensorflows():
    model, variables, expected = _fixture_model()
    tokens = np.asarray(expected["tokens"], np.int32)
    with mt.GradientTape() as tape:
        loss = gpt.loss_of(model, mt.constant(tokens[:, :-1]), mt.constant(tokens[:, 1:]))
    grads = tape.gradient(loss, variables)
    np.testing.assert_allclose(float(loss), expected["loss"], rtol=1e-5)
    for name, got, want in zip(expected["names"], grads, expected["grads"]):
        np.testing.assert_allclose(got.numpy(), np.float32(want), rtol=2e-4, atol=2e-6,
                                   err_msg=name)


def test_bfloat16_compute_keeps_float32_variables_and_tensorflows_loss():
    # --dtype bfloat16: the same model with its matmuls in bfloat16 gives TensorFlow's
    # float32 loss to bfloat16 rounding, and float32 gradients close to TensorFlow's.
    model, variables, expected = _fixture_model()
    model.compute = mt.bfloat16
    tokens = np.asarray(expected["tokens"], np.int32)
    with mt.GradientTape() as tape:
        loss = gpt.loss_of(model, mt.constant(tokens[:, :-1]), mt.constant(tokens[:, 1:]))
    assert loss.dtype == mt.float32
    grads = tape.gradient(loss, variables)
    np.testing.assert_allclose(float(loss), expected["loss"], rtol=1e-2)
    for name, got, want in zip(expected["names"], grads, expected["grads"]):
        assert got.dtype == mt.float32, name
        want = np.float32(want)
        scale = float(np.abs(want).max()) or 1.0
        np.testing.assert_allclose(got.numpy(), want, atol=0.05 * scale, err_msg=name)


def _learn_a_batch(compute):
    """30 steps of a small model on one batch: the losses, the step and the model."""
    model = gpt.GPT(1, 2, 16, 8, 256, np.random.default_rng(3), compute=compute)
    optimizer = mt.keras.optimizers.AdamW(learning_rate=1e-2, weight_decay=0.1)
    step = gpt.make_step(model, optimizer, clip=1.0)
    tokens = np.random.default_rng(4).integers(0, 256, (4, 9)).astype(np.int32)
    x, y = mt.constant(tokens[:, :-1]), mt.constant(tokens[:, 1:])
    return [float(step(x, y)) for _ in range(30)], step, model


def test_a_bfloat16_step_learns_a_batch():
    losses, _, model = _learn_a_batch("bfloat16")
    assert losses[-1] < 0.5 * losses[0]
    assert all(v.dtype == mt.float32 for v in model.variables)


def test_a_fresh_model_predicts_every_token_alike():
    model = gpt.GPT(1, 2, 16, 8, 256, np.random.default_rng(1))
    tokens = np.random.default_rng(2).integers(0, 256, (4, 9)).astype(np.int32)
    loss = float(gpt.loss_of(model, mt.constant(tokens[:, :-1]), mt.constant(tokens[:, 1:])))
    assert abs(loss - math.log(256)) < 0.05


def test_the_step_traces_once_and_learns_a_batch():
    losses, step, _ = _learn_a_batch("float32")
    assert losses[-1] < 0.5 * losses[0]
    assert step.experimental_get_tracing_count() == 1


def test_the_script_trains_and_samples():
    run = subprocess.run([sys.executable, str(EXAMPLE), "--steps", "3", "--batch", "2",
                          "--seq", "16", "--sample", "5"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.search(r"^step 1 loss \d+\.\d+$", run.stdout, re.M)
    half = subprocess.run([sys.executable, str(EXAMPLE), "--steps", "2", "--batch", "2",
                           "--seq", "16", "--sample", "5", "--dtype", "bfloat16"],
                          capture_output=True, text=True, timeout=300)
    assert half.returncode == 0, half.stdout + half.stderr
    assert re.search(r"^step 2 loss \d+\.\d+$", half.stdout, re.M)
    assert re.search(r"^step 3 loss \d+\.\d+$", run.stdout, re.M)
    assert re.search(r"^sample: ", run.stdout, re.M)
