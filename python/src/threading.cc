// mt.config.threading (runtime/config.h): the CPU's intra-op threads, TensorFlow's
// inter-op setting, and what the CPU kernels run with (ISA level, thread backend, GEMM).
#include <nanobind/stl/string.h>

#include <atomic>

#include "python/src/bindings.h"
#include "runtime/eager/context.h"
#include "runtime/minitensor.h"

namespace mt::python {
namespace {

// TensorFlow's inter-op pool runs independent ops of a graph at once. Eager minitensor runs
// each op on the thread that calls it, so it has no such pool: the value is kept for
// get_inter_op_parallelism_threads and changes nothing else.
std::atomic<int> inter_op_threads{0};

void set_inter_op_parallelism_threads(int num_threads) {
  if (num_threads == inter_op_threads.load()) return;
  if (internal::Context::get().runtime_if_initialized() != nullptr) {
    internal::throw_error(absl::FailedPreconditionError(
        "Inter op parallelism cannot be modified after initialization."));
  }
  inter_op_threads.store(num_threads);
}

}  // namespace

void bind_threading(nb::module_& m) {
  namespace threading = config::threading;
  m.def("set_intra_op_parallelism_threads", &threading::set_intra_op_parallelism_threads,
        nb::arg("num_threads"));
  m.def("get_intra_op_parallelism_threads", &threading::get_intra_op_parallelism_threads);
  m.def("set_inter_op_parallelism_threads", &set_inter_op_parallelism_threads,
        nb::arg("num_threads"));
  m.def("get_inter_op_parallelism_threads", [] { return inter_op_threads.load(); });
  m.def("get_cpu_isa", &threading::get_cpu_isa);
  m.def("get_intra_op_thread_backend", &threading::get_intra_op_thread_backend);
  m.def("get_cpu_float32_gemm", &threading::get_cpu_float32_gemm);
}

}  // namespace mt::python
