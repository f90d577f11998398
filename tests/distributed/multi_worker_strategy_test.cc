// MultiWorkerMirroredStrategy in C++: two workers whose strategies live in this process,
// each on a thread of its own with its own server, as two processes would.
#include "distributed/multi_worker_strategy.h"

#include <optional>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/minitensor.h"
#include "tests/distributed/worker_process.h"

namespace mt::distribute {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Returns what fn(task) of each of `n` workers returned, every worker on its own thread.
template <typename Fn>
auto on_every_worker(int n, Fn fn) {
  std::vector<decltype(fn(0))> out(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { out[r] = fn(r); });
  for (std::thread& t : threads) t.join();
  return out;
}

TEST(MultiWorkerMirroredStrategyTest, WorkersSumTheirGradientsAndEndAlike) {
  const distributed::ClusterSpec spec = testing::loopback_workers(2);
  CommunicationOptions communication;
  communication.timeout_seconds = 5;
  auto results = on_every_worker(2, [&](int task) {
    MultiWorkerMirroredStrategy strategy(spec, "worker", task, communication);
    EXPECT_EQ(strategy.num_workers(), 2);
    EXPECT_EQ(strategy.worker_index(), task);
    EXPECT_EQ(strategy.num_replicas_in_sync(), 2);
    EXPECT_STREQ(strategy.cross_device_ops_name(), "CollectiveAllReduce");
    std::optional<Variable> w;
    {
      auto scope = strategy.scope();
      w.emplace(constant({1.f, 2.f}), true, "w");
    }
    optimizers::SGD sgd(0.5);
    std::vector<float> mean;
    strategy.run([&](ReplicaContext& ctx) {
      EXPECT_EQ(ctx.replica_id_in_sync_group(), task);
      const float r = static_cast<float>(task);
      sgd.apply_gradients({{constant({1 + r, 10 * r}), *w}});  // summed: {3, 10}
      mean = ctx.all_reduce(ReduceOp::kMean, constant({r, 4 * r})).to_vector<float>();
    });
    std::vector<float> reduced =
        strategy.reduce(ReduceOp::kSum, {constant({static_cast<float>(task)})}).to_vector<float>();
    std::vector<float> out = w->read_value().to_vector<float>();
    out.insert(out.end(), mean.begin(), mean.end());
    out.insert(out.end(), reduced.begin(), reduced.end());
    return out;
  });
  EXPECT_THAT(results[0], ElementsAre(-0.5f, -3.f, 0.5f, 2.f, 1.f));
  EXPECT_EQ(results[1], results[0]);
}

TEST(MultiWorkerMirroredStrategyTest, RefusesNcclAndTasksOutsideTheWorkers) {
  distributed::ClusterSpec spec = testing::loopback_workers(1);
  spec["ps"] = {"127.0.0.1:1"};
  CommunicationOptions nccl;
  nccl.implementation = CommunicationImplementation::kNccl;
  try {
    MultiWorkerMirroredStrategy strategy(spec, "worker", 0, nccl);
    ADD_FAILURE() << "NCCL accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), absl::StatusCode::kUnimplemented);
    EXPECT_THAT(e.what(), HasSubstr("NCCL between worker processes is not implemented yet"));
  }
  try {
    MultiWorkerMirroredStrategy strategy(spec, "ps", 0);
    ADD_FAILURE() << "a ps task accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("task /job:ps/replica:0/task:0 takes no part"));
  }
  CommunicationOptions negative;
  negative.timeout_seconds = -1;
  try {
    MultiWorkerMirroredStrategy strategy(spec, "worker", 0, negative);
    ADD_FAILURE() << "a negative timeout accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(e.what(), HasSubstr("timeout_seconds must be positive"));
  }
}

}  // namespace
}  // namespace mt::distribute
