// parallel_for's threads on OpenMP's team (thread_pool_backend.h): GNU OpenMP keeps one
// team per calling thread and lets it spin briefly between parallel regions, so
// back-to-back ops start their blocks in a few microseconds where a pool whose workers
// sleep between ops needs tens (docs/design.md, "Execution on CPUs"). oneDNN's GEMM runs on
// the same team.
#if MT_HAVE_OPENMP
#include <omp.h>

#include "kernels/cpu/thread_pool_backend.h"

namespace mt::cpu::internal {

const char* thread_backend_name() { return "openmp"; }

void set_backend_threads(int) {}  // each region names its thread count

void run_blocks(int64_t count, absl::FunctionRef<void(int64_t)> block) {
  // The runtime may give fewer threads than asked for (OMP_THREAD_LIMIT): each thread takes
  // every team-size-th block, so all blocks run whatever the team's size.
#pragma omp parallel num_threads(static_cast <int>(count))
  {
    const int64_t step = omp_get_num_threads();
    for (int64_t b = omp_get_thread_num(); b < count; b += step) block(b);
  }
}

bool in_parallel_block() { return omp_in_parallel() != 0; }

}  // namespace mt::cpu::internal
#endif  // MT_HAVE_OPENMP
