#pragma once
// The threads behind parallel_for (thread_pool.h): OpenMP's team when the build has OpenMP
// (thread_pool_openmp.cc), else Eigen's ThreadPool (thread_pool_eigen.cc). thread_pool.cc
// decides how work is split and how many threads a call may use; a backend only runs the
// blocks. Exactly one of the two files defines these functions in a build.

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace mt::cpu::internal {

// The backend's name for the benchmark header and docs: "openmp" or "eigen".
const char* thread_backend_name();

// Called before the first run and whenever the configured thread count changes, never while
// a block runs.
void set_backend_threads(int threads);

// Runs block(b) for every b in [0, count), block 0 on the calling thread and the others on
// up to count - 1 more threads, and returns when all are done. 2 <= count <= the count last
// given to set_backend_threads.
void run_blocks(int64_t count, absl::FunctionRef<void(int64_t)> block);

// True on a thread that is running a block (nested parallel_for calls run serially).
bool in_parallel_block();

}  // namespace mt::cpu::internal
