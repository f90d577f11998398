"""Runs every script of examples/python/ and compares its standard output, exactly, with
examples/expected/<case>.gpus<N>.txt, the files the C++ programs are checked against
(tests/examples/examples_test.cc), N being the number of GPUs of this machine, or 0 for a
case that hides them (CUDA_VISIBLE_DEVICES=""). A case without an expected file for N skips
itself, as does remote_guide_example in a package built without the distributed layer.
MT_SOURCE_DIR overrides where examples/ is found (default: this file's repository)."""

import os
import pathlib
import stat
import subprocess
import sys

import pytest

import minitensor as mt

SOURCE_DIR = pathlib.Path(os.environ.get("MT_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))
EXAMPLES = SOURCE_DIR / "examples"
GROWTH_ENV = "TF_FORCE_GPU_ALLOW_GROWTH"

# (case, script and its arguments, environment, a line stderr must contain), as in
# examples_test.cc.
CASES = [
    ("guide_logging", "guide_logging.py", {}, ""),
    ("guide_manual_placement", "guide_manual_placement.py", {}, ""),
    ("guide_visible_devices", "guide_visible_devices.py", {}, ""),
    ("guide_memory_growth", "guide_memory_growth.py", {}, ""),
    ("guide_memory_growth_env_false", "guide_memory_growth.py", {GROWTH_ENV: "false"}, ""),
    ("guide_allow_growth_env_unset", "guide_allow_growth_env.py", {}, ""),
    ("guide_allow_growth_env_true", "guide_allow_growth_env.py", {GROWTH_ENV: "true"}, ""),
    ("guide_allow_growth_env_invalid", "guide_allow_growth_env.py", {GROWTH_ENV: "yes"},
     "minitensor: ignoring TF_FORCE_GPU_ALLOW_GROWTH='yes': expected 'true' or 'false'"),
    ("guide_memory_limit", "guide_memory_limit.py", {}, ""),
    ("guide_soft_placement", "guide_soft_placement.py", {}, ""),
    ("guide_virtual_gpus", "guide_virtual_gpus.py", {}, ""),
    ("guide_manual_replication", "guide_manual_replication.py", {}, ""),
    ("run_three_processes", "run_three_processes.sh", {}, ""),
    ("run_reordered_programs", "run_reordered_programs.sh", {}, ""),
    ("two_gib_per_gpu", "two_gib_per_gpu.py", {}, ""),
    ("per_gpu_limits", "per_gpu_limits.py", {}, ""),
    ("per_gpu_growth", "per_gpu_growth.py", {}, ""),
    # Seeded training on the CPU, whose float32 results repeat exactly.
    ("keras_classifier", "keras_classifier.py", {"CUDA_VISIBLE_DEVICES": ""}, ""),
    ("guide_mirrored_strategy_keras", "guide_mirrored_strategy.py", {}, ""),
    # CPU-only workers, as tests/distributed/example_test.cc runs the C++ program.
    ("remote_guide_example", "remote_guide_example.py", {"CUDA_VISIBLE_DEVICES": ""}, ""),
    # Two CPU worker processes on loopback, started by the script itself.
    ("multi_worker", "multi_worker.py --local 2", {"CUDA_VISIBLE_DEVICES": ""}, ""),
]
NEEDS_DISTRIBUTED = {"remote_guide_example", "multi_worker"}


def script_bin_dir(tmp_path):
    """Returns a folder of programs named as the C++ ones that the shell scripts run
    (memory_fraction, cuda_visible_devices), each running its Python script."""
    for name in ["memory_fraction", "cuda_visible_devices"]:
        wrapper = tmp_path / name
        script = EXAMPLES / "python" / f"{name}.py"
        wrapper.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{script}' \"$@\"\n")
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return tmp_path


@pytest.mark.parametrize("case,program,env,stderr_line", CASES, ids=[c[0] for c in CASES])
def test_example_prints_the_expected_output(case, program, env, stderr_line, tmp_path):
    if case in NEEDS_DISTRIBUTED and not mt.distribute.is_available():
        pytest.skip("the package was built without the distributed layer")
    num_gpus = len(mt.config.list_physical_devices("GPU"))
    if env.get("CUDA_VISIBLE_DEVICES") == "":
        num_gpus = 0
    expected = EXAMPLES / "expected" / f"{case}.gpus{num_gpus}.txt"
    if not expected.exists():
        pytest.skip(f"no expected output for {num_gpus} GPUs: {expected}")
    run_env = {k: v for k, v in os.environ.items() if k != GROWTH_ENV}
    run_env.update(env)
    if program.endswith(".sh"):
        command = ["bash", str(EXAMPLES / program), str(script_bin_dir(tmp_path))]
    else:
        script, *arguments = program.split()
        command = [sys.executable, str(EXAMPLES / "python" / script), *arguments]
    result = subprocess.run(command, capture_output=True, text=True, env=run_env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout == expected.read_text(), result.stderr
    if stderr_line:
        assert stderr_line + "\n" in result.stderr
