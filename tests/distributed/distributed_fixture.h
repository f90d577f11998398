#pragma once
// DistributedTest: a fresh runtime per test, connected to two mt-server worker processes on
// loopback that the whole suite shares (each test's tensors are gone when it ends, so the
// workers start every test empty).

#include <memory>
#include <string>

#include "tests/distributed/worker_process.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {

class DistributedTest : public RuntimeTest {
 protected:
  static void SetUpTestSuite() {
    spec_ = new distributed::ClusterSpec(loopback_workers(2));
    for (int i = 0; i < 2; ++i) {
      workers_[i] = new WorkerProcess();
      workers_[i]->start(*spec_, i, {"--cpus", "2"});
    }
  }
  static void TearDownTestSuite() {
    for (WorkerProcess*& w : workers_) {
      delete w;
      w = nullptr;
    }
    delete spec_;
  }

  void SetUp() override {
    RuntimeTest::SetUp();
    config::ConnectOptions options;
    options.rpc_timeout_ms = 10'000;
    options.connect_timeout_ms = 10'000;
    config::experimental_connect_to_cluster(*spec_, "localhost", 0, options);
  }

  // Returns "/job:worker/replica:0/task:<task>/device:CPU:<id>".
  static std::string worker_cpu(int task, int id = 0) {
    return absl::StrCat("/job:worker/replica:0/task:", task, "/device:CPU:", id);
  }
  static const std::string& address(int task) { return spec_->at("worker")[task]; }

  static inline distributed::ClusterSpec* spec_ = nullptr;
  static inline WorkerProcess* workers_[2] = {nullptr, nullptr};
};

}  // namespace mt::testing
