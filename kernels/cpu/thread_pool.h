#pragma once
// The process's intra-op threads: every CPU kernel whose work is large enough splits it
// across them and the calling thread; small work runs on the calling thread alone, so a
// 1-element op never touches them. The threads are OpenMP's team, or Eigen's ThreadPool in
// builds without OpenMP (thread_pool_backend.h). All logical CPUs share one thread budget
// (Note [One pool for all logical CPUs] in thread_pool.cc).
//
//   cpu::parallel_for(n, /*grain=*/16384, [&](int64_t begin, int64_t end) {
//     for (int64_t i = begin; i < end; ++i) out[i] = a[i] + b[i];
//   });
//
// Threads: set_intra_op_threads(n) with n >= 1 uses n threads (n - 1 workers plus the
// caller); 0 means one per hardware thread. The runtime calls it once when it initialises
// (mt::config::threading); tests call it between kernel runs.

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace mt::cpu {

// Sets the number of threads kernels use (0: one per hardware thread) and rebuilds the pool.
// Not safe while a kernel runs on another thread: call it at initialisation or in tests.
void set_intra_op_threads(int num_threads);

// Returns the number of threads kernels use (the caller included); at least 1, and 1 in a
// child process made by fork() (Note [Fork] in thread_pool.cc).
int intra_op_threads();

// Returns where the threads come from: "openmp" or "eigen".
const char* intra_op_thread_backend();

// Calls fn(begin, end) on disjoint ranges covering [0, n), each at least `grain` long except
// possibly the last, in parallel on the intra-op threads and the calling thread, and
// returns when all are done. Runs fn(0, n) inline when n <= grain, with one thread, or when
// called from inside another parallel_for (nested parallelism runs serially). Every range
// but the last starts and ends at a multiple of min(grain, 64), so a vectorised loop treats
// each element as it would in one pass over [0, n). The split depends on n, grain and the
// threads the call may use, which fall when other calls run at the same time (Note [One
// pool for all logical CPUs]): a kernel's result must not depend on it.
void parallel_for(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> fn);

}  // namespace mt::cpu
