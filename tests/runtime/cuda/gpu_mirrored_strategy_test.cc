// MirroredStrategy on GPUs: two virtual GPUs of one card reduce to one device; two or more
// physical GPUs all-reduce with NCCL, packed into buckets (many small values, a large one,
// mixed dtypes), and train exactly as one device with the whole batch. Tests skip without
// the GPUs they need.
#include <cmath>
#include <cstdlib>
#include <optional>

#include "gmock/gmock.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt {
namespace {

using distribute::CrossDeviceOptions;
using distribute::MirroredStrategy;
using distribute::ReduceOp;
using distribute::ReplicaContext;
using ::testing::HasSubstr;

class GpuMirroredStrategyTest : public testing::RuntimeTest {
 protected:
  bool uses_gpus() const override { return true; }
  void SetUp() override {
    RuntimeTest::SetUp();
    gpus_ = static_cast<int>(config::list_physical_devices("GPU").size());
    if (gpus_ == 0) GTEST_SKIP() << "needs a GPU: none is visible";
  }
  // Splits GPU 0 into two logical GPUs of 1 GiB.
  static void two_virtual_gpus() {
    config::set_logical_device_configuration(
        config::list_physical_devices("GPU")[0],
        {{.memory_limit_mb = 1024}, {.memory_limit_mb = 1024}});
  }
  int gpus_ = 0;
};

std::vector<float> host(const Tensor& t) {
  DeviceScope cpu("/CPU:0");
  return cast(t, DType::kFloat32).to_vector<float>();
}

// Trains y = relu(x w1) w2 for five Adam steps, on one device with the whole batch or on
// every replica of `strategy` with its share, the loss over the whole batch's size.
std::vector<float> train(MirroredStrategy* strategy, int batch) {
  std::vector<float> x, y;
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < 16; ++j) x.push_back(std::sin(static_cast<float>(i * 16 + j)));
    y.push_back(std::cos(static_cast<float>(i)));
  }
  Tensor w1_init = random::stateless_normal({16, 32}, {1, 2}, 0, 0.5);  // the same each call
  Tensor w2_init = random::stateless_normal({32, 1}, {3, 4}, 0, 0.5);
  std::optional<Variable> w1, w2;
  {
    std::optional<MirroredStrategy::Scope> scope;
    if (strategy != nullptr) scope.emplace(strategy->scope());
    w1.emplace(w1_init);
    w2.emplace(w2_init);
  }
  optimizers::Adam adam(0.01);
  auto step = [&](int begin, int end) {
    const int n = end - begin;
    Tensor xs = constant(std::vector<float>(x.begin() + 16 * begin, x.begin() + 16 * end), {n, 16});
    Tensor ys = constant(std::vector<float>(y.begin() + begin, y.begin() + end), {n, 1});
    GradientTape tape;
    Tensor out = matmul(relu(matmul(xs, *w1)), *w2);
    Tensor loss = div(reduce_sum(square(sub(out, ys))), constant(static_cast<float>(batch)));
    std::vector<Tensor> g = tape.gradient(loss, {*w1, *w2});
    adam.apply_gradients({{g[0], *w1}, {g[1], *w2}});
  };
  for (int i = 0; i < 5; ++i) {
    if (strategy == nullptr) {
      step(0, batch);
      continue;
    }
    const int n = strategy->num_replicas_in_sync();
    strategy->run([&](ReplicaContext& ctx) {
      const int r = ctx.replica_id_in_sync_group();
      step(r * batch / n, (r + 1) * batch / n);
    });
  }
  return host(w1->read_value());
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-5) << i;
}

TEST_F(GpuMirroredStrategyTest, TwoVirtualGpusReduceToOneDeviceAndTrainAsOneBigBatch) {
  two_virtual_gpus();  // GPU:0 and GPU:1 on card 0 (a second card is GPU:2)
  MirroredStrategy strategy({"/GPU:0", "/GPU:1"});
  EXPECT_STREQ(strategy.cross_device_ops_name(), "ReductionToOneDevice");
  expect_near(train(&strategy, 64), train(nullptr, 64));
}

