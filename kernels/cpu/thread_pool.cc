// The intra-op pool: Eigen's non-blocking ThreadPool (the pool TensorFlow's CPU kernels run
// on), created on first use with intra_op_threads() - 1 workers.
//
// Note [One pool for all logical CPUs]: logical CPUs split memory, not cores. They all
// share this pool, so two user threads running ops on CPU:0 and CPU:1 at once queue their
// blocks on the same workers and never oversubscribe the machine; each caller also works
// on its own op, so neither waits for the other to finish.
#define EIGEN_USE_THREADS
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <unsupported/Eigen/CXX11/ThreadPool>

namespace mt::cpu {
namespace {

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

struct PoolState {
  std::mutex mu;                            // serialises rebuilding the pool
  std::atomic<int> threads{0};              // 0 until first use or set_intra_op_threads
  std::unique_ptr<Eigen::ThreadPool> pool;  // null with one thread
  std::atomic<Eigen::ThreadPool*> current{nullptr};
};

PoolState& state() {
  static PoolState* s = new PoolState;  // never destroyed: workers may outlive statics
  return *s;
}

void rebuild(PoolState& s, int threads) {
  s.current.store(nullptr, std::memory_order_release);
  s.pool.reset();  // joins the old workers
  if (threads > 1) s.pool = std::make_unique<Eigen::ThreadPool>(threads - 1);
  s.current.store(s.pool.get(), std::memory_order_release);
  s.threads.store(threads, std::memory_order_release);
}

// Returns the pool (null with one thread), creating it on first use.
Eigen::ThreadPool* pool(int* threads) {
  PoolState& s = state();
  *threads = s.threads.load(std::memory_order_acquire);
  if (__builtin_expect(*threads == 0, 0)) {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.threads.load(std::memory_order_relaxed) == 0) rebuild(s, hardware_threads());
    *threads = s.threads.load(std::memory_order_relaxed);
  }
  return s.current.load(std::memory_order_acquire);
}

}  // namespace

void set_intra_op_threads(int num_threads) {
  PoolState& s = state();
  const int threads = num_threads > 0 ? num_threads : hardware_threads();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.threads.load(std::memory_order_relaxed) != threads) rebuild(s, threads);
}

int intra_op_threads() {
  int threads;
  pool(&threads);
  return threads;
}

void parallel_for(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int threads;
  Eigen::ThreadPool* workers = n > grain ? pool(&threads) : nullptr;
  if (workers == nullptr || workers->CurrentThreadId() != -1) {
    fn(0, n);
    return;
  }
  // Blocks: as many as threads allow, each at least `grain` long and a multiple of
  // min(grain, 64), so that vector loops split an array where they would split it whole.
  const int64_t blocks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  const int64_t unit = std::min<int64_t>(grain, 64);
  const int64_t size = ((n + blocks - 1) / blocks + unit - 1) / unit * unit;
  const int64_t count = (n + size - 1) / size;
  Eigen::Barrier done(static_cast<unsigned>(count - 1));
  for (int64_t b = 1; b < count; ++b) {
    workers->Schedule([&, b] {
      fn(b * size, std::min(n, (b + 1) * size));
      done.Notify();
    });
  }
  fn(0, std::min(n, size));
  done.Wait();
}

}  // namespace mt::cpu
