"""mt.config.threading: TensorFlow's four functions (values and errors as TensorFlow 2.21's)
and what the CPU kernels run with. Settings are per process: each case runs in a fresh one."""

import minitensor as mt
from conftest import run_python


def test_threads_set_before_initialisation_are_reported():
    done = run_python("""
        import minitensor as mt
        T = mt.config.threading
        print(T.get_intra_op_parallelism_threads(), T.get_inter_op_parallelism_threads())
        T.set_intra_op_parallelism_threads(1)
        T.set_inter_op_parallelism_threads(3)
        print(T.get_intra_op_parallelism_threads(), T.get_inter_op_parallelism_threads())
        print(float(mt.reduce_sum(mt.ones([1000]))))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0", "1", "3", "1000.0"]


def test_changing_threads_after_initialisation_raises_tensorflows_error():
    done = run_python("""
        import minitensor as mt
        T = mt.config.threading
        mt.constant(1.0)
        T.set_intra_op_parallelism_threads(0)  # unchanged: allowed, as in TensorFlow
        T.set_inter_op_parallelism_threads(0)
        for fn in (T.set_intra_op_parallelism_threads, T.set_inter_op_parallelism_threads):
            try:
                fn(2)
            except RuntimeError as e:
                print(type(e).__name__, e)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "RuntimeError Intra op parallelism cannot be modified after initialization.",
        "RuntimeError Inter op parallelism cannot be modified after initialization."]


def test_a_negative_intra_op_count_is_invalid():
    import pytest
    with pytest.raises(mt.errors.InvalidArgumentError,
                       match=r"^\[set_intra_op_parallelism_threads\] num_threads must be >= 0, "
                             "got -1$"):
        mt.config.threading.set_intra_op_parallelism_threads(-1)


def test_the_cpu_kernels_name_their_isa_threads_and_gemm():
    T = mt.config.threading
    assert T.get_cpu_isa() in ("avx512", "avx2", "baseline")
    assert T.get_intra_op_thread_backend() in ("openmp", "eigen")
    gemm = T.get_cpu_float32_gemm()
    assert gemm == "eigen" or (gemm.startswith("onednn ") and gemm.endswith(")"))


def test_mt_cpu_isa_lowers_the_level():
    import os
    done = run_python("import minitensor as mt; print(mt.config.threading.get_cpu_isa())",
                      env=dict(os.environ, MT_CPU_ISA="baseline"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["baseline"]
