// The eager path end to end on logical CPUs: results, devices, log lines, copies.
#include <sstream>
#include <thread>

#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using testing::expect_error;

class EagerTest : public testing::RuntimeTest {};

TEST_F(EagerTest, GuideFirstExampleLogsAndPrints) {
  debugging::set_log_device_placement(true);
  Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  Tensor b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  Tensor c = matmul(a, b);
  std::ostringstream out;
  out << c;
  EXPECT_EQ(out.str(), "Tensor(\n[[22. 28.]\n [49. 64.]], shape=(2, 2), dtype=float32)");
  EXPECT_EQ(log(), (std::vector<std::string>{
                       "Executing op _EagerConst in device " + cpu(0),
                       "Executing op _EagerConst in device " + cpu(0),
                       "Executing op MatMul in device " + cpu(0),
                   }));
  EXPECT_EQ(c.device(), cpu(0));
}

TEST_F(EagerTest, NoLogLinesWhenLoggingIsOff) {
  Tensor a = constant({1.f, 2.f});
  Tensor b = a + a;
  EXPECT_TRUE(log().empty());
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{2, 4}));
}

TEST_F(EagerTest, OpsRunWhereTheScopeAsks) {
  split_cpu(4);
  debugging::set_log_device_placement(true);
  Tensor x;
  {
    DeviceScope scope("/CPU:2");
    x = constant({1.f, -2.f});
    EXPECT_EQ(x.device(), cpu(2));
    {
      DeviceScope inner("/device:CPU:3");
      Tensor y = relu(x);  // x is copied from CPU:2 to CPU:3
      EXPECT_EQ(y.device(), cpu(3));
      EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 0}));
    }
    EXPECT_EQ(abs(x).device(), cpu(2));
  }
  EXPECT_EQ(neg(x).device(), cpu(0));  // no scope: the best device
  EXPECT_EQ(log(), (std::vector<std::string>{
                       "Executing op _EagerConst in device " + cpu(2),
                       "Executing op Relu in device " + cpu(3),
                       "Executing op Abs in device " + cpu(2),
                       "Executing op Neg in device " + cpu(0),
                   }));
}

TEST_F(EagerTest, LoneSlashAndATypeWithoutAnIdAreScopesAsInTensorFlow) {
  split_cpu(2);
  DeviceScope outer("/CPU:1");
  {
    DeviceScope slash("/");  // an empty request: the enclosing /CPU:1 still holds
    EXPECT_EQ(constant(1.f).device(), cpu(1));
  }
  DeviceScope any_cpu("/device:CPU");  // same type: the enclosing id is kept
  EXPECT_EQ(constant(1.f).device(), cpu(1));
}

TEST_F(EagerTest, CopiesInputsFromOtherLogicalCpus) {
  split_cpu(4);
  Tensor a, b;
  {
    DeviceScope s("/CPU:1");
    a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  }
  {
    DeviceScope s("/CPU:2");
    b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  }
  DeviceScope s("/CPU:3");
  Tensor c = matmul(a, b);
  EXPECT_EQ(c.device(), cpu(3));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{22, 28, 49, 64}));
  // The copies made for the op are gone; only c remains on CPU:3.
  MemoryInfo info = config::get_memory_info("CPU:3");
  EXPECT_EQ(info.current, 256);
  EXPECT_EQ(config::get_memory_info("CPU:1").current, 256);
}

TEST_F(EagerTest, ManualReplicationAddsOnCpu) {
  split_cpu(4);
  std::vector<Tensor> c;
  for (const LogicalDevice& d : config::list_logical_devices("CPU")) {
    DeviceScope scope(d);
    Tensor a = constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
    Tensor b = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
    c.push_back(matmul(a, b));
    EXPECT_EQ(c.back().device(), "/job:localhost/replica:0/task:0" + d.name);
  }
  DeviceScope on_cpu("/CPU:0");
  Tensor sum = add_n(c);
  std::ostringstream out;
  out << sum;
  EXPECT_EQ(out.str(), "Tensor(\n[[ 88. 112.]\n [196. 256.]], shape=(2, 2), dtype=float32)");
}

TEST_F(EagerTest, IdentityCopiesToTheScopeDevice) {
  split_cpu(2);
  Tensor a = constant({1, 2, 3});
  DeviceScope s("/CPU:1");
  Tensor b = identity(a);
  EXPECT_EQ(b.device(), cpu(1));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  Tensor c = identity(b);  // same device: still a new tensor
  EXPECT_NE(c.impl(), b.impl());
  EXPECT_EQ(c.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
}

TEST_F(EagerTest, UnknownDeviceRaisesNotFound) {
  config::set_soft_device_placement(false);  // the strict behaviour this test checks
  debugging::set_log_device_placement(true);
  Error e = expect_error([] {
    DeviceScope scope("/device:GPU:2");
    constant({1.f});
  });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(std::string(e.what()),
            "/job:localhost/replica:0/task:0/device:GPU:2 unknown device. Available devices: " +
                cpu(0) + ".");
  EXPECT_TRUE(log().empty());  // nothing ran
}

TEST_F(EagerTest, SoftPlacementRunsOnAnExistingDevice) {
  config::set_soft_device_placement(true);
  debugging::set_log_device_placement(true);
  DeviceScope scope("/device:GPU:2");
  Tensor a = constant({{1.f, 2.f}});
  Tensor c = matmul(a, a, false, true);
  EXPECT_EQ(c.device(), cpu(0));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{5}));
  EXPECT_EQ(log().size(), 2u);
  config::set_soft_device_placement(false);  // the cached decision must not survive this
  EXPECT_EQ(expect_error([&] { matmul(a, a, false, true); }).code(), absl::StatusCode::kNotFound);
}

TEST_F(EagerTest, CastFallsBackToCpuWhenRequestedOnCpu) {
  split_cpu(2);
  debugging::set_log_device_placement(true);
  DeviceScope scope("/CPU:1");
  Tensor x = cast(constant({1.5f, -2.5f}), DType::kInt32);
  EXPECT_EQ(x.dtype(), DType::kInt32);
  EXPECT_EQ(x.device(), cpu(1));
  EXPECT_EQ(x.to_vector<int32_t>(), (std::vector<int32_t>{1, -2}));
  EXPECT_EQ(log().back(), "Executing op Cast in device " + cpu(1));
}

TEST_F(EagerTest, MalformedScopeNameThrowsInvalidArgument) {
  Error e = expect_error([] { DeviceScope scope("/device:GPU:x"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("'/device:GPU:x'"), std::string::npos) << e.what();
}

TEST_F(EagerTest, ThreadsRunOpsWithTheirOwnScopes) {
  split_cpu(4);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &wrong] {
      DeviceScope scope("/CPU:" + std::to_string(t));
      for (int i = 0; i < 200; ++i) {
        Tensor a = constant({static_cast<float>(t), static_cast<float>(i)});
        Tensor b = add_n({a, a, a});
        if (b.device() != cpu(t) || b.to_vector<float>() != std::vector<float>{3.f * t, 3.f * i})
          ++wrong[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace mt
