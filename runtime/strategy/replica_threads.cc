#include "runtime/strategy/replica_threads.h"

namespace mt::internal {

ReplicaThreads::~ReplicaThreads() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ReplicaThreads::run_all(const std::function<void(int)>& job) {
  std::unique_lock<std::mutex> lock(mu_);
  if (threads_.empty()) {
    for (int r = 0; r < replicas_; ++r) threads_.emplace_back([this, r] { loop(r); });
  }
  job_ = &job;
  running_ = replicas_;
  ++generation_;
  start_.notify_all();
  done_.wait(lock, [&] { return running_ == 0; });
  job_ = nullptr;
}

void ReplicaThreads::loop(int replica) {
  int64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    const std::function<void(int)>* job = job_;
    lock.unlock();
    (*job)(replica);
    lock.lock();
    if (--running_ == 0) done_.notify_all();
  }
}

}  // namespace mt::internal
