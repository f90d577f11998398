// Ops on devices of other processes: placement, remote results, copies, freeing.
#include <algorithm>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "runtime/trace/trace.h"
#include "tests/distributed/distributed_fixture.h"
#include "tests/runtime/json_test_util.h"

namespace mt {
namespace {

using ::testing::ElementsAre;
using testing::expect_error;
using ::testing::HasSubstr;

class RemoteEagerTest : public testing::DistributedTest {};

TEST_F(RemoteEagerTest, ListsRemoteDevicesWithFullNames) {
  std::vector<std::string> names;
  for (const LogicalDevice& d : config::list_logical_devices("CPU")) names.push_back(d.name);
  EXPECT_THAT(names, ElementsAre(cpu(0), worker_cpu(0, 0), worker_cpu(0, 1), worker_cpu(1, 0),
                                 worker_cpu(1, 1)));
}

TEST_F(RemoteEagerTest, RunsTheGuidesFirstExampleOnTask1) {
  debugging::set_log_device_placement(true);
  Tensor c;
  {
    DeviceScope scope("/job:worker/task:1");
    Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Tensor b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    c = matmul(a, b);
  }
  EXPECT_EQ(c.device(), worker_cpu(1));
  EXPECT_THAT(log(), ElementsAre("Executing op _EagerConst in device " + worker_cpu(1),
                                 "Executing op _EagerConst in device " + worker_cpu(1),
                                 "Executing op MatMul in device " + worker_cpu(1)));
  std::ostringstream printed;
  printed << c;
  EXPECT_EQ(printed.str(), "Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)");
}

TEST_F(RemoteEagerTest, TraceRecordsRemoteOpsOnTheirDevice) {
  Tensor a = constant({1.f, 2.f, 3.f});
  {
    trace::Recording recording;
    DeviceScope scope("/job:worker/task:1");
    Tensor b = add(a, a);
    EXPECT_THAT(b.to_vector<float>(), ElementsAre(2.f, 4.f, 6.f));
  }
  std::optional<testing::Json> trace = testing::parse_json(trace::to_json());
  ASSERT_TRUE(trace.has_value()) << trace::to_json();
  std::vector<const testing::Json*> ops;
  for (const testing::Json& e : (*trace)["traceEvents"].array) {
    if (e["cat"].string == "op") ops.push_back(&e);
  }
  ASSERT_EQ(ops.size(), 1u) << trace::to_json();
  const testing::Json& args = (*ops[0])["args"];
  EXPECT_EQ((*ops[0])["name"].string, "AddV2");
  EXPECT_EQ(args["device"].string, worker_cpu(1));
  EXPECT_EQ(args["shapes"].string, "(3,), (3,) -> (3,)");
  EXPECT_EQ(args["timing"].string, "issue");
  EXPECT_EQ(args["bytes_allocated"].number, 12);
}

TEST_F(RemoteEagerTest, CopiesFromLocalToRemoteAndBack) {
  Tensor local = constant({1.f, 2.f, 3.f});
  Tensor remote, back;
  {
    DeviceScope scope(worker_cpu(0, 1));
    remote = identity(local);
  }
  {
    DeviceScope scope("/CPU:0");
    back = identity(remote * remote);  // Mul runs locally on a copy of the remote tensor
  }
  EXPECT_EQ(remote.device(), worker_cpu(0, 1));
  EXPECT_EQ(back.device(), cpu(0));
  EXPECT_THAT(remote.to_vector<float>(), ElementsAre(1.f, 2.f, 3.f));
  EXPECT_THAT(back.to_vector<float>(), ElementsAre(1.f, 4.f, 9.f));
}

TEST_F(RemoteEagerTest, CopiesBetweenDevicesOfOneTaskAndBetweenTasks) {
  Tensor x, y, z;
  {
    DeviceScope scope(worker_cpu(1, 0));
    x = fill({2}, 3.f);
  }
  {
    DeviceScope scope(worker_cpu(1, 1));
    y = identity(x);  // on the task, by handle
  }
  {
    DeviceScope scope(worker_cpu(0, 0));
    z = identity(y);  // through this process
  }
  EXPECT_EQ(y.device(), worker_cpu(1, 1));
  EXPECT_THAT(z.to_vector<float>(), ElementsAre(3.f, 3.f));
}

TEST_F(RemoteEagerTest, AddsTensorsOfTwoTasks) {
  Tensor x, y, sum;
  {
    DeviceScope scope("/job:worker/task:0");
    x = constant({1.f, 2.f});
  }
  {
    DeviceScope scope("/job:worker/task:1");
    y = constant({10.f, 20.f});
    sum = add_n({x, y, y});
  }
  EXPECT_EQ(sum.device(), worker_cpu(1));
  EXPECT_THAT(sum.to_vector<float>(), ElementsAre(21.f, 42.f));
}

TEST_F(RemoteEagerTest, RandomOpsOnATaskGiveTheLocalBits) {
  // The attrs carry the Philox stream and the scaling (Note [Random ops]); a stateful op's
  // stream is reserved here, at the call, so the same call gives the same bits on either side.
  auto draw = [] {
    random::set_seed(1);
    return std::vector<Tensor>{random::stateless_uniform({9}, {1, 2}, -2.5, 3.0),
                               random::stateless_normal({9}, {3, 4}, 1.5, 0.3),
                               random::uniform({9}, -5, 17, DType::kInt64, 7),
                               random::truncated_normal({9}, 0, 2, DType::kFloat64, 7)};
  };
  std::vector<Tensor> remote, local = draw();
  {
    DeviceScope scope("/job:worker/task:1");
    remote = draw();
  }
  EXPECT_EQ(remote[0].device(), worker_cpu(1));
  EXPECT_EQ(remote[0].to_vector<float>(), local[0].to_vector<float>());
  EXPECT_EQ(remote[1].to_vector<float>(), local[1].to_vector<float>());
  EXPECT_EQ(remote[2].to_vector<int64_t>(), local[2].to_vector<int64_t>());
  EXPECT_EQ(remote[3].to_vector<double>(), local[3].to_vector<double>());
}

TEST_F(RemoteEagerTest, DefaultPlacementStaysLocal) {
  EXPECT_EQ(matmul(constant({{1.f}}), constant({{2.f}})).device(), cpu(0));
}

TEST_F(RemoteEagerTest, MissingTaskIsUnknownDevice) {
  config::set_soft_device_placement(false);  // the strict behaviour this test checks
  DeviceScope scope("/job:worker/task:5");
  Error e = expect_error([] { constant({1.f}); });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(e.what(), HasSubstr("/job:worker/replica:0/task:5/device:*:* unknown device."));
  EXPECT_THAT(e.what(), HasSubstr(worker_cpu(1, 1)));
}

TEST_F(RemoteEagerTest, SoftPlacementMovesMissingTaskToLocalDevice) {
  config::set_soft_device_placement(true);
  DeviceScope scope("/job:worker/task:5/device:CPU:0");
  EXPECT_EQ(constant({1.f}).device(), cpu(0));
}

TEST_F(RemoteEagerTest, FreesRemoteBufferWithLastHandle) {
  std::string device = worker_cpu(1, 1);
  int64_t before = config::get_memory_info(device).current;
  {
    Tensor big;
    {
      DeviceScope scope(device);
      big = zeros({1024, 1024});
    }
    Tensor alias = big;
    EXPECT_GE(config::get_memory_info(device).current, before + 4 * 1024 * 1024);
  }
  EXPECT_EQ(config::get_memory_info(device).current, before);
}

TEST_F(RemoteEagerTest, ReportsShapeErrorsBeforeSending) {
  DeviceScope scope(worker_cpu(0));
  Tensor a = constant({{1.f, 2.f}});
  Error e = expect_error([&] { matmul(a, a); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(e.what(), HasSubstr("[MatMul]"));
}

TEST_F(RemoteEagerTest, RefusesToConnectAfterInitialisation) {
  constant({1.f});  // initialises the runtime
  Error e = expect_error([] { config::experimental_connect_to_cluster(*spec_); });
  EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(e.what(), HasSubstr("Cluster cannot be connected after the runtime is initialized"));
}

}  // namespace
}  // namespace mt
