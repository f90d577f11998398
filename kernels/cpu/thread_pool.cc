// parallel_for: how work is split into blocks and how many threads a call may use. The
// threads themselves come from thread_pool_backend.h (OpenMP's team or Eigen's ThreadPool).
//
// Note [One pool for all logical CPUs]: logical CPUs split memory, not cores. Every kernel
// of every logical CPU draws on the one thread budget, intra_op_threads(): a call may use
// its share of it, intra_op_threads() / (calls running now), and at least its own thread.
// One user thread running ops gets every core; two running at once (say one on CPU:0, one
// on CPU:1) get half each, so the machine is never oversubscribed by parallel_for. The
// split never changes a result (the kernels make their results independent of it), only
// how fast it comes.
//
// Note [Fork]: a child process made by fork() has only the forking thread: the parent's
// workers (OpenMP's or Eigen's) do not exist there, and waiting for them would hang. The
// child runs every kernel on its own thread.
#include "kernels/cpu/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "kernels/cpu/thread_pool_backend.h"

namespace mt::cpu {
namespace {

int hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

struct PoolState {
  std::mutex mu;                // serialises changes of the thread count
  std::atomic<int> threads{0};  // 0 until first use or set_intra_op_threads
  std::atomic<int> running{0};  // parallel_for calls now running on more than one thread
  std::atomic<bool> forked_child{false};
};

PoolState& state() {
  static PoolState* s = new PoolState;  // never destroyed: kernels may run during exit
  return *s;
}

void on_fork_child() { state().forked_child.store(true, std::memory_order_relaxed); }

void apply(PoolState& s, int threads) {
  internal::set_backend_threads(threads);
  s.threads.store(threads, std::memory_order_release);
}

int configured_threads() {
  PoolState& s = state();
  int threads = s.threads.load(std::memory_order_acquire);
  if (__builtin_expect(threads == 0, 0)) {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.threads.load(std::memory_order_relaxed) == 0) {
      pthread_atfork(nullptr, nullptr, &on_fork_child);
      apply(s, hardware_threads());
    }
    threads = s.threads.load(std::memory_order_relaxed);
  }
  return threads;
}

}  // namespace

void set_intra_op_threads(int num_threads) {
  PoolState& s = state();
  configured_threads();  // registers the fork handler once
  const int threads = num_threads > 0 ? num_threads : hardware_threads();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.threads.load(std::memory_order_relaxed) != threads) apply(s, threads);
}

int intra_op_threads() {
  const int threads = configured_threads();
  return state().forked_child.load(std::memory_order_relaxed) ? 1 : threads;
}

const char* intra_op_thread_backend() { return internal::thread_backend_name(); }

void parallel_for(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int total = n > grain ? intra_op_threads() : 1;
  if (total == 1 || internal::in_parallel_block()) {
    fn(0, n);
    return;
  }
  // This call's share of the threads (Note [One pool for all logical CPUs]).
  PoolState& s = state();
  const int calls = s.running.fetch_add(1, std::memory_order_acq_rel) + 1;
  const int64_t threads = std::max(1, total / calls);
  // Blocks: as many as the share allows, each at least `grain` long and a multiple of
  // min(grain, 64), so that vector loops split an array where they would split it whole.
  const int64_t blocks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  const int64_t unit = std::min<int64_t>(grain, 64);
  const int64_t size = ((n + blocks - 1) / blocks + unit - 1) / unit * unit;
  const int64_t count = (n + size - 1) / size;
  if (count < 2) {
    fn(0, n);
  } else {
    internal::run_blocks(count, [&](int64_t b) { fn(b * size, std::min(n, (b + 1) * size)); });
  }
  s.running.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace mt::cpu
