#pragma once
// ReplicaThreads (internal): one thread per replica, started on first use and kept for the
// strategy's lifetime, as TensorFlow's MirroredStrategy keeps one thread per device.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mt::internal {

class ReplicaThreads {
 public:
  explicit ReplicaThreads(int replicas) : replicas_(replicas) {}
  // Stops and joins the threads; no run_all may be in progress.
  ~ReplicaThreads();
  ReplicaThreads(const ReplicaThreads&) = delete;
  ReplicaThreads& operator=(const ReplicaThreads&) = delete;

  // Calls job(r) on thread r for every replica r and returns when all have returned.
  // `job` must not throw. One run_all at a time.
  void run_all(const std::function<void(int)>& job);

 private:
  void loop(int replica);

  const int replicas_;
  std::mutex mu_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int64_t generation_ = 0;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mt::internal
