"""tf.config.threading: the CPU's threads, and what its kernels run with.

    mt.config.threading.set_intra_op_parallelism_threads(1)   # before the first op
    mt.config.threading.get_cpu_isa()                         # "avx512", "avx2", "baseline"

The intra-op threads are those one op may use (0, the default: one per hardware thread).
minitensor runs each op on the thread that calls it and has no inter-op pool: the inter-op
value is kept and reported, as TensorFlow's, and changes nothing else. Either raises
RuntimeError when changed after the runtime initialised, as TensorFlow does.
"""

from .. import _minitensor as _mt
from .devices import _runtime_error_after_init

__all__ = ["get_cpu_float32_gemm", "get_cpu_isa", "get_inter_op_parallelism_threads",
           "get_intra_op_parallelism_threads", "get_intra_op_thread_backend",
           "set_inter_op_parallelism_threads", "set_intra_op_parallelism_threads"]


@_runtime_error_after_init
def set_intra_op_parallelism_threads(num_threads):
    """Sets how many threads one op may use on the CPU (0: one per hardware thread)."""
    _mt.set_intra_op_parallelism_threads(int(num_threads))


def get_intra_op_parallelism_threads():
    """Returns the value set (0 when unset), as TensorFlow does."""
    return _mt.get_intra_op_parallelism_threads()


@_runtime_error_after_init
def set_inter_op_parallelism_threads(num_threads):
    """Keeps ``num_threads`` for get_inter_op_parallelism_threads (no pool uses it)."""
    _mt.set_inter_op_parallelism_threads(int(num_threads))


def get_inter_op_parallelism_threads():
    return _mt.get_inter_op_parallelism_threads()


def get_cpu_isa():
    """Returns the instruction-set level of the CPU kernels: "avx512", "avx2" or
    "baseline" (MT_CPU_ISA=baseline|avx2 in the environment lowers it)."""
    return _mt.get_cpu_isa()


def get_intra_op_thread_backend():
    """Returns where the CPU kernels' threads come from: "openmp" or "eigen"."""
    return _mt.get_intra_op_thread_backend()


def get_cpu_float32_gemm():
    """Returns what runs float32 matmul on the CPU: "onednn <version> (<isa>)" or "eigen"."""
    return _mt.get_cpu_float32_gemm()
