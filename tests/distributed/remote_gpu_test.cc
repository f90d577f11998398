// A remote task's GPU used from this process (skips itself where the workers see no GPU).
#include "gmock/gmock.h"
#include "tests/distributed/worker_process.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

class RemoteGpuTest : public testing::RuntimeTest {};

TEST_F(RemoteGpuTest, RunsMatMulOnTask1Gpu0) {
  distributed::ClusterSpec spec = testing::loopback_workers(2);
  testing::WorkerProcess workers[2];
  for (int i = 0; i < 2; ++i) workers[i].start(spec, i, {}, /*gpus=*/true);
  config::experimental_connect_to_cluster(spec);
  const std::string gpu = "/job:worker/replica:0/task:1/device:GPU:0";
  std::vector<std::string> names;
  for (const LogicalDevice& d : config::list_logical_devices()) names.push_back(d.name);
  if (std::find(names.begin(), names.end(), gpu) == names.end()) {
    GTEST_SKIP() << "task 1 has no GPU";
  }
  debugging::set_log_device_placement(true);
  Tensor c;
  {
    DeviceScope scope("/job:worker/task:1/device:GPU:0");
    Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Tensor b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    c = matmul(a, b);
  }
  debugging::set_log_device_placement(false);
  for (const std::string& line : log()) std::cout << line << "\n";  // for gpu-run.sh's log
  EXPECT_THAT(log(), ElementsAre("Executing op _EagerConst in device " + gpu,
                                 "Executing op _EagerConst in device " + gpu,
                                 "Executing op MatMul in device " + gpu));
  EXPECT_EQ(c.device(), gpu);
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(22.f, 28.f, 49.f, 64.f));
  EXPECT_THAT(names, Contains("/job:worker/replica:0/task:0/device:GPU:0"));
}

// A large tensor goes up in pieces into the task's GPU memory and comes back through a
// host staging buffer there (Note [Tensor bytes on the wire] in bulk_service.h), whole
// and in parts.
TEST_F(RemoteGpuTest, SendsALargeTensorToTask1Gpu0AndBack) {
  distributed::ClusterSpec spec = testing::loopback_workers(2);
  testing::WorkerProcess workers[2];
  for (int i = 0; i < 2; ++i) workers[i].start(spec, i, {}, /*gpus=*/true);
  config::experimental_connect_to_cluster(spec);
  const std::string gpu = "/job:worker/replica:0/task:1/device:GPU:0";
  std::vector<std::string> names;
  for (const LogicalDevice& d : config::list_logical_devices()) names.push_back(d.name);
  if (std::find(names.begin(), names.end(), gpu) == names.end()) {
    GTEST_SKIP() << "task 1 has no GPU";
  }
  // 5 MiB: whole, in two pieces, the last one short; 20 MiB: in parts over several
  // connections (Note [Transfers over several connections]) on a client with 2 or more
  // hardware threads, each part copied into its range of the GPU buffer.
  for (int64_t mib : {5, 20}) {
    SCOPED_TRACE(absl::StrCat(mib, " MiB"));
    const int64_t n = (mib << 20) / 4 + 3;
    std::vector<float> values(n);  // whole numbers below 2^24: doubling them is exact
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 1000003) - 500000.f;
    Tensor local = constant(values, {n});
    Tensor remote, doubled;
    {
      DeviceScope scope(gpu);
      remote = identity(local);
      doubled = remote + remote;
    }
    EXPECT_EQ(remote.device(), gpu);
    EXPECT_EQ(remote.to_vector<float>(), values);
    std::vector<float> back = doubled.to_vector<float>();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(back[i], 2 * values[i]) << i;
  }
}

}  // namespace
}  // namespace mt
