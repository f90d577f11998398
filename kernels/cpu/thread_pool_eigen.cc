// parallel_for's threads on Eigen's non-blocking ThreadPool (thread_pool_backend.h), for
// builds without OpenMP: the ThreadSanitizer preset (GNU OpenMP's own synchronisation is
// invisible to TSan) and compilers without it. One pool per process, threads - 1 workers.
#if !MT_HAVE_OPENMP
#define EIGEN_USE_THREADS
#include <memory>
#include <unsupported/Eigen/CXX11/ThreadPool>

#include "kernels/cpu/thread_pool_backend.h"

namespace mt::cpu::internal {
namespace {

// Never destroyed: workers may outlive statics. Rebuilt only by set_backend_threads, which
// thread_pool.cc never calls while a block runs.
std::unique_ptr<Eigen::ThreadPool>& pool() {
  static auto* p = new std::unique_ptr<Eigen::ThreadPool>;
  return *p;
}

}  // namespace

const char* thread_backend_name() { return "eigen"; }

void set_backend_threads(int threads) {
  pool().reset();  // joins the old workers
  if (threads > 1) pool() = std::make_unique<Eigen::ThreadPool>(threads - 1);
}

void run_blocks(int64_t count, absl::FunctionRef<void(int64_t)> block) {
  Eigen::ThreadPool& workers = *pool();
  Eigen::Barrier done(static_cast<unsigned>(count - 1));
  for (int64_t b = 1; b < count; ++b) {
    workers.Schedule([&, b] {
      block(b);
      done.Notify();
    });
  }
  block(0);
  done.Wait();
}

bool in_parallel_block() {
  const auto& p = pool();
  return p != nullptr && p->CurrentThreadId() != -1;
}

}  // namespace mt::cpu::internal
#endif  // !MT_HAVE_OPENMP