TEST_F(GpuMirroredStrategyTest, PhysicalGpusAllReduceWithNccl) {
  if (gpus_ < 2) GTEST_SKIP() << "needs two GPUs";
  MirroredStrategy strategy;
  EXPECT_EQ(strategy.num_replicas_in_sync(), gpus_);
  EXPECT_STREQ(strategy.cross_device_ops_name(), "NcclAllReduce");
  // Many small float32 values (one bucket), a large one (its own), int32 and bfloat16.
  std::vector<Tensor> out0;
  std::vector<std::vector<Tensor>> all = strategy.run([&](ReplicaContext& ctx) {
    const double r = ctx.replica_id_in_sync_group() + 1;
    std::vector<Tensor> values;
    for (int k = 0; k < 20; ++k) values.push_back(fill({k + 1}, r * (k + 1)));
    values.push_back(fill({(int64_t{30} << 20) / 4}, r));  // 30 MiB: above a bucket
    values.push_back(fill({5}, r, DType::kInt32));
    values.push_back(fill({7}, r, DType::kBFloat16));
    return ctx.all_reduce(ReduceOp::kSum, values);
  });
  const double sum = gpus_ * (gpus_ + 1) / 2.0;
  for (int r = 0; r < gpus_; ++r) {
    const std::vector<Tensor>& got = all[r];
    ASSERT_EQ(got.size(), 23u);
    for (int k = 0; k < 20; ++k) {
      EXPECT_THAT(got[k].device(), HasSubstr("GPU:" + std::to_string(r)));
      EXPECT_EQ(host(got[k]), std::vector<float>(k + 1, static_cast<float>(sum * (k + 1))));
    }
    std::vector<float> big = host(got[20]);
    EXPECT_EQ(big.front(), sum);
    EXPECT_EQ(big.back(), sum);
    EXPECT_EQ(host(got[21]), std::vector<float>(5, static_cast<float>(sum)));
    EXPECT_EQ(host(got[22]), std::vector<float>(7, static_cast<float>(sum)));
  }
  std::vector<Tensor> means = strategy.run([&](ReplicaContext& ctx) {
    return ctx.all_reduce(ReduceOp::kMean, fill({3}, ctx.replica_id_in_sync_group() + 1));
  });
  EXPECT_EQ(host(means[gpus_ - 1]), std::vector<float>(3, static_cast<float>(sum / gpus_)));
}

TEST_F(GpuMirroredStrategyTest, TheTraceShowsEachGpusPartOfAnNcclAllReduce) {
  if (gpus_ < 2) GTEST_SKIP() << "needs two GPUs";
  MirroredStrategy strategy;
  trace::start();
  strategy.run([&](ReplicaContext& ctx) { ctx.all_reduce(ReduceOp::kSum, fill({1024}, 1.0)); });
  trace::stop();
  const std::string json = trace::to_json();
  size_t found = 0;
  for (size_t at = json.find("\"name\":\"NcclAllReduce\",\"cat\":\"collective\"");
       at != std::string::npos;
       at = json.find("\"name\":\"NcclAllReduce\",\"cat\":\"collective\"", at + 1)) {
    ++found;
  }
  EXPECT_EQ(found, static_cast<size_t>(gpus_)) << json;
  EXPECT_THAT(json, HasSubstr("\"bytes\":4096,\"detail\":\"SUM of 1 values (float32) over"));
  EXPECT_THAT(json, HasSubstr("\"timing\":\"device\""));
}

TEST_F(GpuMirroredStrategyTest, NcclTrainsAsOneDeviceWithTheWholeBatch) {
  if (gpus_ < 2) GTEST_SKIP() << "needs two GPUs";
  MirroredStrategy strategy;
  ASSERT_STREQ(strategy.cross_device_ops_name(), "NcclAllReduce");
  expect_near(train(&strategy, 64), train(nullptr, 64));
}

TEST_F(GpuMirroredStrategyTest, NcclThatCannotLoadFallsBackWithOneWarningOrFails) {
  if (gpus_ < 2) GTEST_SKIP() << "needs two GPUs";
  const char* before = std::getenv("MT_NCCL_LIBRARY");
  setenv("MT_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  {
    MirroredStrategy strategy;
    EXPECT_STREQ(strategy.cross_device_ops_name(), "ReductionToOneDevice");
    CrossDeviceOptions nccl;
    nccl.kind = CrossDeviceOptions::Kind::kNcclAllReduce;
    Error e = testing::expect_error([&] { MirroredStrategy s({}, nccl); });
    EXPECT_EQ(e.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(e.what(), HasSubstr("cannot load /nonexistent/libnccl.so.2"));
    std::vector<Tensor> out = strategy.run(
        [&](ReplicaContext& ctx) { return ctx.all_reduce(ReduceOp::kSum, fill({2}, 1.0)); });
    EXPECT_EQ(host(out[1]), std::vector<float>(2, static_cast<float>(gpus_)));
  }
  if (before != nullptr)
    setenv("MT_NCCL_LIBRARY", before, 1);
  else
    unsetenv("MT_NCCL_LIBRARY");
}

}  // namespace
}  // namespace mt
