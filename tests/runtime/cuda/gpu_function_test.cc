// mt::Function on a GPU: a replay is one CUDA graph launch and gives, bit for bit, what the
// body gives eagerly (random op chains over the op table, a training step); arguments from
// the host and other devices make a flat replay; a variable moved between calls makes the
// graph captured again; a replay allocates only its outputs; a function over two GPUs is
// one graph with the copies inside; inside MirroredStrategy::run each replica replays
// its own graph (two virtual GPUs reducing to one device, two cards over NCCL). Skips
// without a GPU.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "runtime/eager/context.h"
#include "tests/runtime/function_checks.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";

class GpuFunctionTest : public RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    if (config::list_physical_devices("GPU").empty()) GTEST_SKIP() << "needs a GPU";
  }
  // Splits GPU 0 into two logical GPUs of 1 GiB.
  static void two_virtual_gpus() {
    config::set_logical_device_configuration(
        config::list_physical_devices("GPU")[0],
        {{.memory_limit_mb = 1024}, {.memory_limit_mb = 1024}});
  }
};

TEST_F(GpuFunctionTest, RandomChainsReplayAsOneGraphAndMatchEagerBitForBit) {
  EXPECT_GT(check_chains_replay(kGpu, 120, 1), 600);
}

TEST_F(GpuFunctionTest, ChainsOnHostLeavesReplayAsFlatSteps) {
  EXPECT_GT(check_chains_replay(kGpu, 40, 300, cpu(0)), 150);
}

TEST_F(GpuFunctionTest, TrainingStepReplaysAsOneGraphAndMatchesEagerTraining) {
  EXPECT_EQ(check_training_replay(kGpu, 6), "graph");
}

TEST_F(GpuFunctionTest, AChainIsOneGraphAndAllocatesOnlyItsOutput) {
  DeviceScope scope("/GPU:0");
  Function f([](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    Tensor x = a[0];
    for (int i = 0; i < 100; ++i) x = add(x, a[1]);
    return {x};
  });
  const Tensor y = constant({0.5f});
  f({constant({1.f}), y});
  EXPECT_EQ(f.replay_kind(), "graph");
  internal::Runtime* rt = internal::value_or_throw(internal::Context::get().runtime());
  internal::Device& gpu = rt->device(1);
  ASSERT_EQ(gpu.type(), DeviceType::kGPU);
  const int64_t before = gpu.allocator().stats().num_allocs;
  const Tensor out = f({constant({2.f}), y})[0];
  EXPECT_EQ(gpu.allocator().stats().num_allocs - before, 2);  // the constant and the output
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{52}));
}

// An argument used only by the first op, passed again: the replay reuses the buffer it
// copied it into, which no later value of the replay may take.
TEST_F(GpuFunctionTest, AnArgumentPassedAgainKeepsItsBufferThroughTheReplay) {
  DeviceScope scope("/GPU:0");
  auto body = [](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    Tensor x = mul(a[0], a[1]);
    for (int i = 0; i < 20; ++i) x = add(x, a[1]);
    return {x};
  };
  Function f(body);
  const Tensor x = constant({1.f, 2.f, 3.f}), y = constant({0.5f, 0.25f, 2.f});
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(f({x, y})[0].to_vector<float>(), body({x, y})[0].to_vector<float>()) << i;
  }
  const Tensor z = constant({4.f, 5.f, 6.f});
  EXPECT_EQ(f({z, y})[0].to_vector<float>(), body({z, y})[0].to_vector<float>());
  EXPECT_EQ(f({x, y})[0].to_vector<float>(), body({x, y})[0].to_vector<float>());
  EXPECT_EQ(f.replay_kind(), "graph");
}

TEST_F(GpuFunctionTest, AVariableMovedBetweenCallsIsCapturedAgain) {
  DeviceScope scope("/GPU:0");
  Variable v(constant({1.f, 2.f}));
  Function f([&](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    v.assign_add(a[0]);
    return {mul(v.read_value(), a[0])};
  });
  const Tensor one = constant({1.f, 1.f});
  f({one});
  EXPECT_EQ(f({one})[0].to_vector<float>(), (std::vector<float>{3, 4}));
  const Tensor held = v.read_value();  // the next replay must not write this buffer
  EXPECT_EQ(f({one})[0].to_vector<float>(), (std::vector<float>{4, 5}));
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(f.replay_kind(), "graph");
  EXPECT_EQ(v.read_value().to_vector<float>(), (std::vector<float>{4, 5}));
}

// Replays a function over GPU:0 and GPU:1 (a chain on each, the value copied between)
// against its body run eagerly; returns how many graphs a replay launches.
int check_two_gpu_function() {
  auto body = [](absl::Span<const Tensor> a) -> std::vector<Tensor> {
    Tensor x = a[0];
    {
      DeviceScope first("/GPU:0");
      for (int i = 0; i < 10; ++i) x = mul(add(x, a[1]), a[1]);
    }
    DeviceScope second("/GPU:1");
    Tensor y = matmul(x, x, false, true);
    for (int i = 0; i < 10; ++i) y = sub(y, a[1]);
    return {y, x};
  };
  Function f(body);
  DeviceScope scope("/GPU:0");
  const Tensor y = constant(std::vector<float>{0.5f, 1.5f, -1.f}, {1, 3});
  for (int i = 0; i < 3; ++i) {
    const Tensor x = constant(std::vector<float>{1.f + i, 2.f, -3.f}, {1, 3});
    const std::vector<Tensor> got = f({x, y}), want = body({x, y});
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(got[k].device(), want[k].device());
      EXPECT_EQ(got[k].to_vector<float>(), want[k].to_vector<float>()) << i;
    }
  }
  EXPECT_EQ(f.replay_kind(), "graph");
  return f.graphs_per_replay();
}

TEST_F(GpuFunctionTest, AFunctionOverTwoGpusIsOneGraphWithTheCopiesInside) {
  two_virtual_gpus();
  EXPECT_EQ(check_two_gpu_function(), 1);  // both GPUs and the copies in one graph
}

TEST_F(GpuFunctionTest, AFunctionOverTwoCardsIsOneGraphWithThePeerCopiesInside) {
  if (config::list_physical_devices("GPU").size() < 2) GTEST_SKIP() << "needs two GPUs";
  EXPECT_EQ(check_two_gpu_function(), 1);
}

TEST_F(GpuFunctionTest, EachReplicaOfTwoVirtualGpusReplaysItsOwnGraph) {
  two_virtual_gpus();
  EXPECT_EQ(check_replica_training_replay({"/GPU:0", "/GPU:1"}, 6), "graph");
}

TEST_F(GpuFunctionTest, EachReplicaOfTwoCardsReplaysItsOwnGraphBetweenNcclAllReduces) {
  if (config::list_physical_devices("GPU").size() < 2) GTEST_SKIP() << "needs two GPUs";
  EXPECT_EQ(check_replica_training_replay({"/GPU:0", "/GPU:1"}, 6), "graph");
}

}  // namespace
}  // namespace mt::testing
